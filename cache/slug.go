package cache

import (
	"sort"

	"github.com/memsync/memsync/journal"
)

// Slugs gives every entity name a file name stem, [a-z0-9-] only and
// distinct among names (journal.EntitySlug's rule). A name keeps its plain
// base unless the base lost characters or another name has the same base;
// then a short hash of the exact name follows it ("shaun-1f0c3b2a"). The result depends only on the
// set of names.
func Slugs(names []string) map[string]string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	bases := make(map[string][]string)
	lossy := make(map[string]bool)
	for _, n := range sorted {
		b, l := journal.EntitySlugBase(n)
		if len(bases[b]) > 0 && bases[b][len(bases[b])-1] == n {
			continue // a duplicate name
		}
		bases[b] = append(bases[b], n)
		lossy[n] = l
	}
	out := make(map[string]string, len(sorted))
	taken := make(map[string]bool, len(sorted))
	var hashed []string
	for b, group := range bases {
		if len(group) == 1 && !lossy[group[0]] {
			out[group[0]] = b
			taken[b] = true
			continue
		}
		hashed = append(hashed, group...)
	}
	sort.Strings(hashed)
	for _, n := range hashed {
		// A longer hash only if a suffixed slug meets another slug, which
		// takes a name built to collide.
		for size := journal.SlugHashLen; ; size += 8 {
			s := journal.EntitySlugHashed(n, size)
			if !taken[s] || size >= 64 {
				out[n], taken[s] = s, true
				break
			}
		}
	}
	return out
}
