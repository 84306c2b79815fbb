package surprise

import (
	"encoding/binary"
	"math"
)

// Embedder is what the gate needs of a text embedding model:
// memsync.Embedder's method set, declared here so that the front binary,
// which links this package, does not link the engine. Embed returns an
// L2-normalised vector of Dim components, or nil for a text it has
// nothing for. With an embedder, the similarity of two records is the
// greater of the Jaccard of their words and MappedCosine of their
// vectors' cosine; contradiction and topic novelty stay on words.
type Embedder interface {
	Embed(text string) []float32
	Dim() int
	Version() string
}

// The two anchors of MappedCosine: a cosine of VectorSkipCos maps to the
// similarity at which a record is skipped (1 − LowAt = 0.6), one of
// VectorStoreCos to the similarity below which it is stored as is
// (1 − StoreAt = 0.3), linearly between, clamped to 0–1.
//
// Measured on 2026-11-26 (`go run ./cmd/bench semantic --gate-pairs
// cmd/bench/testdata/gate-pairs.jsonl`: 56 labelled pairs, 12 duplicate,
// 18 paraphrase, 26 different): the built-in model's highest cosine
// between two different memories is 0.68, and a cut above it keeps 24 of
// the 30 repeats out with no different pair skipped; the words' Jaccard
// (highest different 0.43) keeps 12 of 30 out at its cut. A gate that
// skips a new memory loses it, so the skip line sits just above 0.68.
const (
	VectorSkipCos  = 0.70 // cosine mapped to similarity 1 − LowAt: skipped above it
	VectorStoreCos = 0.60 // cosine mapped to similarity 1 − StoreAt: stored as is below it
)

// MappedCosine is the gate's similarity for a cosine of two records'
// vectors: clamp(0.6 + 3·(cos − 0.70), 0, 1) with the anchors above.
func MappedCosine(cos float64) float64 {
	const skipSim, storeSim = 1 - LowAt, 1 - StoreAt
	s := skipSim + (skipSim-storeSim)/(VectorSkipCos-VectorStoreCos)*(cos-VectorSkipCos)
	return math.Min(1, math.Max(0, s))
}

// appendQuantised appends v in the index's form: a float32 scale
// (little-endian) and dim int8 components, v ≈ scale × q. A vector of
// another length, or none, is stored as zeros (cosine 0 with anything).
func appendQuantised(b []byte, v []float32, dim int) []byte {
	maxAbs := float32(0)
	if len(v) == dim {
		for _, c := range v {
			maxAbs = max(maxAbs, c, -c)
		}
	}
	if maxAbs == 0 || math.IsNaN(float64(maxAbs)) || math.IsInf(float64(maxAbs), 0) {
		b = binary.LittleEndian.AppendUint32(b, 0)
		return append(b, make([]byte, dim)...)
	}
	scale := maxAbs / 127
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(scale))
	for _, c := range v {
		b = append(b, byte(int8(math.Round(float64(c/scale)))))
	}
	return b
}

// vectorBest is the highest MappedCosine between text's vector and the
// vectors of the records x holds, and that record's id (the lowest on a
// tie); false when x has no vectors or text none.
func (x *Index) vectorBest(text string) (float64, uint32, bool) {
	if x.emb == nil || x.dim == 0 || x.Len() == 0 {
		return 0, 0, false
	}
	q := appendQuantised(nil, x.emb.Embed(text), x.dim)
	qs := math.Float32frombits(binary.LittleEndian.Uint32(q))
	if qs == 0 {
		return 0, 0, false
	}
	qv := newQuery(q[4:])
	bestDot, bestID, found := float32(0), uint32(0), false
	id := uint32(0)
	for _, p := range x.parts {
		stride := 4 + x.dim
		if len(p.vecs) != p.n*stride {
			id += uint32(p.n) // a part without vectors: cosine 0
			continue
		}
		for i := 0; i < p.n && int(id) < x.limit; i, id = i+1, id+1 {
			e := p.vecs[i*stride : (i+1)*stride]
			d := float32(qv.dot(e[4:])) * math.Float32frombits(binary.LittleEndian.Uint32(e))
			if !found || d > bestDot {
				bestDot, bestID, found = d, id, true
			}
		}
	}
	if !found {
		return 0, 0, false
	}
	return MappedCosine(float64(bestDot * qs)), bestID, true
}

// query is a quantised query vector, its int8 components widened once
// for the int8 pass: to int32 for dot, and to int16 for the amd64 kernel
// when it runs (wide).
type query struct {
	q    []int32
	wide []int16
}

func newQuery(q8 []byte) *query {
	q := &query{q: make([]int32, len(q8))}
	for i, c := range q8 {
		q.q[i] = int32(int8(c))
	}
	q.wide = wide(q.q)
	return q
}

// dot is the dot product of the query q (int8 values widened once) and
// the int8 vector b (at least len(q) bytes): eight components per 64-bit
// load, two accumulators. Measured on 2026-11-26 (2 shared cores, load
// ~5), 5,000 × 256: 0.72 ms, against 1.2–1.3 ms for a byte-by-byte loop
// over two int8 vectors.
func dot(q []int32, b []byte) int32 {
	b = b[:len(q)]
	var s0, s1 int32
	i := 0
	for ; i+8 <= len(q); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		qq := q[i : i+8 : i+8]
		s0 += qq[0]*int32(int8(x)) + qq[1]*int32(int8(x>>8)) + qq[2]*int32(int8(x>>16)) + qq[3]*int32(int8(x>>24))
		s1 += qq[4]*int32(int8(x>>32)) + qq[5]*int32(int8(x>>40)) + qq[6]*int32(int8(x>>48)) + qq[7]*int32(int8(x>>56))
	}
	for ; i < len(q); i++ {
		s0 += q[i] * int32(int8(b[i]))
	}
	return s0 + s1
}
