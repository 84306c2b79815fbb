package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
)

// ErrNotReadable marks a store that OpenReadOnly cannot serve as it is: no
// file yet, a schema to migrate, or a search file missing or behind the
// memories. Open (the writer's open) fixes each of these.
var ErrNotReadable = errors.New("store not readable without a writer")

// errReadOnly is what a write to a Graph of OpenReadOnly returns.
var errReadOnly = errors.New("graph was opened read-only")

// readMmap is how much of each file a read-only Graph maps into memory:
// a fresh process then reads its pages from the OS cache in place instead
// of copying each one into a cold page cache (a read command's main cost).
// Only read-only Graphs map: a daemon's mapped pages would count in its RSS.
const readMmap = 1 << 30

// OpenReadOnly opens the store in dir/graph.db for reading only, for a
// short-lived read command (search, packet, show, explain): the files are
// opened read-only and mapped, nothing is created, migrated, indexed or
// checkpointed, and Close writes nothing. It sees what a writer (the
// daemon) has committed. Writes return an error.
//
// It returns an error wrapping ErrNotReadable when the store cannot be read
// as it is (no file, another schema version, a search file missing, of
// another generation or behind the memories); Open then does what is needed.
func OpenReadOnly(dir string, lg *zap.Logger, opts ...Option) (*Graph, error) {
	if lg == nil {
		lg = zap.NewNop()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("embedded: open %s: %w", dir, err)
	}
	path := filepath.Join(abs, FileName)
	searchPath := filepath.Join(abs, SearchFileName)
	g := &Graph{lg: lg.With(zap.String("path", path)), path: path}
	for _, o := range opts {
		o(g)
	}
	for _, p := range []string{path, searchPath} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("embedded: open %s read-only: %w: %w", p, ErrNotReadable, err)
		}
	}
	if g.opened, err = os.Stat(path); err != nil {
		return nil, g.wrap("open "+path, err)
	}
	c := newReadConnector(readOnlyDSN(path, "query_only(1)", "cache_size(-16384)", fmt.Sprintf("mmap_size(%d)", readMmap)), readOnlyURI(searchPath))
	c.mmap = readMmap
	g.rdb = sql.OpenDB(c)
	g.rdb.SetMaxOpenConns(readConns)
	g.rdb.SetMaxIdleConns(2)
	g.rdb.SetConnMaxIdleTime(IdleRelease)
	if err := g.checkReadable(context.Background()); err != nil {
		g.closeAll()
		return nil, err
	}
	if g.emb != nil {
		// A store no writer with vectors has written to has no vectors:
		// its search is lexical only until one does.
		var n int
		if err := g.rdb.QueryRowContext(context.Background(),
			`SELECT IFNULL((SELECT bytes FROM search.vec_state), 0) > 0`).Scan(&n); err != nil {
			g.closeAll()
			return nil, g.wrap("open "+g.path+" read-only", err)
		}
		if n == 0 {
			g.emb = nil
		}
	}
	return g, nil
}

// checkReadable reads, in one snapshot, the schema version, the store's
// generation and last id, and the search file's watermark: a read-only
// Graph serves only a store that needs no writer's work.
func (g *Graph) checkReadable(ctx context.Context) error {
	tx, err := g.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return g.wrap("open "+g.path+" read-only", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return g.wrap("open "+g.path+" read-only", err)
	}
	if v != SchemaVersion {
		return fmt.Errorf("embedded: open %s read-only: schema version %d, not %d: %w", g.path, v, SchemaVersion, ErrNotReadable)
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA search.user_version`).Scan(&v); err != nil {
		return g.wrap("open "+g.path+" read-only", err)
	}
	if v != searchSchemaVersion {
		return fmt.Errorf("embedded: open %s read-only: search file schema version %d, not %d: %w", g.path, v, searchSchemaVersion, ErrNotReadable)
	}
	var gen, igen sql.NullString
	var last, through sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key = 'generation'),
		(SELECT IFNULL(MAX(id), 0) FROM memories),
		(SELECT generation FROM search.indexed), (SELECT through FROM search.indexed)`).Scan(&gen, &last, &igen, &through)
	if err != nil {
		return fmt.Errorf("embedded: open %s read-only: %w: %w", g.path, ErrNotReadable, err)
	}
	if !gen.Valid || gen != igen || last.Int64 != through.Int64 {
		return fmt.Errorf("embedded: open %s read-only: the search file is not at the memories (generation %q at %d, indexed %q at %d): %w",
			g.path, gen.String, last.Int64, igen.String, through.Int64, ErrNotReadable)
	}
	g.gen = gen.String
	return nil
}

// readOnlyURI is path as an SQLite URI opened read-only.
func readOnlyURI(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: "mode=ro"}
	return u.String()
}

// readOnlyDSN is dsn(path, pragmas...) opened read-only.
func readOnlyDSN(path string, pragmas ...string) string {
	d := dsn(path, pragmas...)
	sep := "?"
	if strings.Contains(d, "?") {
		sep = "&"
	}
	return d + sep + "mode=ro"
}
