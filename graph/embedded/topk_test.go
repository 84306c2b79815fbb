package embedded

import (
	"math/rand"
	"slices"
	"testing"
)

// TestBestOf: the m best, best first, equal to sorting everything and
// keeping the first m, for every m from none to more than all.
func TestBestOf(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	all := make([]int, 300)
	for i := range all {
		all[i] = r.Intn(100) // many ties
	}
	want := slices.Sorted(slices.Values(all))
	for _, m := range []int{0, 1, 2, 7, 64, 299, 300, 301} {
		got := bestOf(slices.Clone(all), m, func(a, b int) bool { return a < b })
		if !slices.Equal(got, want[:min(m, len(want))]) {
			t.Fatalf("bestOf(m=%d) = %v, want %v", m, got, want[:min(m, len(want))])
		}
	}
}
