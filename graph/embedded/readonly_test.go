package embedded

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// fileSums is the content of every file of the store in dir but the
// shared-memory indexes (-shm, where readers take their read locks).
func fileSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][32]byte{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-shm") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func openReadOnlyTest(t *testing.T, dir string) *Graph {
	t.Helper()
	r, err := OpenReadOnly(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestOpenReadOnly: a read-only open writes nothing to the store (with the
// writer open or closed, while reading, searching and closing), sees what
// the writer commits after it opened, refuses writes, and reads like the
// writer's own Graph.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	for _, writerOpen := range []bool{true, false} {
		name := map[bool]string{true: "writer open", false: "writer closed"}[writerOpen]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			apply(t, w, graphtest.Corpus(5, 40)...)
			apply(t, w, mem("m-kestrel", 100, "the kestrel deploy needs a canary"))
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			want := graphtest.Dump(t, w)
			if !writerOpen {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			before := fileSums(t, dir)

			r := openReadOnlyTest(t, dir)
			if got := graphtest.Dump(t, r); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Error("the read-only Graph reads another store than the writer's")
			}
			hits, err := read.Search(ctx, r, memsync.SearchQuery{Text: "kestrel canary", Groups: []string{journal.SharedGroup}})
			if err != nil || len(hits) == 0 || hits[0].UUID != "m-kestrel" {
				t.Errorf("Search = %v, %v; want m-kestrel first", hits, err)
			}
			if _, err := r.Apply(ctx, []memsync.Memory{mem("m-new", 200, "written through a reader")}); !errors.Is(err, errReadOnly) {
				t.Errorf("Apply on a read-only Graph: %v, want errReadOnly", err)
			}
			if err := r.Drop(ctx); !errors.Is(err, errReadOnly) {
				t.Errorf("Drop on a read-only Graph: %v, want errReadOnly", err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if after := fileSums(t, dir); !mapsEqual(before, after) {
				t.Errorf("a read-only open changed the store's files:\nbefore %v\nafter  %v", keys(before), keys(after))
			}
		})
	}
}

// TestOpenReadOnlySeesWriter: what the writer (the daemon) commits while a
// read-only Graph is open is read by it.
func TestOpenReadOnlySeesWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	apply(t, w, mem("m-1", 1, "first"))
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r := openReadOnlyTest(t, dir)
	apply(t, w, mem("m-2", 2, "second"))
	got, err := r.Get(ctx, []string{"m-1", "m-2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["m-2"]; !ok || len(got) != 2 {
		t.Errorf("Get after the writer's commit = %v, want m-1 and m-2", slices.Sorted(mapKeys(got)))
	}
}

// TestOpenReadOnlyNotReadable: a store that needs a writer's work first is
// refused with ErrNotReadable, and the refusal creates nothing.
func TestOpenReadOnlyNotReadable(t *testing.T) {
	ctx := context.Background()
	changed := func(q string) func(t *testing.T) string {
		return func(t *testing.T) string {
			dir := t.TempDir()
			w, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, w, mem("m-1", 1, "first"), mem("m-2", 2, "second"))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", dsn(filepath.Join(dir, SearchFileName)))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"no store", func(t *testing.T) string { return filepath.Join(t.TempDir(), "absent") }},
		{"empty directory", func(t *testing.T) string { return t.TempDir() }},
		{"search file behind the memories", changed(`UPDATE indexed SET through = through - 1`)},
		// At the memories but of an earlier schema (FTS5's): a writer
		// builds it again first.
		{"search file of schema 2", changed(`PRAGMA user_version = 2`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			var before map[string][32]byte
			if _, err := os.Stat(dir); err == nil {
				before = fileSums(t, dir)
			}
			g, err := OpenReadOnly(dir, nil)
			if err == nil {
				g.Close()
			}
			if !errors.Is(err, ErrNotReadable) {
				t.Fatalf("OpenReadOnly = %v, want ErrNotReadable", err)
			}
			if before == nil {
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("OpenReadOnly created %s", dir)
				}
			} else if after := fileSums(t, dir); !mapsEqual(before, after) {
				t.Errorf("a refused read-only open changed the store: %v, then %v", keys(before), keys(after))
			}
		})
	}
}

// emptySum is the sum of an empty file.
var emptySum = sha256.Sum256(nil)

// mapsEqual says whether the files after are the files before: the same
// content, except that a write-ahead log absent before may be there, empty
// (SQLite opens a WAL database's log even to read it; nothing is in it).
func mapsEqual(before, after map[string][32]byte) bool {
	for k, v := range after {
		if w, ok := before[k]; ok && w != v || !ok && (!strings.HasSuffix(k, "-wal") || v != emptySum) {
			return false
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			return false
		}
	}
	return true
}

func keys(m map[string][32]byte) []string { return slices.Sorted(mapKeys(m)) }

func mapKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
