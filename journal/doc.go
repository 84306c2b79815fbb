// Package journal is memsync's record and the files that hold it: parse,
// validate, the canonical form and its hash, uuids, the streaming reader
// and the locked appender. It imports no other memsync package; every
// tool that writes memories for memsync follows the format below, and
// this package is its one implementation.
//
// # Files
//
// A memory repository holds one directory per agent, agents/<agent>/, and
// each agent's journal is one file per UTC day:
//
//	agents/<agent>/memory/journal/YYYY-MM-DD.jsonl
//
// A file holds one JSON object per line, UTF-8, each line ending in "\n"
// and at most MaxLineBytes (1 MiB) long. Files are append-only: a line,
// once written, is never changed or removed in place (compaction moves old
// lines to agents/<agent>/memory/journal/archive/ in a crash-safe order,
// and the daemon's cursors notice a file that was rewritten). The day is
// the day of the line's write in UTC; a record's ts may lie in another.
//
// # Records
//
// Required fields: "ts" (RFC 3339 with any offset; stored in UTC),
// "agent" (the journal's own agent: [A-Za-z0-9][A-Za-z0-9_-]{0,63}),
// "kind" (see Kinds) and "text" (not blank). Optional: "uuid", "scope"
// ("private", the default: group AGENT:<agent>; or "shared": group
// CONSTELLATION, which every agent reads), "refs" ([{"git","path"}]),
// "entities", "tags", "links", "supersedes", "conflicts_with",
// "supports", "source" ({"type","actor","context"}), "confidence"
// (low|medium|high), "max_age" (14d|30d|90d|180d|permanent), "tier"
// (core|working|learning), "session", "task", "why", and on the kinds
// that carry them "result" (outcome: success|failure|mixed), "feedback"
// (feedback: important|wrong|verified|unimportant), "remember" and
// "surprise". Every other field is kept as it was written (Record.Extra)
// and is part of the record's identity. A record never declares its own
// importance: memsync computes it.
//
// The kinds an agent writes are AgentKinds; compaction, feedback and
// promotion are memsync's own (MemsyncKinds) and are valid only in the
// form and journal memsync writes them in (CheckOwner).
//
// Entities are also found in the text: @name, #tag and [[Wiki Link]]
// (Record.AllEntities).
//
// # Identity
//
// A record's canonical form is its fields in a fixed order, encoded byte
// for byte as encoding/json encodes them without HTML escaping
// (Record.Canonical); its hash is the digest of that form
// (Record.Hash), which verify compares with what the graph holds. A line
// without a uuid gets one derived from its canonical content
// (DerivedUUID, mem_<ts>_<agent>_h<16 hex>), so writing the same line twice
// is one memory. memsync append writes mem_<ts to the
// second>_<agent>_<host>-<NNNN>-<random>: this clone's host id, a sequence
// counting up per host, and a random part so that no agent can name
// another's uuids before it sees them (UUIDOwner lists every form).
//
// # Rules for a direct writer
//
// A tool that writes journal lines itself (rather than through memsync
// append or the MCP server) must:
//
//   - write each line whole with one write(2) on a file opened O_APPEND,
//     holding an exclusive flock(2) of the file as Append does, and end
//     it with "\n": a last line without its newline is taken as still
//     being written and is not read;
//   - write only into its own agent's journal, with its own agent in
//     "agent" and, if it sets "uuid", a uuid that names no other agent;
//   - never rewrite or delete a line: to change a memory, append a record
//     that "supersedes" it; to contradict one, "conflicts_with";
//   - keep a uuid's content fixed: a second line with the same uuid and the
//     same canonical content is a no-op, one with different content is a
//     clash.
//
// # Rejects
//
// A line that can never be projected is written to its agent's
// agents/<agent>/memory/sync/rejects.jsonl with its file, line, byte
// offset and reason, and counted by memsync status and memsync rejects; it is never silently
// dropped or merged. The reasons: bad JSON, a missing or invalid field
// (*FieldError names it), an unknown kind or scope, invalid UTF-8, a line
// over MaxLineBytes, an agent or uuid naming another agent (CheckOwner),
// and a uuid held by different content that wins it (ClashWins: a
// private version before a shared one, then the earlier ts, then the
// smaller hash, whatever the order the lines are read in). Blank lines
// are skipped and a trailing "\r" is dropped.
package journal
