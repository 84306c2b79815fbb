package embedded

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"sync"
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

// TestHashPartsCoverEveryMemoryOnce: HashParts hands every memory to
// exactly one part, with Hashes' uuid and hash, whatever the number of
// parts against the ids (more parts than memories, ids that start past a
// Drop's floor, a gap left by a replaced version), and an empty store
// gives nothing.
func TestHashPartsCoverEveryMemoryOnce(t *testing.T) {
	ctx := context.Background()
	g, err := Open(t.TempDir(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	parts := func(n int) map[string]string {
		t.Helper()
		var mu sync.Mutex
		got := map[string]string{}
		err := g.HashParts(ctx, n, func(part int, uuid, hash string) error {
			mu.Lock()
			defer mu.Unlock()
			if part < 0 || part >= n {
				t.Errorf("part %d of %d", part, n)
			}
			if _, dup := got[uuid]; dup {
				t.Errorf("%s in two parts", uuid)
			}
			got[uuid] = hash
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := parts(3); len(got) != 0 {
		t.Fatalf("empty store: %v", got)
	}
	apply(t, g, seenRecords(20)...)
	if err := g.Drop(ctx); err != nil { // ids start past the floor
		t.Fatal(err)
	}
	recs := seenRecords(37)
	apply(t, g, recs...)
	// Another version of one uuid, preferred by the clash rule or not:
	// either way its row may move to a new id and leave a gap.
	apply(t, g, mem(recs[5].UUID, 5, "another version of memory 5"))
	want := map[string]string{}
	if err := g.Hashes(ctx, func(uuid, hash string) error { want[uuid] = hash; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(want) != 37 {
		t.Fatalf("Hashes gave %d memories, want 37", len(want))
	}
	for _, n := range []int{1, 2, 3, 8, 50} {
		if got := parts(n); !maps.Equal(got, want) {
			t.Fatalf("%d parts: %d memories, want %d as Hashes gives them", n, len(got), len(want))
		}
	}
}
