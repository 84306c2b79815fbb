package embedded

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/memsync/memsync/journal"
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
		t.Fatalf("no index file after a load of %d rows: %v", g.vecs.logRecords, err)
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
		return ro.vecs.logRecords
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

// TestVectorIndexFileSignCodes: the index file holds the sign codes
// (format 2), read back as the int8 rows' own; a file of the first
// format, without them, is not used (the reader loads the table and
// writes the file again).
func TestVectorIndexFileSignCodes(t *testing.T) {
	dir := t.TempDir()
	g, err := Open(dir, nil, WithEmbedder(memsynctest.NewEmbedder(32)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	batch := make([]memsync.Memory, vecFileRewrite+10)
	for i := range batch {
		batch[i] = mem(fmt.Sprintf("m%05d", i), i, fmt.Sprintf("lunch pizza n%d w%d", i, i%17))
	}
	apply(t, g, batch...)
	search(t, g, "lunch")
	file := filepath.Join(dir, vecFileName)
	x := &vecIndex{}
	g.vecs.mu.Lock()
	key := g.vecs.key
	g.vecs.mu.Unlock()
	if ok, err := readVecFile(file, x, key, 32); !ok || err != nil {
		t.Fatalf("index file not read: %v %v", ok, err)
	}
	sg := x.groups[journal.SharedGroup]
	if sg == nil || len(sg.ids) != len(batch) || !slices.Equal(sg.codes, signsOf(sg.q, 32)) {
		t.Fatalf("file's codes are not those of its int8 rows")
	}
	x.reset() // unmapped before the file is written over in place
	// A file of the first format, by its magic.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	old := append([]byte("MSVECIX1"), b[len(vecFileMagic):]...)
	if err := os.WriteFile(file, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := readVecFile(file, &vecIndex{}, key, 32); ok || !errors.Is(err, errVecFile) { // nothing mapped: not read
		t.Errorf("a file of the first format read: %v %v", ok, err)
	}
	ro, err := OpenReadOnly(dir, nil, WithEmbedder(memsynctest.NewEmbedder(32)))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	search(t, ro, "lunch")
	if ro.vecs.logRecords != len(batch) {
		t.Errorf("the reader of an old file read %d rows from the table, want %d", ro.vecs.logRecords, len(batch))
	}
	again := &vecIndex{}
	defer again.reset()
	if ok, err := readVecFile(file, again, key, 32); !ok || err != nil {
		t.Errorf("the old file was not written again: %v %v", ok, err)
	}
	// The next reader takes the file as written again, mapped (where the
	// system maps files): none of its rows from the table.
	ro2, err := OpenReadOnly(dir, nil, WithEmbedder(memsynctest.NewEmbedder(32)))
	if err != nil {
		t.Fatal(err)
	}
	defer ro2.Close()
	search(t, ro2, "lunch")
	ro2.vecs.mu.Lock()
	mapped := ro2.vecs.release != nil
	ro2.vecs.mu.Unlock()
	if ro2.vecs.logRecords != 0 || (runtime.GOOS == "linux" && !mapped) {
		t.Errorf("the next reader read %d rows from the table; file mapped: %v", ro2.vecs.logRecords, mapped)
	}
}

// FuzzIndexFile: readVecFile takes any bytes without panicking, and what
// it accepts is consistent (every group's ids, scales, int8 rows and sign
// codes of the same count) and written back identically.
func FuzzIndexFile(f *testing.F) {
	const dim, key = 8, "gen/1/v"
	x := &vecIndex{key: key, through: 7, groups: map[string]*groupVecs{}}
	for i, name := range []string{"CONSTELLATION", "AGENT:a"} {
		g := &groupVecs{}
		for j := range 3 + i {
			v := make([]float32, dim)
			for k := range v {
				v[k] = float32((j+1)*(k+1)%5) - 2
			}
			g.add(int64(10*i+j+1), v)
		}
		x.groups[name] = g
	}
	path := filepath.Join(f.TempDir(), vecFileName)
	if err := writeVecFile(path, x, dim); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(valid[:40])
	f.Add([]byte(vecFileMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), vecFileName)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got := &vecIndex{}
		ok, _ := readVecFile(p, got, key, dim)
		if !ok {
			return
		}
		defer got.reset()
		for name, g := range got.groups {
			n := len(g.ids)
			if len(g.scale) != n || len(g.q) != n*dim || len(g.codes) != n*signWords(dim) {
				t.Fatalf("group %q: %d ids, %d scales, %d int8, %d code words", name, n, len(g.scale), len(g.q), len(g.codes))
			}
		}
		if err := writeVecFile(p, got, dim); err != nil {
			t.Fatal(err)
		}
		again := &vecIndex{}
		defer again.reset()
		if ok, err := readVecFile(p, again, key, dim); !ok || err != nil || again.through != got.through || len(again.groups) != len(got.groups) {
			t.Fatalf("written back and read: %v %v", ok, err)
		}
		for name, g := range got.groups {
			a := again.groups[name]
			if a == nil || !slices.Equal(a.ids, g.ids) || !slices.Equal(a.q, g.q) || !slices.Equal(a.codes, g.codes) {
				t.Fatalf("group %q differs once written back", name)
			}
		}
	})
}

// TestVecFileRoundTrip: an index of several groups, each longer than the
// writer's chunk, reads back array for array.
func TestVecFileRoundTrip(t *testing.T) {
	const dim = 24
	rng := rand.New(rand.NewPCG(7, 9))
	x := &vecIndex{key: "gen/1/v", through: 123456, groups: map[string]*groupVecs{}}
	for _, name := range []string{"CONSTELLATION", "AGENT:a", "AGENT:b"} {
		g := &groupVecs{}
		for i := range 9000 + rng.IntN(3000) {
			g.ids = append(g.ids, int64(i*3+len(name)))
			n := len(g.q)
			for range dim {
				g.q = append(g.q, int8(rng.IntN(255)-127))
			}
			g.codes = appendSigns(g.codes, g.q[n:])
			g.scale = append(g.scale, rng.Float32())
		}
		x.groups[name] = g
	}
	path := filepath.Join(t.TempDir(), vecFileName)
	if err := writeVecFile(path, x, dim); err != nil {
		t.Fatal(err)
	}
	got := &vecIndex{}
	if ok, err := readVecFile(path, got, x.key, dim); !ok || err != nil {
		t.Fatalf("read back: %v %v", ok, err)
	}
	defer got.release()
	if got.through != x.through || len(got.groups) != len(x.groups) {
		t.Fatalf("through %d, %d groups; want %d, %d", got.through, len(got.groups), x.through, len(x.groups))
	}
	for name, want := range x.groups {
		g := got.groups[name]
		if g == nil || !slices.Equal(g.ids, want.ids) || !slices.Equal(g.q, want.q) || !slices.Equal(g.codes, want.codes) || !slices.Equal(g.scale, want.scale) {
			t.Fatalf("group %s differs after the round trip", name)
		}
	}
}
