package embedded

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/memsync/memsync/memsync"
)

// FileName is the name of the database file inside the directory given to Open.
const FileName = "graph.db"

// SchemaVersion is the schema this package writes, kept in PRAGMA user_version.
// Open migrates a file of version 1, 2 or 3 in place (migrateV1, migrateV2,
// migrateV3).
const SchemaVersion = 4

const (
	busyTimeoutMS = 10_000
	readConns     = 8
	readCache     = "-16384" // each read connection's page cache: 16 MiB
	// writerCache is each write connection's page cache (the main file's
	// and the search file's): 4 MiB. At 16 KiB pages (PageSize) a 1M
	// rebuild took 13.2 s with 4 MiB and 13.5 s with 16 MiB, and its RSS
	// peaked at 239 MB against 419 MB: the larger cache cost several
	// times its size (issue 30). (At 4 KiB pages 16 MiB had been kept:
	// 32 MiB was no faster and cost 16 MB more.)
	writerCache = "-4096"
	// mainWAL is how far the main file's WAL grows before the writer's
	// COMMIT checkpoints it. The checkpointer copies it back every 48 MiB
	// of rows written (checkpoint.go); SQLite's own checkpoint is for when
	// it falls behind: at 128 MiB, not SQLite's 4 MiB default, a rebuild
	// rewrites hot index pages far less often.
	mainWAL = 128 << 20
	// searchWAL is the same for the search file, which has no
	// checkpointer of its own.
	searchWAL = 64 << 20
)

// Graph is a memsync.Graph kept in one SQLite file. It is safe for
// concurrent use; writes are serialised, reads run in parallel with them.
type Graph struct {
	lg   *zap.Logger
	path string // absolute path of the database file

	rdb *sql.DB // read-only pool

	mu     sync.Mutex // serialises writes; guards the fields below
	wdb    *sql.DB    // at most one connection, held by w
	w      *writer    // nil after a failure that broke the connection; reopened on demand
	closed bool
	idle   *time.Timer // releases the writer's page cache once writes stop
	gen    string      // the store's generation (meta), new at every Drop
	// seen, when set, holds every uuid stored since the store was empty
	// (seen.go); seenCheck: whether the next Apply looks for an empty store.
	seen      *seenFilter
	seenCheck bool

	ix   *indexer      // keeps the search file up with the memories; set once by Open
	ckpt *checkpointer // checkpoints the main file's WAL off the writer; set once by Open

	opened os.FileInfo // the database file as Open found it, for CheckStore

	emb  memsync.Embedder // nil: lexical only (WithEmbedder)
	vecs vecIndex         // the vectors of emb's version, in memory
	// The background re-embedding (repair.go): Open's, and again whenever
	// the vector log is found lost or damaged while the store is open.
	reembedCtx   context.Context    // ends at Close; nil: none ever runs (read-only, no embedder)
	reembedStop  context.CancelFunc // ends reembedCtx
	reembedMu    sync.Mutex         // guards the three below
	reembedDone  chan struct{}      // closed when the latest run is over; nil if none ran
	reembedError error              // what the latest run failed with, for Flush
	reembedAgain bool               // a run was asked for while one ran: it runs once more
}

// IdleRelease is how long the store goes without a write before it hands
// its page caches back (the writer's with PRAGMA shrink_memory; a reader
// connection idle that long is closed): a daemon that has caught up holds
// little memory, and the next batch reads its pages back from the OS cache.
const IdleRelease = 2 * time.Second

// wrote arms the idle release after a write. g.mu must be held.
func (g *Graph) wrote() {
	if g.idle == nil {
		g.idle = time.AfterFunc(IdleRelease, g.release)
		return
	}
	g.idle.Reset(IdleRelease)
}

// release checkpoints the memories' WAL into the file, shrinks the
// writer's and the indexer's page caches and drops the seen filter. After the checkpoint a reader
// (a read command's fresh process most of all) reads the file, mapped,
// instead of looking each page up in a WAL of up to 64 MiB: a packet
// command at 100k memories took 42 / 54 ms (p50 / p95) against a WAL
// left full, 34 / 44 ms against a checkpointed one. The indexer does the
// same for the search file when its queue goes quiet (indexer.run).
func (g *Graph) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.w == nil {
		return
	}
	// The seen filter (2 MiB) pays off while a store is filled from empty
	// (a rebuild, a daemon's first catch-up); once writes stop, the
	// next batches are small, and looking their uuids up costs less than
	// holding it in an idle daemon. Without it Apply looks every uuid up,
	// as it does in a store that was never empty.
	g.seen = nil
	// PASSIVE: it copies what no reader still needs and waits for no one;
	// a later checkpoint (this one after the next write, or SQLite's own
	// at wal_autocheckpoint) takes the rest.
	if _, err := g.w.conn.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		g.lg.Debug("embedded graph: checkpoint", zap.Error(err))
	}
	for _, conn := range []*sql.Conn{g.w.conn, g.ix.w.conn} {
		// The indexer may be busy on its connection; the pragma then waits
		// for its statement and runs between two (database/sql serialises).
		if _, err := conn.ExecContext(context.Background(), `PRAGMA shrink_memory`); err != nil {
			g.lg.Debug("embedded graph: shrink memory", zap.Error(err))
		}
	}
}

