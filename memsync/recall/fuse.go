package recall

import (
	"math"
	"sort"
	"time"
)

// RRFK is reciprocal rank fusion's constant: a candidate at rank r (1 is
// the best) of a list earns 1/(RRFK + r) from it. 60 is the value of the
// method's paper and the usual first cut; it keeps the lists' heads close,
// so that agreeing lists lift a memory more than either list's top alone.
const RRFK = 60

// Similar is a vector candidate: a memory whose stored embedding has
// cosine similarity Cosine to the query's.
type Similar struct {
	UUID   string
	TS     time.Time
	Cosine float64
}

// Parts is what each retrieval contributed to a hit's relevance: the
// lexical rule's score (Rank) and rank, the vector similarity and rank
// (0 ranks: not in that list). For a lexical-only search the vector
// parts are zero.
type Parts struct {
	Lexical float64 // Rank's score (bm25 × cover, plus the neighbour lift)
	LexRank int     // 1-based place in Rank's order; 0 if not a lexical candidate
	Cosine  float64 // cosine similarity of the memory's vector to the query's
	VecRank int     // 1-based place in the vector list; 0 if not in it
}

// OrderSimilar sorts vector candidates best first: higher cosine, then
// newer, then smaller uuid, so every backend gives the same list.
func OrderSimilar(vec []Similar) {
	sort.Slice(vec, func(i, j int) bool {
		return Less(vec[i].Cosine, vec[i].TS, vec[i].UUID, vec[j].Cosine, vec[j].TS, vec[j].UUID)
	})
}

// Fuse merges the lexical order lex (Rank's result, whole) with the
// vector candidates vec (any order; OrderSimilar sorts a copy) by
// reciprocal rank fusion: Score = 1/(RRFK+lexRank) + 1/(RRFK+vecRank),
// a list a memory is absent from adding nothing. The result is ordered by
// Score, newest, uuid, and then Order keeps SPEC §7's superset-of-terms
// property among the lexical matches (a memory found only by its vector
// holds no query term, and is ranked by its score alone). With no vector
// candidates the lexical order is returned unchanged, its Parts filled: a
// search without an embedder ranks exactly as it did before fusion.
func Fuse(lex []Ranked, vec []Similar) []Ranked {
	out := make([]Ranked, 0, len(lex)+len(vec))
	at := make(map[string]int, len(lex)+len(vec))
	for i, r := range lex {
		r.Parts = Parts{Lexical: r.Score, LexRank: i + 1}
		at[r.UUID] = len(out)
		out = append(out, r)
	}
	if len(vec) == 0 {
		return out
	}
	for i := range out {
		out[i].Score = rrf(out[i].LexRank)
	}
	sorted := make([]Similar, len(vec))
	for i, s := range vec {
		s.Cosine = RoundCosine(s.Cosine)
		sorted[i] = s
	}
	OrderSimilar(sorted)
	for i, s := range sorted {
		k, ok := at[s.UUID]
		if !ok {
			k = len(out)
			at[s.UUID] = k
			out = append(out, Ranked{Candidate: Candidate{UUID: s.UUID, TS: s.TS}})
		}
		out[k].Cosine = s.Cosine
		out[k].VecRank = i + 1
		out[k].Score += rrf(i + 1)
	}
	Order(out, func(a, b Ranked) bool { return Less(a.Score, a.TS, a.UUID, b.Score, b.TS, b.UUID) },
		func(r Ranked) uint64 { return r.Match })
	return out
}

// RoundCosine keeps five decimals of a cosine, so that backends that
// compute it in other precisions (Neo4j in float32) order the same.
func RoundCosine(c float64) float64 { return math.Round(c*1e5) / 1e5 }

// rrf is what rank r (1-based) of one list earns.
func rrf(r int) float64 { return 1 / float64(RRFK+r) }

// Hybrid is the whole rule of a search: Rank of the lexical candidates,
// fused with the vector candidates (Fuse). Every backend and the offline
// path call it with what they found.
func Hybrid(q Query, cands []Candidate, links []Link, vec []Similar) []Ranked {
	return Fuse(Rank(q, cands, links), vec)
}

// Cosine is the cosine similarity of two vectors of the same length
// (0 when either is zero).
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a[:min(len(a), len(b))] {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
