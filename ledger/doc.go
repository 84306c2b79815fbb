// Package ledger makes git the ledger of a memory repository: a Committer
// records the agents' journals, archives, MEMORY.md and entity pages in git
// as memsync's own author, and HistoryRecords replays every record that any
// commit reachable from HEAD ever held, so that a lost graph can be rebuilt
// from git alone, including records the work tree no longer has.
//
// # What is committed
//
// Only the paths Owned accepts (agents/<agent>/memory/{MEMORY.md,
// entities/*.md, journal/*.jsonl, journal/archive/*.jsonl}). Never sync/ or
// .memsync/ (host-local state, SPEC §2), and never cache/: the snapshots
// there are a projection of the graph, regenerated whenever it changes, and
// committing them would add history that records nothing true.
//
// # Living beside a person
//
// The Committer follows git's own locking protocol rather than go-git's
// worktree API (which writes the index in place and takes no locks). One
// commit is:
//
//  1. give up (ErrLocked) if .git/index.lock exists, a merge, rebase,
//     cherry-pick or revert is in progress, or a person's "git commit" is
//     between writing COMMIT_EDITMSG and moving HEAD (its editor may be
//     open; git would refuse its commit if HEAD moved meanwhile);
//  2. hash the owned files and write their blobs, without any lock (a
//     journal up to its last newline, under a shared flock so that
//     journal.Append's exclusive one never sees a half-read line);
//  3. create .git/index.lock exclusively (ErrLocked if that fails);
//  4. read HEAD and the index again, build a tree that is HEAD's with only
//     the owned paths changed (so a person's staged work is neither
//     committed nor unstaged), write the commit;
//  5. write the index (the person's entries as they were, ours updated)
//     into index.lock and fsync it;
//  6. move the branch under its ref lock (<ref>.lock, created exclusively,
//     renamed over the ref) only if it still points at the HEAD of step 4 —
//     if HEAD moved, go back to step 4 on the new HEAD — and append the
//     reflogs;
//  7. rename index.lock over the index.
//
// It never resets, checks out or touches a file of the work tree. Git hooks
// are not run.
//
// Within one process, one commit or exchange of a repository runs at a
// time, whichever Committer or Exchanger it goes through (takeTurn): a
// commit that finds one under way returns ErrLocked at once, an exchange
// waits up to its interval. Between processes git's lock files alone keep
// order; each lock memsync creates is linked from a private file whose
// name (pid and random) is its attempt's own.
//
// # Replaying history
//
// HistoryRecords visits commits oldest first, reads each distinct journal
// blob once, streaming it, and yields its valid records; memory grows with
// the number of commits and blobs, not records.
package ledger