var _ memsync.Graph = (*Graph)(nil)

// Open opens (creating it when needed) the store in dir/graph.db, creating
// dir too. The schema is created on first use; a file written by a newer
// schema version is refused. A nil lg logs nothing.
func Open(dir string, lg *zap.Logger, opts ...Option) (*Graph, error) {
	if lg == nil {
		lg = zap.NewNop()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("embedded: open %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("embedded: open: create %s: %w", abs, err)
	}
	path := filepath.Join(abs, FileName)
	lg = lg.With(zap.String("path", path))
	g := &Graph{lg: lg, path: path, seenCheck: true}
	for _, o := range opts {
		o(g)
	}

	g.wdb, err = sql.Open("sqlite", dsn(path,
		"synchronous(FULL)", "cache_size("+writerCache+")", "temp_store(MEMORY)"))
	if err != nil {
		return nil, fmt.Errorf("embedded: open %s: %w", path, err)
	}
	g.wdb.SetMaxOpenConns(1)
	g.wdb.SetMaxIdleConns(1)
	g.wdb.SetConnMaxLifetime(0)
	g.wdb.SetConnMaxIdleTime(0)

	ctx := context.Background()
	g.w, err = openWriter(ctx, g.wdb, mainWAL)
	if err == nil {
		err = migrate(ctx, g.w.conn, lg)
	}
	if err == nil {
		err = reretireOnce(ctx, g.w.conn)
	}
	for _, q := range append(sqlCreateList[:len(sqlCreateList):len(sqlCreateList)], sqlDropMainVectors, sqlDropFilter) {
		if err == nil {
			_, err = g.w.conn.ExecContext(ctx, q)
		}
	}
	var last int64
	if err == nil {
		g.gen, err = loadGeneration(ctx, g.w.conn)
	}
	if err == nil {
		err = g.w.conn.QueryRowContext(ctx, `SELECT IFNULL(MAX(id), 0) FROM memories`).Scan(&last)
	}
	if err != nil {
		g.closeAll()
		return nil, g.wrap("open "+path, err)
	}

	if g.opened, err = os.Stat(path); err != nil {
		g.closeAll()
		return nil, g.wrap("open "+path, err)
	}
	if g.ckpt, err = startCheckpointer(path, lg); err != nil {
		g.closeAll()
		return nil, g.wrap("open "+path, err)
	}

	searchPath := filepath.Join(abs, SearchFileName)
	g.rdb = sql.OpenDB(newReadConnector(dsn(path, "query_only(1)", "cache_size("+readCache+")"), searchPath))
	g.rdb.SetMaxOpenConns(readConns)
	g.rdb.SetMaxIdleConns(2)
	g.rdb.SetConnMaxIdleTime(IdleRelease)
	// The search file must exist before a reader attaches it.
	if g.ix, err = openIndex(ctx, searchPath, g.rdb, g.emb, lg); err != nil {
		g.closeAll()
		return nil, g.wrap("open "+searchPath, err)
	}
	if g.emb != nil {
		// Before the first job, which may find the log lost and start a
		// re-embedding.
		g.reembedCtx, g.reembedStop = context.WithCancel(context.Background())
		g.ix.lostLog = g.repairVectors
	}
	if err := g.rdb.PingContext(ctx); err != nil {
		if g.reembedStop != nil {
			g.reembedStop() // nothing was sent: no re-embedding runs
		}
		g.closeAll()
		return nil, g.wrap("open "+path, err)
	}
	// Whatever the search file lacks (new, behind after a crash, another
	// generation) is indexed from the stored records, in the background.
	g.ix.send(ixJob{gen: g.gen, through: last, exact: true})
	// A store left by a crash may hold a full WAL: checkpoint it once the
	// opener has been quiet as long as after a write, even if it never
	// writes (a daemon restarted with nothing new to project).
	g.mu.Lock()
	g.wrote()
	g.mu.Unlock()
	if g.emb != nil {
		// Memories stored without a vector, or with another model's, are
		// embedded again in the background; Search reads only current ones.
		g.repairVectors()
	}
	lg.Debug("embedded graph open", zap.Int("schema_version", SchemaVersion))
	return g, nil
}

// dsn is the driver's name for path with a busy timeout and pragmas. The
// path is escaped as a URI path, so '?', '#' and '%' in it are safe.
func dsn(path string, pragmas ...string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMS)+")")
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	u.RawQuery = q.Encode()
	// url.URL renders "file:///abs"; SQLite accepts an empty authority.
	return u.String()
}

