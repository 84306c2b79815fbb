package embedded

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// The approximate first stage. Every vector in the index also has a sign
// code: one bit per dimension, set where its int8 element is positive
// (256 dimensions: 32 bytes, an eighth of the int8 row). A search of
// groups holding at least exactBelow vectors between them does not
// compare the query with every int8 row: it counts, for every vector of
// those groups (and of no other), the bits where its code differs from
// the query's (a Hamming distance: XOR and popcount, four words a
// vector), keeps the signBudget vectors nearest by that count, and
// scores only those with the int8 pass; the exact pass then re-scores
// the best of them as before. Smaller searches keep the int8 pass over
// every vector (exact up to quantisation), so small stores answer as
// every other backend does. Binary codes with a re-rank are the usual
// way to cut a brute-force pass: the sign of a coordinate carries most
// of what the cosine of two text embeddings depends on, and the re-rank
// repairs the order among the few thousand it keeps.
const (
	// exactBelow is the number of vectors (in the groups a search
	// reads) below which the search scores every vector with the int8
	// pass.
	exactBelow = 50_000
	// signBudget is how many vectors the Hamming pass hands to the int8
	// pass (chosen by measurement; see docs/benchmarks.md).
	signBudget = 4096
	// signShortlist is how many vectors the Hamming pass keeps for the
	// sign codes' second stage.
	signShortlist = 32768
)

// signWords is the number of uint64 words of a sign code of dim
// dimensions.
func signWords(dim int) int { return (dim + 63) / 64 }

// appendSigns appends the sign code of the int8 row to codes.
func appendSigns(codes []uint64, row []int8) []uint64 {
	n := len(codes)
	for range signWords(len(row)) {
		codes = append(codes, 0)
	}
	for j, c := range row {
		if c > 0 {
			codes[n+j/64] |= 1 << (j % 64)
		}
	}
	return codes
}

// signsOf is the sign codes of the int8 rows q of dim dimensions.
func signsOf(q []int8, dim int) []uint64 {
	if dim <= 0 {
		return nil
	}
	codes := make([]uint64, 0, len(q)/dim*signWords(dim))
	for i := 0; i+dim <= len(q); i += dim {
		codes = appendSigns(codes, q[i:i+dim])
	}
	return codes
}

// queryCode is the query's int8 quantisation (as int32, for dot8), its
// scale, and its sign code; ok is false for a zero vector.
func queryCode(qv []float32) (q []int32, qs float32, code []uint64, ok bool) {
	maxAbs := float32(0)
	for _, v := range qv {
		maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
	}
	if maxAbs == 0 {
		return nil, 0, nil, false
	}
	qs = maxAbs / 127
	q = make([]int32, len(qv))
	row := make([]int8, len(qv))
	for i, v := range qv {
		q[i] = int32(math.Round(float64(v / qs)))
		row[i] = int8(q[i])
	}
	return q, qs, appendSigns(nil, row), true
}

// hamming writes into dist the Hamming distance of each code of codes
// (len(code) words each) to code, and counts them in hist (len(code)*64+1
// entries).
func hamming(codes, code []uint64, dist []uint16, hist []int) {
	if len(code) == 4 { // 256 dimensions, the built-in model's
		c0, c1, c2, c3 := code[0], code[1], code[2], code[3]
		for i := range dist {
			w := codes[4*i : 4*i+4 : 4*i+4]
			d := bits.OnesCount64(w[0]^c0) + bits.OnesCount64(w[1]^c1) +
				bits.OnesCount64(w[2]^c2) + bits.OnesCount64(w[3]^c3)
			dist[i] = uint16(d)
			hist[d]++
		}
		return
	}
	n := len(code)
	for i := range dist {
		d := 0
		for j, c := range code {
			d += bits.OnesCount64(codes[i*n+j] ^ c)
		}
		dist[i] = uint16(d)
		hist[d]++
	}
}

