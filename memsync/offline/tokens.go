package offline

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into lowercased runs of letters, digits and combining
// marks: the words that search compares. Anything else separates words, so
// no character of a query is ever syntax.
func Tokens(text string) []string {
	words := strings.FieldsFunc(text, notWordRune)
	for i, w := range words {
		words[i] = strings.ToLower(w)
	}
	return words
}

func notWordRune(r rune) bool { return !wordRune(r) }

func wordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r)
}

// queryTerms are the distinct tokens of text, in first-seen order, at most
// MaxQueryTokens of them.
func queryTerms(text string) []string {
	var out []string
	for _, w := range Tokens(text) {
		if !slices.Contains(out, w) {
			out = append(out, w)
			if len(out) == MaxQueryTokens {
				break
			}
		}
	}
	return out
}

// termCounter counts the tokens of texts and how often each query term
// occurs among them, without allocating for ASCII words.
type termCounter struct {
	index  map[string]int // term → position in terms
	maxLen int            // longest term, in bytes
}

func newTermCounter(terms []string) *termCounter {
	c := &termCounter{index: make(map[string]int, len(terms))}
	for i, t := range terms {
		c.index[t] = i
		c.maxLen = max(c.maxLen, len(t))
	}
	return c
}

// count adds weight to *dl for every token of text and to tf[i] for every
// occurrence of term i. tf is allocated on the first match.
func (c *termCounter) count(text []byte, weight float64, dl *float64, tf *[]float64) {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		if !wordRune(r) {
			i += size
			continue
		}
		start := i
		for i += size; i < len(text); i += size {
			if r, size = utf8.DecodeRune(text[i:]); !wordRune(r) {
				break
			}
		}
		*dl += weight
		if t, ok := c.lookup(text[start:i]); ok {
			if *tf == nil {
				*tf = make([]float64, len(c.index))
			}
			(*tf)[t] += weight
		}
	}
}

// lookup finds word, lowercased, among the terms.
func (c *termCounter) lookup(word []byte) (int, bool) {
	var buf [64]byte
	if len(word) > len(buf) {
		t, ok := c.index[strings.ToLower(string(word))]
		return t, ok
	}
	for k, b := range word {
		switch {
		case b >= utf8.RuneSelf:
			// Lowercasing may change the length of non-ASCII words.
			t, ok := c.index[strings.ToLower(string(word))]
			return t, ok
		case 'A' <= b && b <= 'Z':
			b += 'a' - 'A'
		}
		buf[k] = b
	}
	if len(word) > c.maxLen {
		return 0, false
	}
	t, ok := c.index[string(buf[:len(word)])]
	return t, ok
}