// sqlCreateMeta holds the store's generation, a random token drawn when
// the schema is created and at every Drop: the search file indexes one
// generation, and starts again when it meets another. id_floor is the last
// id before the latest Drop: ids are never used twice in one file, so a
// search file row can never name another memory than the one it indexed.
const sqlCreateMeta = `CREATE TABLE IF NOT EXISTS meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	) WITHOUT ROWID`

const sqlSetMeta = `INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)`

// sqlCreateSuperseded holds what supersession derives, apart from the
// memories: it is rewritten at random places on every batch, and this
// table is small (one row per superseded memory, rowid = memories.id).
const sqlCreateSuperseded = `CREATE TABLE IF NOT EXISTS superseded (
		id          INTEGER PRIMARY KEY,
		invalid_at  TEXT NOT NULL,
		replaced_by TEXT NOT NULL
	)`

// sqlDropFilter drops memories_filter, the narrow index Search filtered
// every FTS5 match through: the full-text index now gives each match's
// group and score itself, and Search reads only its best matches' rows (a
// few hundred seeks by id), so the index cost every insert and saved no
// search its time. Dropped at every open, from stores written before.
const sqlDropFilter = `DROP INDEX IF EXISTS memories_filter`

// schema creates every table and index; each statement is idempotent.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS memories (
		id          INTEGER PRIMARY KEY,
		uuid        TEXT    NOT NULL UNIQUE,
		agent       TEXT    NOT NULL,
		group_id    TEXT    NOT NULL,
		scope       TEXT    NOT NULL,
		kind        TEXT    NOT NULL,
		ts          TEXT    NOT NULL,
		path        TEXT    NOT NULL,
		line        INTEGER NOT NULL,
		hash        TEXT    NOT NULL,
		record      TEXT    NOT NULL,
		importance  REAL    NOT NULL DEFAULT 0.5,
		core        INTEGER NOT NULL DEFAULT 0
	)`,
	sqlCreateSuperseded,
	sqlCreateMeta,
	`CREATE TABLE IF NOT EXISTS edges (
		src  TEXT NOT NULL,
		type TEXT NOT NULL,
		dst  TEXT NOT NULL,
		PRIMARY KEY (src, type, dst)
	) WITHOUT ROWID`,
	// Incoming SUPERSEDES edges, for supersession. (The edges that carry
	// signals are not stored here: the search file's signals table.)
	`CREATE INDEX IF NOT EXISTS edges_superseded ON edges (dst, src) WHERE type = 'SUPERSEDES'`,
	// SUPERSEDES edges whose target was not projected when they were
	// stored. A new memory only needs its own supersession computed when it
	// is listed here, and this table stays small, so checking is cheap.
	`CREATE TABLE IF NOT EXISTS supersede_waiting (
		dst TEXT NOT NULL,
		src TEXT NOT NULL,
		PRIMARY KEY (dst, src)
	) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS agents (
		name     TEXT    PRIMARY KEY,
		memories INTEGER NOT NULL DEFAULT 0
	) WITHOUT ROWID`,
}

// migrate brings the file to SchemaVersion: an empty file gets the schema,
// a version 1 file is migrated in place (migrateV1), a newer one is refused.
func migrate(ctx context.Context, conn *sql.Conn, lg *zap.Logger) error {
	var v int
	if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("schema version %d was written by a newer memsync (this one knows %d)", v, SchemaVersion)
	}
	if v == SchemaVersion {
		return nil
	}
	return inTx(ctx, conn, func() error {
		switch v {
		case 0:
			for _, s := range schema {
				if _, err := conn.ExecContext(ctx, s); err != nil {
					return fmt.Errorf("create schema: %w", err)
				}
			}
			lg.Info("embedded graph schema created", zap.Int("schema_version", SchemaVersion))
		case 1, 2, 3:
			if v == 1 {
				if err := migrateV1(ctx, conn); err != nil {
					return fmt.Errorf("migrate schema 1 to 2: %w", err)
				}
			}
			if v <= 2 {
				if err := migrateV2(ctx, conn); err != nil {
					return fmt.Errorf("migrate schema 2 to 3: %w", err)
				}
			}
			if err := migrateV3(ctx, conn); err != nil {
				return fmt.Errorf("migrate schema 3 to %d: %w", SchemaVersion, err)
			}
			lg.Info("embedded graph schema migrated; the search file is built again in the background",
				zap.Int("from", v), zap.Int("schema_version", SchemaVersion))
		default:
			return fmt.Errorf("unknown schema version %d", v)
		}
		// PRAGMA takes no parameters; the value is a constant of this package.
		if _, err := conn.ExecContext(ctx, `PRAGMA user_version = `+strconv.Itoa(SchemaVersion)); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
		return nil
	})
}

// migrateV1 turns a version 1 file into version 2 inside the caller's
// transaction: the memories' text is no longer kept twice (it is in the
// stored record), and invalid_at and replaced_by move to the superseded
// table.
func migrateV1(ctx context.Context, conn *sql.Conn) error {
	for _, q := range []string{
		sqlCreateSuperseded,
		`INSERT INTO superseded (id, invalid_at, replaced_by)
			SELECT id, invalid_at, replaced_by FROM memories WHERE invalid_at IS NOT NULL`,
		`DROP INDEX memories_filter`,
		`ALTER TABLE memories DROP COLUMN text`,
		`ALTER TABLE memories DROP COLUMN invalid_at`,
		`ALTER TABLE memories DROP COLUMN replaced_by`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// migrateV2 turns a version 2 file into version 3 inside the caller's
// transaction: the full-text index, entities and mentions leave the file
// for the search file (SearchFileName), which the indexer builds again from
// the stored records, and the file gets its generation.
func migrateV2(ctx context.Context, conn *sql.Conn) error {
	for _, q := range []string{`DROP TABLE memories_fts`, `DROP TABLE entities`, `DROP TABLE mentions`, sqlCreateMeta} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// migrateV3 turns a version 3 file into version 4 inside the caller's
// transaction: the edges that carry signals (LINKS_TO, CONFLICTS_WITH,
// SUPPORTS) leave the file for the search file's signals table, which the
// indexer builds again from the stored records (search schema 6). Only
// SUPERSEDES edges stay, which supersession reads inside Apply's
// transaction. And the core tier is a column (core), which memories_core's
// condition reads, in place of a search through every stored record at
// every write (Open creates the index again).
func migrateV3(ctx context.Context, conn *sql.Conn) error {
	for _, q := range []string{`DROP INDEX IF EXISTS edges_signals`, `DELETE FROM edges WHERE type <> 'SUPERSEDES'`,
		`DROP INDEX IF EXISTS memories_core`,
		`ALTER TABLE memories ADD COLUMN core INTEGER NOT NULL DEFAULT 0`,
		`UPDATE memories SET core = 1 WHERE instr(record, '"tier":"core"') > 0`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// loadGeneration returns the store's generation, drawing it when the file
// has none yet.
func loadGeneration(ctx context.Context, conn *sql.Conn) (string, error) {
	var gen string
	err := conn.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'generation'`).Scan(&gen)
	if err == nil {
		return gen, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read generation: %w", err)
	}
	gen = newGeneration()
	if _, err := conn.ExecContext(ctx, sqlSetMeta, "generation", gen); err != nil {
		return "", fmt.Errorf("write generation: %w", err)
	}
	return gen, nil
}

