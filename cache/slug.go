package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"unicode"
)

// maxSlugBase bounds the readable part of a slug, in bytes.
const maxSlugBase = 64

// slugBase is name lowercased with every run of other characters turned
// into one dash: "@Shaun" → "shaun", "Acme Corp" → "acme-corp", "[[Q3
// Plan]]" → "q3-plan". lossy reports that a letter or digit could not be
// kept (outside ASCII) or the name was cut short or had nothing to keep:
// then the base alone does not identify the name.
func slugBase(name string) (base string, lossy bool) {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			if unicode.IsLetter(r) || unicode.IsNumber(r) {
				lossy = true
			}
			dash = true
		}
	}
	base = b.String()
	if len(base) > maxSlugBase {
		base, lossy = strings.TrimRight(base[:maxSlugBase], "-"), true
	}
	if base == "" {
		base, lossy = "entity", true
	}
	return base, lossy
}

func nameHash(name string, n int) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:n]
}

// Slugs gives every entity name a file name stem, [a-z0-9-] only and
// distinct among names. A name keeps its plain base unless the base lost
// characters or another name has the same base; then a short hash of the
// exact name follows it ("shaun-1f0c3b2a"). The result depends only on the
// set of names.
func Slugs(names []string) map[string]string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	bases := make(map[string][]string)
	lossy := make(map[string]bool)
	for _, n := range sorted {
		b, l := slugBase(n)
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
		b, _ := slugBase(n)
		// A longer hash only if a suffixed slug meets another slug, which
		// takes a name built to collide.
		for size := 8; ; size += 8 {
			s := b + "-" + nameHash(n, min(size, 64))
			if !taken[s] || size >= 64 {
				out[n], taken[s] = s, true
				break
			}
		}
	}
	return out
}
