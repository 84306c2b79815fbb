package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
)

// maxSlugBase bounds the readable part of an entity slug, in bytes.
const maxSlugBase = 64

// SlugHashLen is how many hex digits of the name's hash EntitySlug adds to a
// base that does not identify the name.
const SlugHashLen = 8

// EntitySlugBase is the readable part of entity name's file name stem:
// name lowercased with every run of other characters turned into one dash
// ("@Shaun" → "shaun", "Acme Corp" → "acme-corp", "[[Q3 Plan]]" →
// "q3-plan"), [a-z0-9-] only, so that a page's name is the same on every
// file system (no case folding, no Unicode normalisation). lossy reports
// that a letter or digit could not be kept (outside ASCII), or the name
// was cut short or had nothing to keep: then the base alone does not
// identify the name and EntitySlug adds a hash.
func EntitySlugBase(name string) (base string, lossy bool) {
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

// EntitySlugHashed is name's base followed by the first n hex digits (at
// most 64) of the exact name's SHA-256: "zürich" → "z-rich-1f0c3b2a".
func EntitySlugHashed(name string, n int) string {
	base, _ := EntitySlugBase(name)
	sum := sha256.Sum256([]byte(name))
	return base + "-" + hex.EncodeToString(sum[:])[:min(n, 64)]
}

// EntitySlug is the one rule for an entity's file name stem, alone: its
// base when that identifies it, else the base and SlugHashLen digits of its
// hash. Names with the same base share it (compaction's entities/ pages
// fold "Acme Corp" and "acme-corp" into one); a writer that wants a page
// per distinct name tells them apart further (cache.Slugs).
func EntitySlug(name string) string {
	if base, lossy := EntitySlugBase(name); !lossy {
		return base
	}
	return EntitySlugHashed(name, SlugHashLen)
}
