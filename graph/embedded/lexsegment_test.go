package embedded

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/graph/embedded/postings"
)

// BenchmarkLexSegmentAdd builds the postings of one bulk batch (8,000
// memories of about 30 analyzed terms from a Zipf vocabulary of 4,000, and
// a few meta terms), as the indexer does for every job.
func BenchmarkLexSegmentAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 3999)
	docs := make([][2]string, 8000)
	for i := range docs {
		var t, m []string
		for range 20 + r.IntN(20) {
			t = append(t, fmt.Sprintf("w%d", z.Uint64()))
		}
		for range r.IntN(4) {
			m = append(m, fmt.Sprintf("e%d", z.Uint64()))
		}
		docs[i] = [2]string{strings.Join(t, " "), strings.Join(m, " ")}
	}
	b.ReportAllocs()
	for b.Loop() {
		s := newLexSegment()
		for i, d := range docs {
			s.add(int64(i+1), uint32(i%41), d[0], d[1])
		}
	}
}

// TestLexSegmentAdd: each term's list gets one posting per memory that
// holds it, its weight the text's occurrences twice and the meta's once,
// every memory's length its terms plus one; a memory with no term gets
// the empty term's posting, of weight 0.
func TestLexSegmentAdd(t *testing.T) {
	s := newLexSegment()
	s.add(7, 1, "red fox red", "fox")
	s.add(9, 2, "", "")
	s.add(12, 1, "fox", "")
	want := map[string][]postings.Posting{
		"red":        {{ID: 7, Group: 1, Freq: 4, Length: 5}},
		"fox":        {{ID: 7, Group: 1, Freq: 3, Length: 5}, {ID: 12, Group: 1, Freq: 2, Length: 2}},
		lexEmptyTerm: {{ID: 9, Group: 2, Freq: 0, Length: 1}},
	}
	if len(s.lists) != len(want) {
		t.Fatalf("%d terms, want %d", len(s.lists), len(want))
	}
	for term, w := range want {
		l := s.lists[term]
		if l == nil {
			t.Fatalf("no list for %q", term)
		}
		got, err := postings.Decode(l.list)
		if err != nil || !slices.Equal(got, w) || l.n != len(w) {
			t.Errorf("%q: %+v (%d, %v), want %+v", term, got, l.n, err, w)
		}
	}
	if s.first != 7 || s.last != 12 || s.docs != 3 || s.tokens != 8 {
		t.Errorf("segment first %d last %d docs %d tokens %d, want 7 12 3 8", s.first, s.last, s.docs, s.tokens)
	}
}
