package recall

import (
	"math"
	"slices"
	"testing"
	"time"
)

// TestFuse: reciprocal rank fusion on small cases, each naming what it shows.
func TestFuse(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lex := func(uuids ...string) []Ranked {
		var out []Ranked
		for i, u := range uuids {
			out = append(out, Ranked{Candidate: Candidate{UUID: u, TS: t0}, Score: float64(10 - i), Match: 1})
		}
		return out
	}
	sim := func(pairs ...any) []Similar {
		var out []Similar
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, Similar{UUID: pairs[i].(string), TS: t0, Cosine: pairs[i+1].(float64)})
		}
		return out
	}
	for _, c := range []struct {
		name string
		lex  []Ranked
		vec  []Similar
		want []string
	}{
		{"no vectors: the lexical order", lex("a", "b", "c"), nil, []string{"a", "b", "c"}},
		{"agreement beats either list's top", lex("a", "b", "c"), sim("b", 0.9, "c", 0.8), []string{"b", "c", "a"}},
		{"a vector-only memory joins after a memory both lists hold", lex("a", "b"), sim("z", 0.9, "a", 0.5), []string{"a", "z", "b"}},
		{"vector list order is by cosine, not as given", lex(), sim("x", 0.1, "y", 0.7), []string{"y", "x"}},
		{"equal fused scores: uuid", lex("b"), sim("a", 0.9), []string{"a", "b"}},
		{"cosines equal to five decimals tie, then uuid", lex(), sim("b", 0.500001, "a", 0.500002), []string{"a", "b"}},
	} {
		got := Fuse(c.lex, c.vec)
		var ids []string
		for _, r := range got {
			ids = append(ids, r.UUID)
		}
		if !slices.Equal(ids, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, ids, c.want)
		}
	}
}

// TestFuseParts: the parts and the score add up as printed.
func TestFuseParts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lex := []Ranked{{Candidate: Candidate{UUID: "a", TS: t0}, Score: 3, Match: 1}, {Candidate: Candidate{UUID: "b", TS: t0}, Score: 2, Match: 1}}
	got := Fuse(lex, []Similar{{UUID: "b", TS: t0, Cosine: 0.8}, {UUID: "c", TS: t0, Cosine: 0.4}})
	want := map[string]Parts{
		"a": {Lexical: 3, LexRank: 1},
		"b": {Lexical: 2, LexRank: 2, Cosine: 0.8, VecRank: 1},
		"c": {Cosine: 0.4, VecRank: 2},
	}
	for _, r := range got {
		if r.Parts != want[r.UUID] {
			t.Errorf("%s: parts %+v, want %+v", r.UUID, r.Parts, want[r.UUID])
		}
		s := 0.0
		if r.LexRank > 0 {
			s += 1 / float64(RRFK+r.LexRank)
		}
		if r.VecRank > 0 {
			s += 1 / float64(RRFK+r.VecRank)
		}
		if math.Abs(s-r.Score) > 1e-12 {
			t.Errorf("%s: score %v, want %v", r.UUID, r.Score, s)
		}
	}
}

// TestFuseKeepsSuperset: fusion never ranks a lexical match below one
// whose query terms it holds and more, however the vectors disagree.
func TestFuseKeepsSuperset(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lex := []Ranked{
		{Candidate: Candidate{UUID: "both", TS: t0}, Score: 2, Match: 0b11},
		{Candidate: Candidate{UUID: "one", TS: t0}, Score: 1, Match: 0b01},
	}
	got := Fuse(lex, []Similar{{UUID: "one", TS: t0, Cosine: 0.99}, {UUID: "vec", TS: t0, Cosine: 0.98}})
	if got[0].UUID != "both" {
		t.Fatalf("order %v: the superset must rank first", got)
	}
}

// TestHybridWithoutVectorsIsRank: the golden rule of issue 27 — with no
// embedder, every ranking equals Rank's, score for score.
func TestHybridWithoutVectorsIsRank(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := Query{Terms: []string{"a", "b"}, When: true}
	cands := []Candidate{
		{UUID: "x", TS: t0, Lexical: 2, Match: 1, Timed: true},
		{UUID: "y", TS: t0.Add(time.Minute), Lexical: 1, Match: 3},
		{UUID: "n", TS: t0.Add(2 * time.Minute)},
	}
	links := []Link{{From: "x", To: "n", Dist: 1}}
	want := Rank(q, cands, links)
	got := Hybrid(q, cands, links, nil)
	if len(got) != len(want) {
		t.Fatalf("len %d, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].UUID != want[i].UUID || got[i].Score != want[i].Score || got[i].Match != want[i].Match {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestCosine(t *testing.T) {
	for _, c := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 1}, 0},
		{[]float32{1, 1}, []float32{-1, -1}, -1},
		{[]float32{0, 0}, []float32{1, 0}, 0},
	} {
		if got := Cosine(c.a, c.b); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
