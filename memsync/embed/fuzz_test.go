package embed

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokenize: any input tokenises without panic to ids of the vocabulary,
// surrounding whitespace changes nothing, and Embed is unit-length or zero.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "Café ﬁ 東京 🙂", "a\u0000b\u200bc", strings.Repeat("x", 101),
		"##", "[UNK] [CLS]", "\xff\xfe invalid utf8", "e\u0301\u0301\u0301"} {
		f.Add(s)
	}
	m := Default()
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := m.Tokens(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= m.rows {
				t.Fatalf("Tokens(%q): id %d out of range", s, id)
			}
		}
		if utf8.ValidString(s) {
			padded, _ := m.Tokens(" \t" + s + "\n ")
			if !equalIDs(ids, padded) {
				t.Fatalf("Tokens(%q) = %v, padded %v", s, ids, padded)
			}
		}
		v := m.Embed(s)
		if len(v) != m.Dim() {
			t.Fatalf("len %d", len(v))
		}
		if n := l2(v); n != 0 && (n < 0.9999 || n > 1.0001) {
			t.Fatalf("Embed(%q): norm %v", s, n)
		}
	})
}
