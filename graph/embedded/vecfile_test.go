package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// TestVectorIndexFile: a process that loads the vector index from the
// table writes it to a file beside the store, and the next process (a
// read-only opener, as each `memsync search` is) reads that file and only
// the rows written since, with the same answers; a file that does not
// match the store (a Drop, another model) or is damaged is not used.
func TestVectorIndexFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	emb := memsynctest.NewEmbedder(32)
	g, err := Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	words := []string{"photographer", "booked", "pizza", "lunch", "postgres", "orders", "migration", "deploy"}
	batch := make([]memsync.Memory, 0, vecFileRewrite+100)
	for i := 0; i < cap(batch); i++ {
		batch = append(batch, mem(fmt.Sprintf("m%05d", i), i, words[i%len(words)]+" "+words[(i/len(words))%len(words)]+fmt.Sprintf(" n%d", i)))
	}
	apply(t, g, batch...)
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	const query = "photographer lunch"
	uuids := func(hits []memsync.Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, fmt.Sprintf("%s %d %v", h.UUID, h.Parts.VecRank, h.Parts.Cosine))
		}
		return out
	}
	want := uuids(search(t, g, query))
	file := filepath.Join(dir, vecFileName)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no index file after a load of %d rows: %v", g.vecs.tableRows, err)
	}
	// newReader opens the store read-only and searches once: what it
	// found and how many rows it read from the table.
	newReader := func(step string, e memsync.Embedder) int {
		t.Helper()
		ro, err := OpenReadOnly(dir, nil, WithEmbedder(e))
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if got := uuids(search(t, ro, query)); e == emb && !slices.Equal(got, want) {
			t.Errorf("%s: hits %v, want %v", step, got, want)
		}
		return ro.vecs.tableRows
	}
	for _, tc := range []struct {
		step   string
		before func()
		emb    memsync.Embedder
		rows   int
	}{
		{"the file as written", func() {}, emb, 0},
		{"ten memories since", func() {
			more := make([]memsync.Memory, 10)
			for i := range more {
				more[i] = mem(fmt.Sprintf("z%02d", i), 10_000+i, "lunch with the photographer")
			}
			apply(t, g, more...)
			want = uuids(search(t, g, query)) // g's index is current: it does not write the file for 10 rows
		}, emb, 10},
		{"another model", func() {}, memsynctest.Embedder{N: 32, Salt: "other"}, 0},
		{"damaged", func() {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
		}, emb, len(batch) + 10},
		{"written again by the reader that read the table", func() {}, emb, 0},
		{"dropped and projected again", func() {
			if err := g.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			apply(t, g, batch[:50]...)
			want = uuids(search(t, g, query))
		}, emb, 50},
	} {
		tc.before()
		if got := newReader(tc.step, tc.emb); got != tc.rows {
			t.Errorf("%s: %d rows read from the table, want %d", tc.step, got, tc.rows)
		}
	}
}
