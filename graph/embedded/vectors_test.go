package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/memsynctest"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/recall"
)

// vectorRows is how many vectors the store's log holds, by version.
func vectorRows(t *testing.T, g *Graph) map[string]int {
	t.Helper()
	if err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	if recs, version := logVectors(t, g); len(recs) > 0 {
		out[version] = len(recs)
	}
	return out
}

func search(t *testing.T, g *Graph, text string) []memsync.Hit {
	t.Helper()
	hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: text, Groups: []string{journal.SharedGroup}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestVectorsFindWithoutSharedWords: with an embedder, a memory that
// shares no term with the query but is near it in vector space is found,
// its parts saying so; without one, it is not.
func TestVectorsFindWithoutSharedWords(t *testing.T) {
	batch := []memsync.Memory{mem("m1", 1, "we moved the orders to postgres yesterday"), mem("m2", 2, "lunch was pizza")}
	for _, tc := range []struct {
		name string
		opts []Option
		want int
	}{{"lexical only", nil, 0}, {"with vectors", []Option{WithEmbedder(memsynctest.NewEmbedder(64))}, 1}} {
		g, err := Open(t.TempDir(), nil, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		apply(t, g, batch...)
		hits := search(t, g, "postgresql")
		found := 0
		for _, h := range hits {
			if h.UUID == "m1" {
				found++
				if h.Parts.VecRank != 1 || h.Parts.LexRank != 0 || h.Parts.Cosine <= 0 {
					t.Errorf("%s: parts %+v, want found by its vector alone", tc.name, h.Parts)
				}
			}
		}
		if found != tc.want {
			t.Errorf("%s: m1 found %d times, want %d (hits %v)", tc.name, found, tc.want, hits)
		}
		g.Close()
	}
}

// TestVectorsNeverMixed: a store whose vectors another model made is
// never searched with them: a read-only opener with a new model ranks
// lexically; a writer re-embeds everything (Flush waits), after which the
// store holds the new version only and ranks as one built with it.
func TestVectorsNeverMixed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v1, v2 := memsynctest.Embedder{N: 64, Salt: "1"}, memsynctest.Embedder{N: 64, Salt: "2"}
	batch := []memsync.Memory{mem("m1", 1, "we moved the orders to postgres yesterday"), mem("m2", 2, "postgres upgrade planned"), mem("m3", 3, "lunch was pizza")}
	g, err := Open(dir, nil, WithEmbedder(v1))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, batch...)
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := vectorRows(t, g); got[v1.Version()] != 3 || len(got) != 1 {
		t.Fatalf("vectors %v, want 3 of %s", got, v1.Version())
	}
	g.Close()

	ro, err := OpenReadOnly(dir, nil, WithEmbedder(v2))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range search(t, ro, "postgresql upgrade") {
		if h.Parts.VecRank != 0 {
			t.Errorf("read-only with a new model: %s ranked by a vector of the old one (%+v)", h.UUID, h.Parts)
		}
	}
	ro.Close()

	g, err = Open(dir, nil, WithEmbedder(v2))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := vectorRows(t, g); got[v2.Version()] != 3 || len(got) != 1 {
		t.Fatalf("after re-embedding: vectors %v, want 3 of %s only", got, v2.Version())
	}
	fresh, err := Open(t.TempDir(), nil, WithEmbedder(v2))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	apply(t, fresh, batch...)
	sameHits(t, search(t, g, "postgresql upgrade"), search(t, fresh, "postgresql upgrade"), "re-embedded store", "fresh store")
}

