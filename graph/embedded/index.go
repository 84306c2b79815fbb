package embedded

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"modernc.org/sqlite"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/analysis"
)

// SearchFileName is the file, beside FileName, that holds the full-text
// index, the turns of sessions and the vectors. It is derived data: the
// indexer keeps it up with the memories of the main file on its own
// connection and goroutine, so that indexing a
// batch overlaps with storing the next one, and builds it again from the
// stored records whenever it is missing, behind, or of another generation.
const SearchFileName = "graph-search.db"

// searchSchemaVersion is the search file's PRAGMA user_version. A file of
// another version is deleted and built again from the main file (version
// 1 indexed words with SQLite's own tokenizer; 2 indexes the terms of
// package analysis, and the turns of sessions, in FTS5; 3 in memsync's own
// index, lexindex.go; 4 holds the vectors too, which were in the main file;
// 5 no longer has the entities and mentions tables, which no query read;
// 6 holds the edges that carry signals, which were in the main file;
// 7 keeps the vectors in the vector log beside it, veclog.go; 8 holds the
// turns of every memory, those that name no session under session "", so
// that a sessionless hit finds its implicit episode, package recall).
const searchSchemaVersion = 8

// sqlCreateTurns orders the memories by agent, session ("" for those that
// name none) and time, so that a search finds the neighbours of its
// strongest hits: their session's, or their implicit episode's (package
// recall).
const sqlCreateTurns = `CREATE TABLE IF NOT EXISTS turns (
		agent   TEXT    NOT NULL,
		session TEXT    NOT NULL,
		ts      TEXT    NOT NULL,
		uuid    TEXT    NOT NULL,
		id      INTEGER NOT NULL,
		PRIMARY KEY (agent, session, ts, uuid)
	) WITHOUT ROWID`

// sqlCreateIndexed is the search file's one-row watermark: which generation
// of the main file it indexes, and the memories indexed, ids 1 to through.
// It is written in the same transaction as the rows it describes.
const sqlCreateIndexed = `CREATE TABLE IF NOT EXISTS indexed (
		one        INTEGER PRIMARY KEY CHECK (one = 1),
		generation TEXT    NOT NULL,
		through    INTEGER NOT NULL
	)`

// turnsTable writes the turns of sessions. (Entities and the memories
// that mention them are not stored apart: a memory's Mentions come from its
// stored record, and no query read the entities and mentions tables that
// search schemas 2 to 4 kept; writing them took about 0.8 of 4.6 CPU-s
// per 100,000 records projected.)
var turnsTable = &table{name: "turns", cols: 5, head: `INSERT OR IGNORE INTO turns (agent, session, ts, uuid, id)`}

const (
	sqlIndexed     = `SELECT generation, through FROM indexed`
	sqlSetIndexed  = `INSERT OR REPLACE INTO indexed (one, generation, through) VALUES (1, ?1, ?2)`
	sqlCatchUpRows = `SELECT id, group_id, record FROM memories WHERE id > ?1 AND id <= ?2 ORDER BY id LIMIT ?3`
)

// catchUpPage is how many stored records a catch-up reads and indexes at a time.
const catchUpPage = 5000

// ixJob is one unit of the indexer's work: bring the index to ids
// 1..through of generation gen. rows, when set, are what ids from..through
// add; without them, or when the index is not at from-1, the records are
// read back from the main file.
type ixJob struct {
	gen           string
	from, through int64
	rows          *ixRows
	// exact: through is the main file's last id, so an index past it was
	// built from memories that are gone and is built again.
	exact bool
	// reembed, when set, is a re-embedding (Graph.Reembed): vectors to
	// write for memories already indexed that the log lacks; nothing else
	// of the job is used but gen.
	reembed *reembedJob
}

// ixRows are the rows some memories add to the search file, each table's
// values row after row.
type ixRows struct {
	fts []ftsRow
	// removed are memories stored before that lost their uuid to a
	// version these rows add (journal.ClashWins): their postings and
	// turns go first (a vector stays in the log; see veclog.go).
	removed []ixRemoval
	turns   []any // agent, session, ts, uuid, id
	vectors []any // id, group_id, version, vec (encodeVector): with an embedder
	signals []any // dst, type, src (signals.go)
}

// ftsRow is what the indexer analyzes of a memory: text and meta as
// written. (A typed row: the []any it was boxed four values a memory.)
type ftsRow struct {
	id                int64
	text, meta, group string
}

// ixRemoval is what a removed memory's full-text row held, to delete its
// postings (removePostings finds them by the terms it was indexed under),
// its turns (by uuid) and its signals (rows as appendSignals made them).
type ixRemoval struct {
	id         int64
	uuid       string
	text, meta string
	signals    []any
}

