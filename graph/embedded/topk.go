package embedded

import "slices"

// bestOf is the m best of all, best first, where better(a, b) means a
// ranks before b: a heap of m, not a sort of all, for m much smaller than
// all. When m covers all, all itself is sorted and returned.
func bestOf[T any](all []T, m int, better func(a, b T) bool) []T {
	order := func(a, b T) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	}
	if m >= len(all) {
		slices.SortFunc(all, order)
		return all
	}
	h := make([]T, 0, m+1)
	less := func(i, j int) bool { return better(h[j], h[i]) } // worst on top
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && less(r, l) {
				l = r
			}
			if !less(l, i) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	up := func(i int) {
		for i > 0 {
			p := (i - 1) / 2
			if !less(i, p) {
				return
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	for _, a := range all {
		if len(h) == m {
			if m == 0 || !better(a, h[0]) {
				continue
			}
			h[0] = a
			down(0)
			continue
		}
		h = append(h, a)
		up(len(h) - 1)
	}
	slices.SortFunc(h, order)
	return h
}