// newGeneration draws a generation token.
func newGeneration() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// inTx runs fn inside BEGIN IMMEDIATE … COMMIT on conn, rolling back when
// fn or the commit fails. IMMEDIATE takes the write lock up front, so a
// concurrent writer waits on the busy timeout instead of failing mid-batch.
func inTx(ctx context.Context, conn *sql.Conn, fn func() error) error {
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	err := fn()
	if err == nil {
		// Once the work is done it is committed even if ctx ended meanwhile.
		if _, err = conn.ExecContext(context.Background(), `COMMIT`); err != nil {
			err = fmt.Errorf("commit: %w", err)
		}
	}
	if err != nil {
		// After a failed statement SQLite may already have rolled back; the
		// error of a second rollback says nothing new.
		_, _ = conn.ExecContext(context.Background(), `ROLLBACK`)
		return err
	}
	return nil
}

// writerLocked returns the write connection, reopening it if a failure
// closed it. g.mu must be held.
func (g *Graph) writerLocked(ctx context.Context) (*writer, error) {
	if g.closed {
		return nil, errClosed
	}
	if g.wdb == nil {
		return nil, errReadOnly
	}
	if g.w == nil {
		w, err := openWriter(ctx, g.wdb, mainWAL)
		if err != nil {
			return nil, err
		}
		g.w = w
	}
	return g.w, nil
}

