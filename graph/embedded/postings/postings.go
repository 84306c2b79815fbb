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

// Remove is list without the posting of id, its new last id, and whether
// list held one.
func Remove(list []byte, id int64) (out []byte, last int64, ok bool, err error) {
	var prev int64
	r := NewReader(list)
	for p, more := r.Next(); more; p, more = r.Next() {
		if p.ID == id {
			ok = true
			continue
		}
		out = Append(out, prev, p)
		prev = p.ID
	}
	return out, prev, ok, r.Err()
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

// Entry is one term's list in a block.
type Entry struct {
	Term string
	N    int   // postings in List
	Last int64 // the id of List's last posting
	List []byte
}

// A block packs the lists of several terms of one segment, in term order,
// so that a segment is a few rows rather than one per term: each entry is
// the term's length and bytes, N, Last and the list's length and bytes,
// as unsigned varints where they are numbers.

// AppendEntry appends e to block.
func AppendEntry(block []byte, e Entry) []byte {
	block = binary.AppendUvarint(block, uint64(len(e.Term)))
	block = append(block, e.Term...)
	block = binary.AppendUvarint(block, uint64(e.N))
	block = binary.AppendUvarint(block, uint64(e.Last))
	block = binary.AppendUvarint(block, uint64(len(e.List)))
	return append(block, e.List...)
}

// BlockReader reads a block's entries; their Term and List alias the block.
type BlockReader struct {
	b   []byte
	err error
}

// NewBlockReader reads block.
func NewBlockReader(block []byte) *BlockReader { return &BlockReader{b: block} }

// Next returns the next entry, false at the end or on a corrupt block (Err).
func (r *BlockReader) Next() (Entry, bool) {
	if len(r.b) == 0 || r.err != nil {
		return Entry{}, false
	}
	field := func() []byte {
		n, k := binary.Uvarint(r.b)
		if k <= 0 || n > uint64(len(r.b)-k) {
			r.err = fmt.Errorf("%w: block entry overruns the block", ErrCorrupt)
			return nil
		}
		f := r.b[k : k+int(n)]
		r.b = r.b[k+int(n):]
		return f
	}
	num := func() uint64 {
		n, k := binary.Uvarint(r.b)
		if k <= 0 {
			r.err = fmt.Errorf("%w: truncated varint in a block", ErrCorrupt)
			return 0
		}
		r.b = r.b[k:]
		return n
	}
	var e Entry
	term := field()
	n, last := num(), num()
	list := field()
	if r.err != nil {
		return Entry{}, false
	}
	if n > math.MaxInt32 || last > math.MaxInt64 {
		r.err = fmt.Errorf("%w: block entry count out of range", ErrCorrupt)
		return Entry{}, false
	}
	e.Term, e.N, e.Last, e.List = string(term), int(n), int64(last), list
	return e, true
}

// Err is why Next stopped early, nil at a clean end.
func (r *BlockReader) Err() error { return r.err }

// Find is the entry of term in block, false when the block holds none.
func Find(block []byte, term string) (Entry, bool, error) {
	r := NewBlockReader(block)
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		if e.Term == term {
			return e, true, nil
		}
		if e.Term > term {
			break
		}
	}
	return Entry{}, false, r.Err()
}

// Join is one entry holding the lists of entries, whose id ranges follow
// one another, in that order: the first list's bytes, then each next
// list's with only its first posting's id delta written again. What it does
// not re-encode it does not check: a list's Last must be its last id. One
// entry is returned as it is (its List not copied).
func Join(term string, entries []Entry) (Entry, error) {
	if len(entries) == 1 {
		e := entries[0] // nothing to join: its list as is
		e.Term = term
		return e, nil
	}
	size := 0
	for _, e := range entries {
		size += len(e.List)
	}
	out := Entry{Term: term, List: make([]byte, 0, size+binary.MaxVarintLen64)}
	for _, e := range entries {
		if len(e.List) == 0 {
			continue
		}
		first, k := binary.Uvarint(e.List)
		if k <= 0 || first > math.MaxInt64 {
			return Entry{}, fmt.Errorf("%w: term %q: bad first id", ErrCorrupt, term)
		}
		if int64(first) <= out.Last || e.Last < int64(first) {
			return Entry{}, fmt.Errorf("%w: term %q: ids out of order across lists (%d after %d)", ErrCorrupt, term, first, out.Last)
		}
		out.List = binary.AppendUvarint(out.List, first-uint64(out.Last))
		out.List = append(out.List, e.List[k:]...)
		out.N += e.N
		out.Last = e.Last
	}
	return out, nil
}