// add appends what r (a prepared record stored with id) adds.
func (x *ixRows) add(id int64, r *row) {
	x.fts = append(x.fts, ftsRow{id, r.m.Text, r.meta, r.group})
	x.turns = append(x.turns, r.m.Agent, r.m.Session, r.ts, r.m.UUID, id)
	if r.vec != nil {
		x.vectors = append(x.vectors, id, r.group, r.version, r.vec)
	}
	x.signals = appendSignals(x.signals, &r.m.Record, id)
}

// indexer owns the search file's write connection and indexes on its own
// goroutine, one job after the other, in the order Apply committed them.
type indexer struct {
	lg   *zap.Logger
	path string
	db   *sql.DB // the search file, one connection (held by w)
	w    *writer
	main *sql.DB          // the read pool, for records to index again
	emb  memsync.Embedder // nil: no vectors
	vl   vecLog           // the vector log, written in the indexer's transactions
	// lostLog, when set, is told that the indexer found the vector log
	// lost or damaged and started a new one (its memories are gaps to
	// embed again): the store's Reembed, in the background. Set by Open
	// before its first job.
	lostLog func()

	sendMu sync.Mutex // orders seq and the channel send; guards closed
	jobs   chan ixJob
	closed bool
	done   chan struct{} // closed when run returns

	mu      sync.Mutex
	queued  uint64        // jobs sent
	indexed uint64        // jobs finished, successfully or not
	failed  error         // the last job's error, nil once one succeeds
	last    ixJob         // the last job sent, without rows: what a retry aims at
	changed chan struct{} // closed and replaced whenever indexed moves

	buf  []byte            // analysis output, reused by the indexer goroutine
	an   analysis.Analyzer // the indexer goroutine's, with its memory of stems
	ords map[string]uint32 // lex_groups as read or written in the current transaction
}

// analyze is analysis.Text(s), through the indexer's buffer.
func (ix *indexer) analyze(s string) string {
	if s == "" {
		return ""
	}
	ix.buf = ix.an.AppendText(ix.buf[:0], s)
	return string(ix.buf)
}

// openIndex opens (creating, or replacing when it is of another version or
// damaged) the search file at path and starts the indexer.
func openIndex(ctx context.Context, path string, main *sql.DB, emb memsync.Embedder, lg *zap.Logger) (*indexer, error) {
	db, w, err := openSearchFile(ctx, path)
	var older *searchVersionError
	if errors.As(err, &older) && older.have < searchSchemaVersion {
		lg.Info("search index of an earlier version: building it again", zap.String("search_file", path), zap.Int("version", older.have))
	} else if err != nil {
		lg.Warn("search index unreadable: building it again", zap.String("search_file", path), zap.Error(err))
	}
	if err != nil {
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if rmErr := os.Remove(p); rmErr != nil && !os.IsNotExist(rmErr) {
				return nil, fmt.Errorf("replace search index: %w", rmErr)
			}
		}
		removeVecLogs(path, 0)
		if db, w, err = openSearchFile(ctx, path); err != nil {
			return nil, err
		}
	}
	ix := &indexer{lg: lg, path: path, db: db, w: w, main: main, emb: emb, vl: vecLog{search: path},
		jobs: make(chan ixJob, 1), done: make(chan struct{}), changed: make(chan struct{}), ords: map[string]uint32{}}
	go ix.run()
	return ix, nil
}

func openSearchFile(ctx context.Context, path string) (*sql.DB, *writer, error) {
	// synchronous=NORMAL: a power cut may lose the last commits, never
	// consistency between the rows and the watermark, and what is lost is
	// indexed again from the main file.
	db, err := sql.Open("sqlite", dsn(path, "synchronous(NORMAL)",
		"cache_size("+writerCache+")", "temp_store(MEMORY)"))
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	w, err := openWriter(ctx, db, searchWAL)
	if err == nil {
		w.background = true
		err = migrateSearch(ctx, w.conn)
	}
	if err != nil {
		if w != nil {
			w.close()
		}
		db.Close()
		return nil, nil, fmt.Errorf("open search index %s: %w", path, err)
	}
	return db, w, nil
}

