// Package postings is the embedded store's own full-text index format: the
// lists of the memories each term occurs in, and the bm25 arithmetic that
// ranks them. It holds no SQL and no state: graph/embedded stores the lists
// as blobs and calls it to build, merge, trim and score them.
//
// # A list
//
// A list holds the postings of one term in one segment, in increasing id
// order, each as four unsigned varints:
//
//	id − the previous posting's id (the first: its id)
//	group   the memory's group, as the store numbers groups
//	freq    2 × its occurrences in the text + its occurrences in the meta
//	        column (entity names and tags weigh half, as before)
//	length  the memory's length in tokens: text, meta and one for its group
//
// Everything bm25 needs of a memory is in its posting, so a search reads
// the lists of its terms and nothing else.
package postings

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Posting is one memory's entry in a term's list.
type Posting struct {
	ID     int64
	Group  uint32
	Freq   uint32 // 2 × occurrences in the text + occurrences in the meta
	Length uint32 // tokens of the memory: text, meta and its group's one
}

// Append appends p to list, whose last posting has id prev (0 for an empty
// list). Ids must increase.
func Append(list []byte, prev int64, p Posting) []byte {
	list = binary.AppendUvarint(list, uint64(p.ID-prev))
	list = binary.AppendUvarint(list, uint64(p.Group))
	list = binary.AppendUvarint(list, uint64(p.Freq))
	return binary.AppendUvarint(list, uint64(p.Length))
}

// ErrCorrupt is a list that does not decode.
var ErrCorrupt = errors.New("postings: corrupt list")

// Reader decodes a list.
type Reader struct {
	b    []byte
	prev int64
	n    int // postings read
	err  error
}

// NewReader reads list.
func NewReader(list []byte) *Reader { return &Reader{b: list} }

// Next returns the next posting, false at the end or on a corrupt list (Err).
func (r *Reader) Next() (Posting, bool) {
	if len(r.b) == 0 || r.err != nil {
		return Posting{}, false
	}
	var v [4]uint64
	for i := range v {
		x, n := binary.Uvarint(r.b)
		if n <= 0 {
			r.err = fmt.Errorf("%w: truncated varint", ErrCorrupt)
			return Posting{}, false
		}
		v[i] = x
		r.b = r.b[n:]
	}
	if v[0] == 0 && r.n > 0 || v[0] > math.MaxInt64-uint64(r.prev) || v[1] > math.MaxUint32 || v[2] > math.MaxUint32 || v[3] > math.MaxUint32 {
		r.err = fmt.Errorf("%w: value out of range", ErrCorrupt)
		return Posting{}, false
	}
	r.prev += int64(v[0])
	r.n++
	return Posting{ID: r.prev, Group: uint32(v[1]), Freq: uint32(v[2]), Length: uint32(v[3])}, true
}

// Err is why Next stopped early, nil at a clean end.
func (r *Reader) Err() error { return r.err }

// Decode is every posting of list.
func Decode(list []byte) ([]Posting, error) {
	var out []Posting
	r := NewReader(list)
	for p, ok := r.Next(); ok; p, ok = r.Next() {
		out = append(out, p)
	}
	return out, r.Err()
}

// Concat joins lists whose id ranges follow one another (each list's first
// id above the previous list's last) into one list, and counts its postings.
func Concat(lists ...[]byte) ([]byte, int, error) {
	var (
		out  []byte
		prev int64
		n    int
	)
	for _, l := range lists {
		r := NewReader(l)
		for p, ok := r.Next(); ok; p, ok = r.Next() {
			if p.ID <= prev {
				return nil, 0, fmt.Errorf("%w: ids out of order across lists (%d after %d)", ErrCorrupt, p.ID, prev)
			}
			out = Append(out, prev, p)
			prev = p.ID
			n++
		}
		if err := r.Err(); err != nil {
			return nil, 0, err
		}
	}
	return out, n, nil
}

// Remove is list without the posting of id, and that posting; ok is false
// when list holds none.
func Remove(list []byte, id int64) (out []byte, removed Posting, ok bool, err error) {
	var prev int64
	r := NewReader(list)
	for p, more := r.Next(); more; p, more = r.Next() {
		if p.ID == id {
			removed, ok = p, true
			continue
		}
		out = Append(out, prev, p)
		prev = p.ID
	}
	return out, removed, ok, r.Err()
}

// IDF is bm25's idf of a term that hits of rows memories hold, as SQLite's
// FTS5 computes it (fts5_aux.c): ln((rows − hits + 0.5) / (hits + 0.5)),
// and 1e-6 where that is not positive (a term in more than half of them).
// The logarithm is Go's: it differs from the C library's FTS5 called in
// the last bit at most.
func IDF(rows, hits int64) float64 {
	idf := math.Log((float64(rows) - float64(hits) + 0.5) / (float64(hits) + 0.5))
	if idf <= 0 {
		idf = 1e-6
	}
	return idf
}

// Part is one term's part of a memory's bm25 score: FTS5's arithmetic (k1
// = 1.2, b = 0.75), operation for operation, so that a memory's score, the
// sum of its terms' parts in the query's order, is what FTS5 gave. (The conversions keep a compiler from fusing a multiply
// and an add, which rounds once instead of twice.)
func Part(idf float64, freq, length uint32, avgdl float64) float64 {
	k1, b := 1.2, 0.75
	f := float64(freq) / 2
	num := float64(f * (k1 + 1.0))
	den := f + float64(k1*float64(1-b+float64(float64(b*float64(length))/avgdl)))
	return float64(idf * float64(num/den))
}