// dropWriterIfBroken forgets the write connection when err says it is
// unusable, so that the next write opens a fresh one. g.mu must be held.
func (g *Graph) dropWriterIfBroken(err error) {
	if g.w != nil && (errors.Is(err, sql.ErrConnDone) || errors.Is(err, errBadConn)) {
		g.lg.Warn("embedded graph: write connection lost, reopening on next write", zap.Error(err))
		g.w.close()
		g.w = nil
	}
}

var errClosed = errors.New("graph is closed")

var _ memsync.StoreChecker = (*Graph)(nil)

// CheckStore implements memsync.StoreChecker: it returns an error wrapping
// memsync.ErrStoreLost when the database file this Graph opened is no
// longer at its path (deleted, or replaced by another file), so that the
// writes of this Graph reach nobody.
func (g *Graph) CheckStore() error {
	fi, err := os.Stat(g.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("embedded: %s was deleted: %w", g.path, memsync.ErrStoreLost)
	case err != nil:
		return nil // unknown: not proof of a loss
	case !os.SameFile(fi, g.opened):
		return fmt.Errorf("embedded: %s was replaced by another file: %w", g.path, memsync.ErrStoreLost)
	}
	return nil
}

// Identity is "embedded:" followed by the absolute path of the database file.
func (g *Graph) Identity() string { return "embedded:" + g.path }

// Path is the absolute path of the database file.
func (g *Graph) Path() string { return g.path }

// Close releases the connections. Calls after the first return nil.
func (g *Graph) Close() error {
	if g.reembedStop != nil {
		// Before taking mu: the re-embedding takes it for every chunk.
		// Once reembedCtx has ended no run starts.
		g.reembedStop()
		g.reembedMu.Lock()
		done := g.reembedDone
		g.reembedMu.Unlock()
		if done != nil {
			<-done
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	if g.idle != nil {
		g.idle.Stop()
	}
	g.vecs.mu.Lock()
	g.vecs.reset() // unmaps the vector index file
	g.vecs.mu.Unlock()
	if err := g.closeAll(); err != nil {
		return fmt.Errorf("embedded: close %s: %w", g.path, err)
	}
	return nil
}

func (g *Graph) closeAll() error {
	var errs []error
	if g.ix != nil {
		// Finishes what is queued; Search and Flush still find it (idle).
		errs = append(errs, g.ix.close())
	}
	if g.ckpt != nil {
		errs = append(errs, g.ckpt.close())
		g.ckpt = nil
	}
	if g.w != nil {
		errs = append(errs, g.w.close())
		g.w = nil
	}
	if g.rdb != nil {
		errs = append(errs, g.rdb.Close())
	}
	if g.wdb != nil {
		errs = append(errs, g.wdb.Close())
	}
	return errors.Join(errs...)
}

// PageSize is the page size of the files the store creates (the main file
// and the search file): 16 KiB, not SQLite's 4 KiB. Every page the WAL
// takes is a write(2) through the driver, and a page carries four times
// the rows, so a projection makes about a quarter of the calls: the 100k
// rebuild path ran 5-21 % faster on 16 KiB pages (interleaved rounds at
// different hours), with about a sixth less CPU, and a 1M rebuild about
// an eighth faster (issue 30); 64 KiB pages were no faster than 16. A
// file keeps the page size it was created with: stores created before
// keep 4 KiB pages (a store deleted and rebuilt gets 16).
const PageSize = 16384

// initFile gives a file that has no page yet PageSize pages, and puts it
// in WAL mode (it stays there: the mode is kept in the file). The writers'
// DSNs do not ask for WAL themselves: the driver runs DSN pragmas sorted
// by name, so journal_mode(WAL) would run first and fix the page size at
// 4 KiB. On a file that already has pages the page_size pragma does
// nothing, and neither statement leaves WAL mode, so a process opening the
// store while another creates it never waits on a mode change. SQLite
// answers journal_mode=WAL with SQLITE_BUSY at once, without its busy
// handler, while another connection turns the new file to WAL, so that
// statement is retried for as long as busy_timeout would wait.
func initFile(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `PRAGMA page_size=`+strconv.Itoa(PageSize)); err != nil {
		return fmt.Errorf("set the page size: %w", err)
	}
	deadline := time.Now().Add(busyTimeoutMS * time.Millisecond)
	for {
		_, err := conn.ExecContext(ctx, `PRAGMA journal_mode=WAL`)
		if err == nil {
			return nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			return fmt.Errorf("set WAL mode: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("set WAL mode: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
