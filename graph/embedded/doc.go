// Package embedded is the default memsync.Graph backend: a single SQLite
// file, written through the pure-Go driver modernc.org/sqlite (no cgo), so
// memsync works with nothing else installed. Lexical recall uses memsync's
// own full-text index (package postings, lexindex.go) with bm25 ranking.
//
// # Files
//
// Open(dir) keeps the memories in dir/graph.db and what is derived from
// them for lookup (the full-text index, the turns, the vectors) in
// dir/graph-search.db (dir is normally <repo>/.memsync, which is never
// committed). The main file runs in WAL mode with synchronous=FULL (the WAL
// is fsynced at each commit, one fsync per batch); a connection of its own
// checkpoints the WAL every 48 MiB of rows written, off the writer
// (checkpoint.go), and SQLite's own checkpoint in the writer's COMMIT, at
// 128 MiB of WAL, is left for when it falls behind: nothing Apply acknowledged is lost to a killed process or a
// power cut, so the engine's cursors, written after the acknowledgement,
// never run ahead of the store. (Measured: the fsync costs about 1 ms per
// batch here, ~1 µs per record at 1,000 records a batch, so
// synchronous=NORMAL would buy too little for what it risks in a daemon.)
// A rebuild is the exception (bulk.go, memsync.BulkLoader): between
// BeginBulk and EndBulk the writer commits with synchronous=NORMAL, the
// engine writes no cursor, and EndBulk's one fsync makes the whole load
// durable (a 1M rebuild's 200 commit fsyncs were about 1.4 s of the
// writer's wall, the critical path). PRAGMA
// user_version holds the schema version (currently 4); a file written by a
// newer schema is refused rather than misread. With an embedder,
// dir/vectors.idx caches the in-memory vector index for the next process
// (vecfile.go): a cache, ignored whenever it does not match the store.
//
// The search file is derived data, written by the indexer on its own
// connection and goroutine: Apply commits a batch to the main file and
// hands the batch's full-text rows, vectors and signals to the indexer, which
// writes them while Apply stores the next batch (SQLite writes one file at a
// time per connection, so this is what puts indexing on a second core; a 1M
// rebuild went from 77 to 46 s). Search and Flush wait until the indexer
// has caught up with every batch applied before they were called, so
// whatever Get returns Search finds too. The search file records, in the
// same transaction as its rows, which generation of the main file it
// indexes and up to which id (the indexed table). At Open, and whenever
// the rows it is handed do not follow on from that watermark, the indexer
// reads the missing memories back from the main file: a search file that
// is missing, damaged (deleted and made again), behind after a crash, of
// another generation (the main file was dropped since) or ahead of the
// main file (an older copy of it put back) is built again, in the
// background, and nothing is ever indexed twice (each catch-up runs under
// the search file's write lock and re-reads the watermark). It runs with
// synchronous=NORMAL: a power cut may cost it its last commits, which are
// then indexed again. When the search file cannot be written (full disk),
// Apply still lands, Search answers from what is indexed, Flush returns the
// error, and the next search asks the indexer to try again.
//
// Open migrates an older file in place, in one transaction. Version 1: the
// text column goes (the text is in the stored record), and invalid_at and
// replaced_by move to the superseded table. Version 2: the full-text index,
// entities and mentions leave for the search file, which is built from the
// stored records in the background (its time grows with the store and is
// logged at debug). Version 3: the edges that carry signals (LINKS_TO,
// CONFLICTS_WITH, SUPPORTS) leave for the search file's signals table,
// built again the same way (signals.go), and the core tier gets a column
// (memories_core's condition). The projected content is
// unchanged, so cursors stay valid and no rebuild is needed.
//
// # Schema (version 4)
//
//	memories      one row per projected record
//	  id          INTEGER PRIMARY KEY  the rowid shared with memories_fts; never
//	                                   used twice in one file (a Drop keeps the
//	                                   last one in meta id_floor)
//	  uuid        TEXT UNIQUE          the record's identity
//	  agent, group_id, scope, kind     as the record says (group_id = Record.GroupID)
//	  ts          TEXT                 UTC, fixed width "2006-01-02T15:04:05.000000000Z",
//	                                   so text order is time order
//	  path, line                       where the record was first read from
//	  hash        TEXT                 journal.Record.Hash
//	  record      TEXT                 journal.Record.Canonical; Walk, Get and Search
//	                                   rebuild the full record from it with journal.Parse
//	  importance  REAL                 0.5 until something earns more
//	  core        INTEGER              1 for a memory of the core tier, else 0
//	memories_recent, memories_core, memories_kind_<kind>  indexes List reads (list.go); a store
//	              written before memsync's own full-text index also had
//	              memories_filter (id, group_id, kind, ts, uuid), dropped at Open
//	superseded    one row per superseded memory
//	  id          INTEGER PRIMARY KEY  memories.id
//	  invalid_at  TEXT                 ts of the earliest projected superseder that
//	                                   retires it (journal.Retires, through the SQL
//	                                   function memsync_retires)
//	  replaced_by TEXT                 that superseder's uuid (smallest uuid on a tie)
//	edges         (src, type, dst) PRIMARY KEY, WITHOUT ROWID: SUPERSEDES
//	              edges only (the others are the search file's signals)
//	              dst may name a uuid not projected yet: the edge is stored as is
//	              and counts as soon as its target arrives
//	edges_superseded  partial index (dst, src) WHERE type = 'SUPERSEDES'
//	supersede_waiting (dst, src) PRIMARY KEY, WITHOUT ROWID: the SUPERSEDES
//	              edges whose target is not projected yet
//	agents        name PRIMARY KEY, memories = how many projected records it wrote
//	meta          key, value: generation (a random token, new at every Drop),
//	              id_floor (the last id before the latest Drop), retire_rule
//	              (the supersession rule the superseded table follows)
//
// The search file (its own user_version, 7), attached to every read
// connection as "search":
//
//	signals       (dst, type, src) PRIMARY KEY, WITHOUT ROWID: the LINKS_TO,
//	              CONFLICTS_WITH and SUPPORTS edges, by target uuid (one not
//	              projected yet counts once it lands), src = memories.id;
//	              Incoming reads them (signals.go)
//	vec_state     the vector log's epoch (its file, graph-vectors-<epoch>.log
//	              beside the store), the model version of its vectors and
//	              its committed length: with an embedder, one embedding per
//	              memory, appended by the indexer with the memory's
//	              full-text rows (veclog.go; until search schema 7 a
//	              vectors table of this file held them, until 4 the main
//	              file's)
//	vec_gaps      (first, last): ids the log has no vector for yet
//
//	lex_blocks    (seg, first, block), unique (seg, first): each segment's
//	              lists of the memories holding each term (package postings:
//	              id, group number, weighted frequency, length), packed in
//	              blocks of about 4 KiB in term order (a list of 1 KiB or more
//	              alone); text terms weigh 1, entity names and tags (meta)
//	              0.5; a memory's length is its terms and one for its group,
//	              as FTS5 counted it
//	lex_segments  seg, level, first, last: the live segments and the ids they
//	              cover; a job adds one of level 0, eight of a level merge into
//	              one of the next
//	lex_stats     one row: rows, tokens (bm25's collection figures, every group's)
//	lex_groups    ord, name: the numbers postings give groups
//	turns         (agent, session, ts, uuid, id): every memory (session ""
//	              when it names none), for the neighbours of a search's
//	              strongest hits: their session's or their episode's
//	indexed       one row: generation, through (the watermark above)
//
// Node.LinksTo, Supersedes, ConflictsWith and Mentions are read back from the
// stored record, from which Apply and the indexer derived the edges. (Search schemas 2 to 4
// also kept entities and mentions tables, which no query read: a memory's
// entities are its record's, in its group, and they are searched through
// the full-text index's meta terms.)
//
// # Projection rules
//
// A record is written once: the same hash again is a no-op. Another hash for
// a projected uuid is reported in ApplyResult.Mismatched, and the version
// journal.ClashWins prefers is kept: a winning newcomer replaces the stored
// row (a new id; its edges, waiting supersessions and supersession go, its
// targets' supersession is recomputed, and the indexer deletes its
// postings, turns and vector). Outgoing edges and mentions come from the
// record itself, so they are fixed at insert time. The only derived state that changes later
// is a memory's invalid_at and replaced_by, kept in the superseded table
// rather than in the memories rows: updated there, they dirtied a page of
// the wide table per superseded memory, at random, in every batch. At the end of every batch they
// are recomputed, from all SUPERSEDES edges pointing at it whose source
// retires it (journal.Retires: every edge is stored, the rule decides which
// take effect; a store computed by an earlier rule, whose meta lacks
// retire_rule, is recomputed whole when a writer opens it), for each target
// of the batch's SUPERSEDES edges and for each new memory found in
// supersede_waiting. The result is a function of the set of records
// applied, whatever their order or batching.
//
// # Speed
//
// Apply derives what to store (canonical encoding, hash, entities) on other
// cores, a chunk of records ahead of the writer, which inserts with
// multi-row statements prepared once; a chunk nobody has started yet (the
// first of every batch) the writer prepares itself instead of waiting. The
// indexer writes the search file beside it (see Files): a batch's postings
// are gathered in memory and written as one segment, a row per term, in
// term order. The partial index on SUPERSEDES
// edges and the small supersede_waiting table keep supersession from
// probing a large index for every new memory. Otherwise a batch mostly
// appends at the end of each B-tree: what it dirties is written to the WAL
// at commit, and that is what commits cost (100,000 corpus records in
// batches of 1,000 wrote 264 MB of WAL with schema 1, 140 MB with schema 2).
//
// # Search
//
// A search reads the lists of its terms from every live segment (one read
// transaction: the collection figures, the lists, then the memories) and
// scores, with FTS5's bm25 arithmetic, the postings of its reader's groups
// only (the SQL filter on group_id stays, as a second guard). The best are
// tested against the filters (superseded, kinds, since), a seek by id each;
// more when too few pass or a tie straddles the cut.
// Query words are looked up as terms, never parsed as syntax.
//
// # Concurrency
//
// One connection writes the main file (Apply, Drop), serialised by a mutex,
// each batch in one IMMEDIATE transaction; other processes wait on the busy
// timeout. The indexer holds the search file's one write connection; two
// processes' indexers take turns on its write lock. Reads use a separate
// pool of read-only connections and see the last committed batch (WAL
// snapshot isolation), so a long Walk never blocks Apply.
//
// From a Drop, or the first write to an empty store, Apply keeps a Bloom
// filter (2 MiB) of the uuids it stored, and looks up only the uuids the
// filter may hold (seen.go): in a rebuild, none. The filter is trusted only
// while PRAGMA data_version, read inside the write transaction, shows that
// no other connection committed since it began; otherwise it is dropped
// until the next Drop. It is never written to disk.
//
// # Memory
//
// The writer's page cache may grow to 32 MiB while a rebuild runs (64 MiB
// bought nothing once indexing moved to the search file), the indexer's
// and each reader's to 16 MiB. IdleRelease (2 s) after the last write the writer
// runs PRAGMA shrink_memory, and a reader connection idle that long is
// closed, so a daemon that has caught up holds little (the next batch reads
// its pages back from the OS page cache).
package embedded
