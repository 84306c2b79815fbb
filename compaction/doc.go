// Package compaction keeps an agent's journals short without losing a
// record: old or overfull days are folded, deterministically and without an
// LLM, into generated sections of MEMORY.md and the entity pages, and their
// lines move to journal/archive/<same day>.jsonl, which stays part of the
// history and of the projection (the engine tails archives too).
//
// # What is absorbed
//
// A journal day older than the current UTC day minus Options.KeepDays is
// compacted whole (every record, compaction records too); a newer day only
// when it holds more than Options.MaxDayLines records (compaction records
// neither counted nor absorbed). Lines that are not valid records of the agent
// are never absorbed: they stay where a person can see and fix them. A
// compaction record alone never starts a compaction.
//
// # The generated sections
//
// MEMORY.md and entities/<slug>.md get a section between BeginMarker and
// EndMarker; text outside it is never touched. The section is a function of
// the archive alone: per subject (see Subject) the latest decision and the
// latest preference, superseded records left out, every live conflict, and
// counts by kind; each entity page lists the entity's latest current
// records. An optional summarizer command may write MEMORY.md's section
// instead; if it fails, the deterministic text is written and the failure
// logged.
//
// # Order of the steps, and why a crash loses nothing
//
//  1. record: append the compaction record(s), kind "compaction", whose
//     extra field "absorbed" lists every uuid the run absorbs. This is an
//     intent: a later run that finds a compaction record in the live
//     journal naming a uuid still there finishes moving it, without
//     writing a second compaction record.
//  2. archive: append each absorbed line, byte for byte, to
//     journal/archive/<day>.jsonl unless that exact record is already there
//     (so a rerun copies nothing twice), fsync the file, fsync the
//     directory. A torn last line in an archive (power cut mid-copy) is cut
//     off first; its bytes are kept beside it.
//  3. memory: regenerate the generated sections from the archive (temporary
//     file, fsync, rename, fsync directory); pages that would not change are
//     not written.
//  4. journal: under the journal's exclusive flock (the lock journal.Append
//     takes), blank in place the lines whose exact record was archived in
//     step 2 (spaces up to the newline, which every reader skips), then
//     fsync. The journal is never renamed, truncated or removed: agents may
//     append to it directly (one write(2), O_APPEND, no lock), and a writer
//     that opened it before a rename, or keeps its descriptor open, would
//     write into a file that is gone. An append always lands at the end,
//     never inside an archived line, so the two cannot collide. Every other
//     byte, the inode, the size and the line numbers stay as they were; a
//     compacted journal keeps its size, as blank lines (git compresses
//     them to almost nothing).
//  5. commit: Options.Commit (the ledger), if set.
//
// A line leaves its journal only after the archive holding it was fsynced,
// so at every instant each record is in the journal, the archive, or both.
// "Both" is a leftover that the next run cleans: a live line whose record
// is claimed by a compaction record in the journal, or already in the
// archive of its day, is absorbed again (step 2 copies nothing, step 4
// blanks it). A line a power cut left partly blanked (a rejected line whose
// bytes are an archived line's or spaces) is blanked by the next run too. A crash before step 1 leaves nothing to clean; a crash after
// step 4 leaves only the commit to the daemon's auto-commit. Duplicates are
// harmless to the graph meanwhile: projection is idempotent by uuid.
//
// Compactions of one agent are serialised by a flock on
// .memsync/compact-<agent>.lock (ErrBusy when held).
//
// # Scheduling
//
// A Scheduler, for the daemon, compacts every agent's finished days on the
// weekly compaction day and only overfull days (Options.KeepDays < 0) on the
// others; a compaction with nothing to absorb writes nothing, so it may look
// as often as it likes.
package compaction
