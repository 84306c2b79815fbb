package embedded

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"go.uber.org/zap/zaptest"
)

// TestBulkLoad: between BeginBulk and EndBulk the writer commits without
// fsyncing the WAL (synchronous=NORMAL) and the store carries the marker
// of a bulk load under way; EndBulk restores synchronous=FULL, removes the
// marker and records when the load ended, and what was applied meanwhile
// reads back. A store opened while the marker is there (an interrupted
// rebuild) opens and takes writes as usual.
func TestBulkLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g, err := Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { g.Close() }()
	state := func() (sync int, marker, ended bool) {
		t.Helper()
		g.mu.Lock()
		defer g.mu.Unlock()
		w, err := g.writerLocked(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
			t.Fatal(err)
		}
		has := func(key string) bool {
			var v string
			err := w.conn.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?1`, key).Scan(&v)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			return err == nil && v != ""
		}
		return sync, has(metaBulk), has(metaRebuilt)
	}
	const normal, full = 1, 2
	if s, m, e := state(); s != full || m || e {
		t.Fatalf("opened: synchronous %d, marker %v, ended %v; want FULL, neither", s, m, e)
	}
	if err := g.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.BeginBulk(ctx); err != nil {
		t.Fatal(err)
	}
	if s, m, _ := state(); s != normal || !m {
		t.Fatalf("in a bulk load: synchronous %d, marker %v; want NORMAL, set", s, m)
	}
	recs := seenRecords(300)
	apply(t, g, recs[:150]...)
	apply(t, g, recs[150:]...)
	if err := g.EndBulk(ctx); err != nil {
		t.Fatal(err)
	}
	if s, m, e := state(); s != full || m || !e {
		t.Fatalf("after EndBulk: synchronous %d, marker %v, ended %v; want FULL, gone, set", s, m, e)
	}
	if st, err := g.Stats(ctx); err != nil || st.Memories != 300 {
		t.Fatalf("after the load: %+v, %v", st, err)
	}

	// Interrupted: the marker stays; the next process opens as usual.
	if err := g.BeginBulk(ctx); err != nil {
		t.Fatal(err)
	}
	apply(t, g, seenRecords(310)[300:]...)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if g, err = Open(dir, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	if s, m, _ := state(); s != full || !m {
		t.Fatalf("reopened after an interrupted load: synchronous %d, marker %v; want FULL, set", s, m)
	}
	if st, err := g.Stats(ctx); err != nil || st.Memories != 310 {
		t.Fatalf("reopened: %+v, %v", st, err)
	}
}