func migrateSearch(ctx context.Context, conn *sql.Conn) error {
	var v int
	if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	switch v {
	case searchSchemaVersion:
		return nil
	case 0:
		return inTx(ctx, conn, func() error {
			for _, q := range []string{sqlCreateLexGroups, sqlCreateLexSegments, sqlCreateLexBlocks, sqlCreateLexBlocksKey,
				sqlCreateLexStats, sqlCreateIndexed, sqlCreateTurns,
				sqlCreateVecState, sqlCreateVecGaps, sqlCreateSignals,
				`PRAGMA user_version = ` + strconv.Itoa(searchSchemaVersion)} {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return &searchVersionError{have: v}
}

// searchVersionError is a search file of another schema version.
type searchVersionError struct{ have int }

func (e *searchVersionError) Error() string {
	return fmt.Sprintf("search index schema version %d (this memsync knows %d)", e.have, searchSchemaVersion)
}

// send queues job, waiting while the indexer is a job behind. It is called
// with Graph.mu held by Apply and Drop, so jobs keep their commit order.
func (ix *indexer) send(job ixJob) {
	ix.sendMu.Lock()
	defer ix.sendMu.Unlock()
	if ix.closed {
		return
	}
	ix.mu.Lock()
	ix.queued++
	ix.last = ixJob{gen: job.gen, through: job.through}
	ix.mu.Unlock()
	ix.jobs <- job
}

// run indexes each job in turn; once no job has come for IdleRelease it
// checkpoints the search file's WAL into the file, for the reason
// Graph.release does the memories'.
func (ix *indexer) run() {
	defer close(ix.done)
	quiet := time.NewTimer(IdleRelease)
	defer quiet.Stop()
	for {
		var job ixJob
		select {
		case j, ok := <-ix.jobs:
			if !ok {
				return
			}
			job = j
		case <-quiet.C:
			if _, err := ix.w.conn.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
				ix.lg.Debug("search index: checkpoint", zap.Error(err))
			}
			continue
		}
		start := time.Now()
		err := ix.index(job)
		if err != nil {
			ix.lg.Error("search index: indexing failed; it is caught up from the stored records on the next write or search",
				zap.Int64("through", job.through), zap.Error(err))
		} else if job.rows == nil {
			ix.lg.Debug("search index caught up", zap.Int64("through", job.through), zap.Duration("took", time.Since(start)))
		}
		ix.mu.Lock()
		ix.indexed++
		ix.failed = err
		close(ix.changed)
		ix.changed = make(chan struct{})
		ix.mu.Unlock()
		quiet.Reset(IdleRelease)
	}
}

// wait returns once every job sent before the call is finished, with the
// error of the last one; or when ctx ends.
func (ix *indexer) wait(ctx context.Context) error {
	ix.mu.Lock()
	target := ix.queued
	for ix.indexed < target {
		ch := ix.changed
		ix.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		ix.mu.Lock()
	}
	err := ix.failed
	ix.mu.Unlock()
	return err
}

// retry queues the last job again, without its rows (so from the stored
// records), when the last one failed and nothing newer is queued.
//
// The job is counted as queued before retry returns, so that the next
// wait (the next search) waits for it; only the channel send, which may
// block while the indexer is busy, happens on another goroutine. (Counting
// it there too let a search that came right after the retry find the
// queue "empty" and search the stale index.)
func (ix *indexer) retry() {
	ix.mu.Lock()
	job, stale := ix.last, ix.failed != nil && ix.indexed == ix.queued
	if stale {
		ix.queued++
	}
	ix.mu.Unlock()
	if stale {
		go ix.sendCounted(job)
	}
}

// sendCounted sends a job that retry already counted in queued; when the
// indexer has closed meanwhile, it counts the job as finished instead, so
// that nobody waits for it.
func (ix *indexer) sendCounted(job ixJob) {
	ix.sendMu.Lock()
	defer ix.sendMu.Unlock()
	if ix.closed {
		ix.mu.Lock()
		ix.indexed++
		close(ix.changed)
		ix.changed = make(chan struct{})
		ix.mu.Unlock()
		return
	}
	ix.jobs <- job
}

// close finishes the jobs queued and stops the indexer.
func (ix *indexer) close() error {
	ix.sendMu.Lock()
	defer ix.sendMu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	close(ix.jobs)
	<-ix.done
	return errors.Join(ix.vl.close(), ix.w.close(), ix.db.Close())
}

// index brings the index to job.through in one transaction of the search file.
func (ix *indexer) index(job ixJob) error {
	ctx := context.Background()
	conn := ix.w.conn
	// Group numbers are read again in every transaction: another process's
	// indexer may have emptied the index and numbered the groups anew since.
	clear(ix.ords)
	err := inTx(ctx, conn, func() error {
		var gen string
		var through int64
		err := conn.QueryRowContext(ctx, sqlIndexed).Scan(&gen, &through)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read watermark: %w", err)
		}
		stale := gen != job.gen
		if !stale && job.exact && through > job.through {
			var last int64 // the main file's last id now, under the search file's write lock
			if err := ix.main.QueryRowContext(ctx, `SELECT IFNULL(MAX(id), 0) FROM memories`).Scan(&last); err != nil {
				return fmt.Errorf("read last memory: %w", err)
			}
			stale = through > last
		}
		if stale {
			if gen != "" {
				ix.lg.Info("search index belongs to another generation of the store: building it again",
					zap.String("search_file", ix.path))
			}
			for _, q := range append(lexReset, `DELETE FROM turns`, `DELETE FROM signals`) {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("reset: %w", err)
				}
			}
			st, err := ix.vl.state(ctx, ix.w)
			if err == nil {
				_, err = ix.vl.reset(ctx, ix.w, st, "", 0)
			}
			if err != nil {
				return fmt.Errorf("reset: %w", err)
			}
			through = 0
		}
		if job.reembed != nil {
			if !stale {
				return ix.reembedded(ctx, job.reembed, through)
			}
			// Built again from the stored records: the catch-up embeds them.
		}
		if !stale && job.through <= through {
			return nil // indexed already (by this process or another)
		}
		if job.rows != nil {
			if err := ix.remove(ctx, job.rows.removed); err != nil {
				return err
			}
		}
		if job.through > through {
			if job.rows != nil && job.from == through+1 {
				err = ix.add(ctx, job.rows, through)
			} else {
				err = ix.catchUp(ctx, through, job.through)
			}
			if err != nil {
				return err
			}
			through = job.through
		}
		if _, err := conn.ExecContext(ctx, sqlSetIndexed, job.gen, through); err != nil {
			return fmt.Errorf("write watermark: %w", err)
		}
		return nil
	})
	ix.vl.done(err == nil)
	return err
}

// add writes rows, which follow the memories indexed through before: the
// full text as one new segment, the vectors to the log. The text and meta
// columns are analyzed here (package analysis), on the indexer's goroutine,
// off the path of Apply.
func (ix *indexer) add(ctx context.Context, rows *ixRows, before int64) error {
	seg := newLexSegment()
	for i, f := range rows.fts {
		if i%yieldEvery == yieldEvery-1 {
			runtime.Gosched() // background work: see yieldEvery
		}
		ord, err := ix.lexGroup(ctx, f.group)
		if err != nil {
			return err
		}
		seg.add(f.id, ord, ix.analyze(f.text), ix.analyze(f.meta))
	}
	if err := ix.writeSegment(ctx, seg); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	for _, t := range []struct {
		t    *table
		args []any
	}{{turnsTable, rows.turns}, {signalsTable, rows.signals}} {
		if err := ix.w.insert(ctx, t.t, t.args); err != nil {
			return err
		}
	}
	return ix.addVectors(ctx, rows, before)
}

// addVectors appends rows' vectors to the log, starting a new one when the
// log holds another model's (its memories, through before, then wait for
// Reembed in vec_gaps). Rows without vectors (a process without an
// embedder) are a gap in a log that has a model.
func (ix *indexer) addVectors(ctx context.Context, rows *ixRows, before int64) error {
	conn := ix.w.conn
	if len(rows.vectors) == 0 && len(rows.fts) == 0 {
		return nil
	}
	st, err := ix.vl.state(ctx, ix.w)
	if err != nil {
		return err
	}
	if len(rows.vectors) == 0 {
		if st.version == "" {
			return nil
		}
		first, last := rows.fts[0].id, rows.fts[len(rows.fts)-1].id
		// One gap per run of such jobs: the last one grows when this one follows it.
		res, err := conn.ExecContext(ctx, `UPDATE vec_gaps SET last = ?2 WHERE last = ?1 - 1`, first, last)
		if err != nil {
			return fmt.Errorf("vector log: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := conn.ExecContext(ctx, sqlAddVecGap, first, last); err != nil {
				return fmt.Errorf("vector log: %w", err)
			}
		}
		return nil
	}
	if version, _ := rows.vectors[2].(string); st.version != version {
		if st, err = ix.vl.reset(ctx, ix.w, st, version, before); err != nil {
			return err
		}
	}
	buf := ix.vl.buf[:0]
	for i := 0; i+3 < len(rows.vectors); i += 4 {
		id, _ := rows.vectors[i].(int64)
		group, _ := rows.vectors[i+1].(string)
		vec, _ := rows.vectors[i+3].([]byte)
		buf = appendVecRecord(buf, id, group, vec)
	}
	ix.vl.buf = buf
	_, err = ix.vl.write(ctx, ix.w, st, buf)
	if errors.Is(err, errVecLog) {
		// Lost under the store (deleted, cut short): a new log, its
		// memories to embed again (Reembed, at the next Open).
		ix.lg.Warn("vector log damaged: starting a new one; its memories are embedded again in the background", zap.Error(err))
		if st, err = ix.vl.reset(ctx, ix.w, st, st.version, before); err == nil {
			_, err = ix.vl.write(ctx, ix.w, st, buf)
		}
		if err == nil && ix.lostLog != nil {
			ix.lostLog() // waits for this job's commit before it reads the gaps
		}
	}
	return err
}

// remove deletes the postings, turns and signals of memories replaced by
// another version of their uuid. Postings the index never got (it was built
// again from the stored records since) are left alone.
func (ix *indexer) remove(ctx context.Context, removed []ixRemoval) error {
	for _, r := range removed {
		if err := ix.removePostings(ctx, r.id, ix.analyze(r.text), ix.analyze(r.meta)); err != nil {
			return fmt.Errorf("remove %s: %w", r.uuid, err)
		}
		if _, err := ix.w.conn.ExecContext(ctx, `DELETE FROM turns WHERE uuid = ?1`, r.uuid); err != nil {
			return fmt.Errorf("remove %s: %w", r.uuid, err)
		}
		for i := 0; i+2 < len(r.signals); i += 3 {
			if _, err := ix.w.conn.ExecContext(ctx, sqlRemoveSignal, r.signals[i:i+3]...); err != nil {
				return fmt.Errorf("remove %s: %w", r.uuid, err)
			}
		}
	}
	return nil
}

// catchUp indexes the stored memories with ids after..through, a page at a time.
func (ix *indexer) catchUp(ctx context.Context, after, through int64) error {
	for after < through {
		rows, last, err := ix.storedRows(ctx, after, through)
		if err != nil {
			return fmt.Errorf("catch up: %w", err)
		}
		if last == 0 {
			return nil
		}
		if err := ix.add(ctx, rows, after); err != nil {
			return err
		}
		after = last
	}
	return nil
}

// storedRows reads what up to catchUpPage stored memories with ids
// after..through add back from their records, and the last id read (0: none).
func (ix *indexer) storedRows(ctx context.Context, after, through int64) (*ixRows, int64, error) {
	q, err := ix.main.QueryContext(ctx, sqlCatchUpRows, after, through, catchUpPage)
	if err != nil {
		return nil, 0, err
	}
	defer q.Close()
	out := &ixRows{}
	var last int64
	var version any // boxed once, not once a row
	if ix.emb != nil {
		version = ix.emb.Version()
	}
	for q.Next() {
		var (
			id            int64
			group, record string
		)
		if err := q.Scan(&id, &group, &record); err != nil {
			return nil, 0, err
		}
		rec, err := journal.Parse([]byte(record))
		if err != nil {
			return nil, 0, fmt.Errorf("memory %d: stored record does not parse: %w", id, err)
		}
		r := &row{m: &memsync.Memory{Record: rec}, group: group, ts: formatTS(rec.TS),
			meta: ftsMeta(rec.AllEntities(), rec.Tags)}
		if ix.emb != nil {
			r.vec, r.version = encodeVector(ix.emb.Embed(rec.Text)), version
		}
		out.add(id, r)
		last = id
	}
	return out, last, q.Err()
}

// readConnector opens the read pool's connections: read-only, on the main
// file, with the search file attached as "search".
type readConnector struct {
	d    *sqlite.Driver
	dsn  string
	mmap int64 // the search file's mmap_size (0: none); set before the first connection
}

func newReadConnector(dsn, searchPath string) *readConnector {
	d := &sqlite.Driver{}
	rc := &readConnector{d: d, dsn: dsn}
	d.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		ctx := context.Background()
		if _, err := c.ExecContext(ctx, `ATTACH DATABASE ?1 AS search`,
			[]driver.NamedValue{{Ordinal: 1, Value: searchPath}}); err != nil {
			return err
		}
		// cache_size is per schema: the DSN's sets main's only, and an
		// attached file would get SQLite's default 2 MiB (search p95 49-63
		// ms against 40-46 when the index was in the main file).
		_, err := c.ExecContext(ctx, `PRAGMA search.cache_size = -16384`, nil)
		if err == nil && rc.mmap > 0 {
			// PRAGMA takes no parameters; the value is a constant of this package.
			_, err = c.ExecContext(ctx, `PRAGMA search.mmap_size = `+strconv.FormatInt(rc.mmap, 10), nil)
		}
		return err
	})
	return rc
}

func (c *readConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c *readConnector) Driver() driver.Driver                        { return c.d }
