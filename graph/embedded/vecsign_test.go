package embedded

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/memsynctest"
	"github.com/memsync/memsync/memsync/read"
)

// pooledCorpus is n deterministic unit vectors of dim dimensions made as
// a static-embedding model makes a text's (the mean of its words'
// vectors, normalised): each of 4 to 16 words drawn with Zipf frequencies
// from a vocabulary of random directions, so that, as with real text,
// common words pull every vector one way and the rare ones tell them
// apart. Queries are 1 to 3 words.
type pooledCorpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	words [][]float32
}

func newPooledCorpus(seed int64, dim, vocab int) *pooledCorpus {
	rng := rand.New(rand.NewSource(seed))
	c := &pooledCorpus{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, uint64(vocab-1))}
	for range vocab {
		w := make([]float32, dim)
		for j := range w {
			w[j] = float32(rng.NormFloat64())
		}
		c.words = append(c.words, w)
	}
	return c
}

// text is a vector of lo to hi words.
func (c *pooledCorpus) text(lo, hi int) []float32 {
	v := make([]float32, len(c.words[0]))
	for range lo + c.rng.Intn(hi-lo+1) {
		for j, x := range c.words[c.zipf.Uint64()] {
			v[j] += x
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for j := range v {
		v[j] /= float32(math.Sqrt(n))
	}
	return v
}

// add quantises v into g as the index does, with id.
func (g *groupVecs) add(id int64, v []float32) {
	n := len(g.q)
	var s float32
	g.q, s = quantizeFloats(v, g.q)
	g.codes = appendSigns(g.codes, g.q[n:])
	g.ids = append(g.ids, id)
	g.scale = append(g.scale, s)
}

// recallAt is the share of want's first k ids found among got's first k.
func recallAt(got, want []approx, k int) (hit, total int) {
	in := map[int64]bool{}
	for _, a := range want[:min(k, len(want))] {
		in[a.id] = true
	}
	for _, a := range got[:min(k, len(got))] {
		if in[a.id] {
			hit++
		}
	}
	return hit, len(in)
}

// TestSignCodesRecall: the sign codes' two stages, keeping the same
// shares of the vectors as the built-in values do at a million (the
// Hamming pass 32,768: 3.3 %; the int8 pass 4,096: 0.4 %), keep the top
// 10 of the int8 pass over every vector (recall@10 ≥ 0.95) and most of
// the pool the exact pass re-scores; the whole order is deterministic.
func TestSignCodesRecall(t *testing.T) {
	const n, dim, queries = 40_000, 256, 40
	budget := signBudget * n / 1_000_000 // the shares they have at 1M
	c := newPooledCorpus(7, dim, 5000)
	g := &groupVecs{}
	for i := range n {
		g.add(int64(i+1), c.text(4, 16))
	}
	x := &vecIndex{groups: map[string]*groupVecs{"g": g}, shortlist: signShortlist * n / 1_000_000}
	h10, t10, h64, t64 := 0, 0, 0, 0
	for range queries {
		qv := c.text(1, 3)
		exact := best(x.scan(qv, []string{"g"}), 64)
		got := best(x.scanSigns(qv, []string{"g"}, budget), 64)
		if again := best(x.scanSigns(qv, []string{"g"}, budget), 64); !slices.Equal(got, again) {
			t.Fatal("the same search answered twice differently")
		}
		h, tt := recallAt(got, exact, 10)
		h10, t10 = h10+h, t10+tt
		h, tt = recallAt(got, exact, 64)
		h64, t64 = h64+h, t64+tt
	}
	r10, r64 := float64(h10)/float64(t10), float64(h64)/float64(t64)
	t.Logf("%d vectors, Hamming keeps %d, budget %d: recall@10 %.3f, recall@64 %.3f against the int8 pass over all", n, x.shortlist, budget, r10, r64)
	if r10 < 0.95 {
		t.Errorf("recall@10 %.3f, want ≥ 0.95", r10)
	}
	if r64 < 0.85 {
		t.Errorf("recall@64 %.3f, want ≥ 0.85", r64)
	}
}

// TestSignBudget: below exactBelow vectors in the groups searched (or
// when the budget holds them all) every vector is scored; from it on,
// the budget; groups not searched do not count.
func TestSignBudget(t *testing.T) {
	x := &vecIndex{groups: map[string]*groupVecs{
		"big":   {ids: make([]int64, exactBelow)},
		"small": {ids: make([]int64, 10)},
	}, dist: nil}
	for _, tc := range []struct {
		groups []string
		want   int
	}{
		{[]string{"small"}, 0},
		{[]string{"big"}, signBudget},
		{[]string{"small", "big"}, signBudget},
		{[]string{"none"}, 0},
	} {
		if got := x.signBudget(tc.groups); got != tc.want {
			t.Errorf("%v: budget %d, want %d", tc.groups, got, tc.want)
		}
	}
}

// approxStore opens a store with emb whose searches take the sign codes'
// path from min vectors on, with budget.
func approxStore(t *testing.T, emb memsync.Embedder, minVectors, budget int) *Graph {
	t.Helper()
	g, err := Open(t.TempDir(), nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	g.SetVectorSearch(minVectors, budget)
	return g
}

var signWordsList = []string{"photographer", "booked", "pizza", "lunch", "postgres", "orders", "migration",
	"deploy", "friday", "window", "billing", "invoice", "garden", "tomatoes", "river", "kayak", "guitar",
	"concert", "tickets", "museum", "painting", "novel", "library", "coffee", "espresso", "marathon",
	"training", "vaccine", "clinic", "budget", "quarter", "roadmap", "launch", "kernel", "compiler"}

// TestSignCodesHybridRecall: the final hybrid top 10 of Graph.Search
// with the built-in model through the sign codes (a budget of a tenth of
// the store) against the same searches scoring every vector: recall@10
// ≥ 0.95 (measured 0.98). Texts of made-up words, Zipf-distributed; at a
// twentieth of the store the budget is below the exact pass's own
// margin (twice the pool) and recall falls to 0.95: the harness measures
// the built-in budget at 1M.
func TestSignCodesHybridRecall(t *testing.T) {
	const n = 3000
	budget := n / 10
	g := approxStore(t, embed.Default(), math.MaxInt, 0)
	rng := rand.New(rand.NewSource(3))
	vocab := make([]string, 1000)
	for i := range vocab {
		b := make([]byte, 4+rng.Intn(5))
		for j := range b {
			b[j] = byte('a' + rng.Intn(26))
		}
		vocab[i] = string(b)
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	phrase := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(w, " ")
	}
	batch := make([]memsync.Memory, n)
	for i := range batch {
		batch[i] = mem(fmt.Sprintf("m%05d", i), i, phrase(3+rng.Intn(6)))
	}
	apply(t, g, batch...)
	hit, total := 0, 0
	for range 40 {
		q := phrase(1 + rng.Intn(2))
		g.SetVectorSearch(math.MaxInt, 0)
		want := search(t, g, q)
		g.SetVectorSearch(1, budget)
		got := search(t, g, q)
		in := map[string]bool{}
		for _, h := range want {
			in[h.UUID] = true
		}
		for _, h := range got {
			if in[h.UUID] {
				hit++
			}
		}
		total += len(want)
	}
	r := float64(hit) / float64(total)
	t.Logf("hybrid top 10 through the sign codes (budget %d of %d): recall@10 %.3f", budget, n, r)
	if r < 0.95 {
		t.Errorf("recall@10 %.3f, want ≥ 0.95", r)
	}
}

// TestSignCodesGroupScoping: through the sign codes, a vector of a group
// the search does not read is never returned, however near the query:
// each agent's private memories are the query's own text, and another
// agent's search finds none of them (and no vector of theirs reaches
// the int8 pass).
func TestSignCodesGroupScoping(t *testing.T) {
	g := approxStore(t, memsynctest.NewEmbedder(256), 1, 8)
	const query = "kayak river guitar concert"
	private := func(agent string) func(*journal.Record) {
		return func(r *journal.Record) { r.Agent, r.Scope = agent, journal.ScopePrivate }
	}
	var batch []memsync.Memory
	for i := range 40 {
		batch = append(batch, mem(fmt.Sprintf("shared%02d", i), i, signWordsList[i%len(signWordsList)]+" notes"))
	}
	for i := range 20 {
		batch = append(batch, mem(fmt.Sprintf("bob%02d", i), 100+i, query, private("bob")))
	}
	batch = append(batch, mem("alice00", 200, query+" alice", private("alice")))
	apply(t, g, batch...)
	ctx := context.Background()
	for _, tc := range []struct {
		agent, want, never string // uuid prefixes
	}{
		{"alice", "alice", "bob"},
		{"carol", "", "bob"},
		{"bob", "bob", "alice"},
	} {
		groups := []string{journal.SharedGroup, journal.PrivateGroup(tc.agent)}
		hits, err := read.Search(ctx, g, memsync.SearchQuery{Text: query, Groups: groups, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hits {
			if strings.HasPrefix(h.UUID, tc.never) {
				t.Errorf("%s's search returned %s", tc.agent, h.UUID)
			}
			found = found || tc.want != "" && strings.HasPrefix(h.UUID, tc.want)
		}
		if tc.want != "" && !found {
			t.Errorf("%s's search found none of %s's memories", tc.agent, tc.want)
		}
		// Below Search: the first stage itself.
		g.vecs.mu.Lock()
		scanned := g.vecs.scanSigns(memsynctest.NewEmbedder(256).Embed(query), groups, 8)
		g.vecs.mu.Unlock()
		own := map[int64]bool{}
		for _, name := range groups {
			if gv := g.vecs.groups[name]; gv != nil {
				for _, id := range gv.ids {
					own[id] = true
				}
			}
		}
		for _, a := range scanned {
			if !own[a.id] {
				t.Errorf("%s: the sign codes' pass scored vector %d of another group", tc.agent, a.id)
			}
		}
	}
}

// TestSignCodesFollowWrites: vectors added after a search get their sign
// codes (the codes stay those of the int8 rows), and the next search
// through the codes finds them.
func TestSignCodesFollowWrites(t *testing.T) {
	g := approxStore(t, memsynctest.NewEmbedder(256), 1, 16)
	var batch []memsync.Memory
	for i := range 200 {
		batch = append(batch, mem(fmt.Sprintf("m%03d", i), i, signWordsList[i%len(signWordsList)]+" "+signWordsList[(i/7)%len(signWordsList)]))
	}
	apply(t, g, batch...)
	const query = "espresso marathon vaccine"
	search(t, g, query)
	apply(t, g, mem("late", 1000, query))
	hits := search(t, g, query)
	if len(hits) == 0 || hits[0].UUID != "late" || hits[0].Parts.VecRank != 1 {
		t.Errorf("the memory written after the first search is not first by vector: %v", hits)
	}
	g.vecs.mu.Lock()
	defer g.vecs.mu.Unlock()
	sg := g.vecs.groups[journal.SharedGroup]
	if len(sg.ids) != 201 || !slices.Equal(sg.codes, signsOf(sg.q, 256)) {
		t.Errorf("%d vectors; codes %d words, want those of the int8 rows (%d words)", len(sg.ids), len(sg.codes), len(signsOf(sg.q, 256)))
	}
}

// TestAppendSigns: a bit per dimension, set where the element is
// positive, across word boundaries and for dimensions not a multiple of
// 64.
func TestAppendSigns(t *testing.T) {
	row := make([]int8, 70)
	row[0], row[1], row[63], row[64], row[69] = 1, -1, 127, 5, 0
	got := appendSigns([]uint64{42}, row)
	want := []uint64{42, 1 | 1<<63, 1}
	if !slices.Equal(got, want) {
		t.Errorf("codes %x, want %x", got, want)
	}
}