// TestVectorsFollowTheProjection: a clash's winner has its vector, a Drop
// empties the log, and Apply after it (a rebuild) embeds again.
func TestVectorsFollowTheProjection(t *testing.T) {
	ctx := context.Background()
	g, err := Open(t.TempDir(), nil, WithEmbedder(memsynctest.NewEmbedder(64)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	a := mem("m1", 1, "first version")
	b := mem("m1", 1, "second version")
	apply(t, g, a, mem("m2", 2, "other"))
	apply(t, g, b)
	// The loser's vector, when it was stored first, stays in the log, of
	// no memory.
	if covered, orphans, twice, _ := vectorCoverage(t, g, memsynctest.NewEmbedder(64).Version()); covered != 2 || twice != 0 || orphans > 1 {
		t.Fatalf("after a clash: %d memories with a vector, %d twice, %d vectors of no memory; want 2, 0, at most 1", covered, twice, orphans)
	}
	if err := g.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := vectorRows(t, g); len(got) != 0 {
		t.Fatalf("after Drop: vectors %v", got)
	}
	apply(t, g, a, mem("m2", 2, "other"), mem("m3", 3, "third"))
	if got := vectorRows(t, g); got[memsynctest.NewEmbedder(64).Version()] != 3 {
		t.Fatalf("after rebuild: vectors %v, want 3", got)
	}
}

// TestVectorIndexFollowsWrites: the in-memory vector index of a
// long-lived reader (this Graph, and another opened read-only on the same
// files, as an MCP server beside the daemon) follows every write: new
// memories, a clash's replacement, a Drop, a re-projection, once the
// writer has indexed them.
func TestVectorIndexFollowsWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	emb := memsynctest.NewEmbedder(256)
	g, err := Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	apply(t, g, mem("m1", 1, "the photographer is booked"), mem("m0", 0, "lunch"))
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	byVector := func(gr *Graph) []string {
		var out []string
		for _, h := range search(t, gr, "photography") {
			if h.Parts.VecRank > 0 && h.Parts.Cosine > 0.3 {
				out = append(out, h.UUID)
			}
		}
		return out
	}
	// check waits for the writer's indexer first: a read-only reader
	// searches what the search file holds (vectors are written with the
	// full text, off Apply's path), and it is checked in a fixed order,
	// before the writer, whose search would wait for the indexer itself.
	check := func(step string, want ...string) {
		t.Helper()
		if err := g.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for _, gr := range []*Graph{ro, g} {
			name := map[bool]string{true: "read-only", false: "writer"}[gr == ro]
			got := byVector(gr)
			if len(got) != len(want) || (len(want) > 0 && got[0] != want[0]) || len(want) == 2 && got[1] != want[1] {
				t.Errorf("%s, %s: found by vector %v, want %v", step, name, got, want)
			}
		}
	}
	check("first", "m1")
	apply(t, g, mem("m2", 2, "photographs of the photographer"))
	check("a new memory", "m2", "m1")
	res := apply(t, g, mem("m2", 2, "pizza again", func(r *journal.Record) { r.Confidence = "high" }))
	if len(res.Mismatched) != 1 {
		t.Fatalf("clash: %+v", res)
	}
	if n, _ := g.Get(ctx, []string{"m2"}); n["m2"].Text == "pizza again" {
		check("m2 replaced by a text far from the query", "m1")
	} else {
		check("m2's clash lost", "m2", "m1")
	}
	if err := g.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	check("dropped")
	apply(t, g, mem("m3", 3, "photographer booked again"))
	check("projected again", "m3")
}

// TestVectorsStoredCompactly: a vector is stored as its int8 quantisation
// (a record of the log holds 4 + Dim bytes of it, not 4 × Dim), and the
// search's exact scores are those of the float32 vectors: equal to the
// cosine of the embedder's own vectors.
func TestVectorsStoredCompactly(t *testing.T) {
	ctx := context.Background()
	const dim = 256
	emb := memsynctest.NewEmbedder(dim)
	batch := []memsync.Memory{
		mem("m1", 1, "the photographer is booked for saturday"),
		mem("m2", 2, "photographs of the photographer"),
		mem("m3", 3, "lunch was pizza"),
		mem("m4", 4, "the photo booth is rented"),
	}
	query := "photographer photos"
	qv := emb.Embed(query)
	want := map[string]float64{}
	for _, m := range batch {
		want[m.UUID] = recall.RoundCosine(dotFloats(qv, emb.Embed(m.Text)))
	}
	g, err := Open(t.TempDir(), nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	apply(t, g, batch...)
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var bytes int
	if err := g.rdb.QueryRowContext(ctx, `SELECT bytes FROM search.vec_state`).Scan(&bytes); err != nil {
		t.Fatal(err)
	}
	if want := len(batch) * vecRecordSize(len(journal.SharedGroup), dim); bytes != want {
		t.Fatalf("the log holds %d bytes, want %d (%d records of %d)", bytes, want, len(batch), vecRecordSize(len(journal.SharedGroup), dim))
	}
	if 2+len(journal.SharedGroup)+8+4+dim+4 != vecRecordSize(len(journal.SharedGroup), dim) {
		t.Fatal("vecRecordSize is not the record's fields")
	}
	got := 0
	for _, h := range search(t, g, query) {
		if h.Parts.VecRank == 0 {
			continue
		}
		got++
		if h.Parts.Cosine != want[h.UUID] {
			t.Errorf("%s: cosine %v, want %v (the float32 vectors')", h.UUID, h.Parts.Cosine, want[h.UUID])
		}
	}
	if got != len(batch) {
		t.Errorf("%d hits with a vector part, want %d", got, len(batch))
	}
}

// TestQuantizeFloats: every element comes back within half a step of the
// scale, the largest at ±127, and the zero vector as zeros.
func TestQuantizeFloats(t *testing.T) {
	for _, v := range [][]float32{
		{0.5, -0.25, 0.125, -0.5, 0},
		{-1, 0.999, 1e-9, -1e-9},
		{0, 0, 0},
		memsynctest.NewEmbedder(256).Embed("the photographer is booked for saturday"),
	} {
		q, s := quantizeFloats(v, nil)
		if len(q) != len(v) {
			t.Fatalf("%v: %d values", v, len(q))
		}
		big := 0
		for i, x := range v {
			if d := math.Abs(float64(x) - float64(q[i])*float64(s)); d > float64(s)/2*1.0001 {
				t.Errorf("%v[%d]: %v ≈ %d × %v is %v off, more than half a step", v, i, x, q[i], s, d)
			}
			if q[i] == 127 || q[i] == -127 {
				big++
			}
		}
		if s != 0 && big == 0 {
			t.Errorf("%v: no element at ±127 (%v)", v, q)
		}
	}
}

// quantizeReference is the quantisation the stored int8 rows were first
// written with (max(maxAbs, x, -x), then appends), for TestEncodeVectorBits.
func quantizeReference(v []float32) ([]int8, float32) {
	maxAbs := float32(0)
	for _, x := range v {
		maxAbs = max(maxAbs, x, -x)
	}
	if maxAbs == 0 {
		return make([]int8, len(v)), 0
	}
	var q []int8
	inv := 127 / maxAbs
	for _, x := range v {
		y := x * inv
		if y >= 0 {
			q = append(q, int8(int32(y+0.5)))
		} else {
			q = append(q, int8(int32(y-0.5)))
		}
	}
	return q, maxAbs / 127
}

// TestEncodeVectorBits: encodeVector and quantizeFloats store the bytes
// the first quantisation stored, for the built-in model's vectors and
// for edge cases (zeros, signed zeros, a negative largest element).
func TestEncodeVectorBits(t *testing.T) {
	vecs := [][]float32{{0, 0, 0}, {float32(math.Copysign(0, -1)), 0}, {-1, 0.5, 0.25}, {1, -1}, {1e-30, -3e-30}, {}}
	m := embed.Default()
	for _, c := range graphtest.Corpus(3, 500) {
		vecs = append(vecs, m.Embed(c.Text))
	}
	r := rand.New(rand.NewSource(9))
	for range 500 {
		v := make([]float32, 1+r.Intn(300))
		for i := range v {
			switch r.Intn(3) {
			case 0:
				v[i] = float32(r.NormFloat64())
			case 1:
				v[i] = float32(r.Intn(509)-254) / 254 // halves of a step when the largest is ±1
			default:
				v[i] = float32(math.Copysign(0, -1))
			}
		}
		vecs = append(vecs, v)
	}
	var shared, before []byte // appendVector's buffer, and what it should hold
	for _, v := range vecs {
		wantQ, wantS := quantizeReference(v)
		want := binary.LittleEndian.AppendUint32(nil, math.Float32bits(wantS))
		for _, x := range wantQ {
			want = append(want, byte(x))
		}
		if got := encodeVector(v); !bytes.Equal(got, want) {
			t.Fatalf("encodeVector(%v)\n got  %v\n want %v", v, got, want)
		}
		n := len(shared)
		if shared = appendVector(shared, v); !bytes.Equal(shared[n:], want) || !bytes.Equal(shared[:n], before) {
			t.Fatalf("appendVector(%v) after %d bytes: not encodeVector's bytes, or the bytes before changed", v, n)
		}
		before = append(before, want...)
		prefix := []int8{7, -7}
		q, s := quantizeFloats(v, prefix)
		if math.Float32bits(s) != math.Float32bits(wantS) || !slices.Equal(q[:2], prefix) || !slices.Equal(q[2:], wantQ) {
			t.Fatalf("quantizeFloats(%v) = %v, %v; want %v, %v after the prefix", v, q, s, wantQ, wantS)
		}
	}
}

// TestMainVectorsDropped: the vectors live in the search file (search
// schema 4); a store whose main file holds the vectors table of earlier
// versions (and its vectors_group index) loses it at the next Open, and
// searches with the vectors the indexer embeds again.
func TestMainVectorsDropped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	emb := memsynctest.NewEmbedder(64)
	g, err := Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, mem("m1", 1, "we moved the orders to postgres yesterday"), mem("m2", 2, "lunch was pizza"))
	// The main file as earlier versions left it.
	for _, q := range []string{`CREATE TABLE vectors (id INTEGER PRIMARY KEY, group_id TEXT NOT NULL, version TEXT NOT NULL, vec BLOB NOT NULL)`,
		`INSERT INTO vectors SELECT id, group_id, 'old', x'00' FROM memories`,
		`CREATE INDEX vectors_group ON vectors (group_id, version)`} {
		if _, err := g.w.conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if g, err = Open(dir, nil, WithEmbedder(emb)); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var n int
	if err := g.rdb.QueryRowContext(ctx, `SELECT count(*) FROM main.sqlite_schema WHERE tbl_name = 'vectors'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d tables and indexes named vectors in the main file after Open, want 0", n)
	}
	if hits := search(t, g, "postgresql upgrade"); len(hits) == 0 || hits[0].UUID != "m1" || hits[0].Parts.VecRank != 1 {
		t.Fatalf("after the drop: %+v", hits)
	}
	if got := vectorRows(t, g); got[emb.Version()] != 2 || len(got) != 1 {
		t.Fatalf("search file vectors %v, want 2 of %s", got, emb.Version())
	}
}

// storedID is the id under which g stores uuid.
func storedID(t *testing.T, g *Graph, uuid string) int64 {
	t.Helper()
	var id int64
	if err := g.rdb.QueryRowContext(context.Background(), `SELECT id FROM memories WHERE uuid = ?1`, uuid).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestStoredVectorsPerMemory: the vectors Apply stores (a chunk's encoded
// in one buffer by the preparing goroutines) are, row by row, each
// memory's text embedded and encoded on its own, across chunks and
// batches, with memories embedded ahead (Memory.Embed, as the engine
// does) and not.
func TestStoredVectorsPerMemory(t *testing.T) {
	ctx := context.Background()
	emb := embed.Default()
	for _, c := range []struct {
		name  string
		ahead bool
	}{{"embedded by Apply", false}, {"embedded ahead", true}} {
		t.Run(c.name, func(t *testing.T) {
			g, err := Open(t.TempDir(), nil, WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			corpus := graphtest.Corpus(5, 3*prepareChunk+17)
			if c.ahead {
				for i := range corpus {
					corpus[i].Embed(emb)
				}
			}
			for j := 0; j < len(corpus); j += 2*prepareChunk + 3 {
				if _, err := g.Apply(ctx, corpus[j:min(j+2*prepareChunk+3, len(corpus))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := g.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			text := map[int64]string{}
			for _, m := range corpus {
				text[storedID(t, g, m.UUID)] = m.Text
			}
			recs, _ := logVectors(t, g)
			n := 0
			for _, r := range recs {
				if want := encodeVector(emb.Embed(text[r.id])); !bytes.Equal(r.vec, want) {
					t.Fatalf("memory %d: stored vector is not its text's", r.id)
				}
				n++
			}
			if n != len(text) {
				t.Fatalf("%d vectors stored, want %d", n, len(text))
			}
		})
	}
}
