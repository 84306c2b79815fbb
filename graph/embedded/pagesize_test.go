package embedded

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"
)

// pageSizeOf reads the page size of the SQLite file at path.
func pageSizeOf(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, "query_only(1)"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNewFilesGetThePageSize: a new store's main and search files have
// PageSize pages and are in WAL mode; a file that already holds tables
// keeps its page size (SQLite's default 4 KiB here) and opens as before.
func TestNewFilesGetThePageSize(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g, err := Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, seenRecords(50)...)
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := g.w.conn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q, %v; want wal", mode, err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FileName, SearchFileName} {
		if got := pageSizeOf(t, filepath.Join(dir, f)); got != PageSize {
			t.Errorf("new %s: page size %d, want %d", f, got, PageSize)
		}
	}
	if g, err = Open(dir, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	if st, err := g.Stats(ctx); err != nil || st.Memories != 50 {
		t.Fatalf("reopened: %+v, %v", st, err)
	}
	g.Close()

	old := oldStore(t)
	g, err = Open(old, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, seenRecords(5)...)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if got := pageSizeOf(t, filepath.Join(old, FileName)); got != 4096 {
		t.Errorf("a file with tables: page size %d, want its own 4096", got)
	}
}

// oldStore is a directory holding a main file as an earlier version
// created it: 4 KiB pages, and a table.
func oldStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, FileName), "journal_mode(WAL)"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE before_16k (a INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestWALCheckpointsByBytes: the writers let the WAL grow to the same
// bytes whatever the file's page size (wal_autocheckpoint counts pages),
// in a new store and in one with 4 KiB pages.
func TestWALCheckpointsByBytes(t *testing.T) {
	for _, dir := range []string{t.TempDir(), oldStore(t)} {
		walBytes(t, dir)
	}
}

func walBytes(t *testing.T, dir string) {
	ctx := context.Background()
	g, err := Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, c := range []struct {
		name  string
		w     *writer
		bytes int64
	}{{"main", g.w, mainWAL}, {"search", g.ix.w, searchWAL}} {
		var pages, size int64
		if err := c.w.conn.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if err := c.w.conn.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s writer: %d pages of %d bytes", c.name, pages, size)
		if pages*size != c.bytes {
			t.Errorf("%s writer: checkpoints at %d pages of %d bytes = %d, want %d", c.name, pages, size, pages*size, c.bytes)
		}
	}
}

// TestConcurrentFirstOpens: processes that open a store that does not
// exist yet at the same moment (a daemon starting while a command runs)
// all open it, and the file gets PageSize pages.
func TestConcurrentFirstOpens(t *testing.T) {
	for round := range 5 {
		dir := t.TempDir()
		const n = 6
		errs := make(chan error, n)
		graphs := make(chan *Graph, n)
		start := make(chan struct{})
		for range n {
			go func() {
				<-start
				g, err := Open(dir, nil)
				if err == nil {
					graphs <- g
				}
				errs <- err
			}()
		}
		close(start)
		for range n {
			if err := <-errs; err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
		close(graphs)
		for g := range graphs {
			g.Close()
		}
		if got := pageSizeOf(t, filepath.Join(dir, FileName)); got != PageSize {
			t.Errorf("round %d: page size %d, want %d", round, got, PageSize)
		}
	}
}