// scanSigns is scan through the sign codes: of the vectors of groups,
// the budget best by the sign codes' two stages, with their quantised
// similarity to qv, in no order. The first stage keeps the
// shortlist×budget nearest the query's code by Hamming distance; the
// second scores those as the query itself (float) against their signs
// (each dimension's value added or taken away: a far closer estimate of
// the cosine than two codes compared, for 32 table lookups a vector) and
// keeps the budget best for the int8 pass. Ties go by position in the
// index, so the same store answers the same.
func (x *vecIndex) scanSigns(qv []float32, groups []string, budget int) []approx {
	dim := len(qv)
	q, qs, code, ok := queryCode(qv)
	if !ok {
		return nil
	}
	short := max(budget, signShortlist)
	if x.shortlist > 0 {
		short = max(budget, x.shortlist)
	}
	hist := make([]int, len(code)*64+1)
	dists := make([][]uint16, len(groups))
	total := 0
	for k, name := range groups {
		g := x.groups[name]
		if g == nil {
			continue
		}
		total += len(g.ids)
		if cap(x.dist) < total {
			// One buffer for all groups, kept between searches.
			x.dist = make([]uint16, total, max(total, 2*cap(x.dist)))
		}
		dists[k] = x.dist[total-len(g.ids) : total]
		hamming(g.codes, code, dists[k], hist)
	}
	// The largest distance kept, and how many at it are kept (all below
	// it are).
	limit, atLimit := len(hist)-1, short
	for d, seen := 0, 0; d < len(hist); d++ {
		if seen+hist[d] >= short {
			limit, atLimit = d, short-seen
			break
		}
		seen += hist[d]
	}
	lut := signTable(qv)
	w := len(code)
	cands := make([]approx, 0, min(short, total))
	where := make([]int32, 0, min(short, total)) // cands[i]'s group (in groups) and position
	var at []int32
	for k, name := range groups {
		g := x.groups[name]
		if g == nil {
			continue
		}
		for i, d := range dists[k] {
			if int(d) > limit {
				continue
			}
			if int(d) == limit {
				if atLimit == 0 {
					continue
				}
				atLimit--
			}
			cands = append(cands, approx{int64(len(where)), signScore(lut, g.codes[i*w:(i+1)*w])})
			where = append(where, int32(k))
			at = append(at, int32(i))
		}
	}
	kept := best(cands, budget)
	// In index order: the int8 rows are read forwards, not at random.
	slices.SortFunc(kept, func(a, b approx) int { return cmp.Compare(a.id, b.id) })
	out := make([]approx, len(kept))
	for j, c := range kept {
		g, i := x.groups[groups[where[c.id]]], int(at[c.id])
		out[j] = approx{g.ids[i], float32(dot8(q, g.q[i*dim:(i+1)*dim])) * g.scale[i] * qs}
	}
	return out
}

// signTable is, for each byte b of a sign code and each of its 256
// values, the sum of qv's elements 8b to 8b+7, each added where the
// value's bit is set and taken away where it is not.
func signTable(qv []float32) []float32 {
	nb := 8 * signWords(len(qv)) // bytes of a code, the last word's padding too
	lut := make([]float32, nb*256)
	for b := range nb {
		for v := range 256 {
			s := float32(0)
			for k := 0; k < 8 && 8*b+k < len(qv); k++ {
				if v>>k&1 == 1 {
					s += qv[8*b+k]
				} else {
					s -= qv[8*b+k]
				}
			}
			lut[b*256+v] = s
		}
	}
	return lut
}

// signScore is the query's dot product with the ±1 vector of code,
// through its signTable.
func signScore(lut []float32, code []uint64) float32 {
	var s0, s1 float32
	for j, c := range code {
		t := lut[j*8*256 : (j+1)*8*256]
		s0 += t[c&0xff] + t[256+(c>>8&0xff)] + t[512+(c>>16&0xff)] + t[768+(c>>24&0xff)]
		s1 += t[1024+(c>>32&0xff)] + t[1280+(c>>40&0xff)] + t[1536+(c>>48&0xff)] + t[1792+(c>>56)]
	}
	return s0 + s1
}

// SetVectorSearch is for measurements (the harness's recall of the sign
// codes against every vector): searches of minVectors vectors or more
// (in the groups they read) go through the sign codes, handing budget of
// them to the int8 pass; 0 keeps the built-in value (exactBelow,
// signBudget), and math.MaxInt for minVectors scores every vector.
func (g *Graph) SetVectorSearch(minVectors, budget int) {
	g.vecs.mu.Lock()
	defer g.vecs.mu.Unlock()
	g.vecs.exactBelow, g.vecs.budget = minVectors, budget
}
