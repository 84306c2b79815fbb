package offline

import (
	"unicode/utf8"

	"github.com/memsync/memsync/memsync/analysis"
)

// Tokens are the terms of text that search compares: package analysis's,
// the same on every search path. No character of a query is ever syntax.
func Tokens(text string) []string { return analysis.Terms(text) }

// termCounter counts the terms of texts and how often each query term
// occurs among them. Each distinct word is analyzed once per search.
type termCounter struct {
	index map[string]int // term → position in terms
	words map[string]int // word as written → its query term, notTerm or stopword
}

const (
	notTerm  = -1 // a term, but not one of the query's
	stopword = -2 // no term at all
)

func newTermCounter(terms []string) *termCounter {
	c := &termCounter{index: make(map[string]int, len(terms)), words: map[string]int{}}
	for i, t := range terms {
		c.index[t] = i
	}
	return c
}

// count adds weight to *dl for every term of text and to tf[i] for every
// occurrence of query term i. tf is allocated on the first match.
func (c *termCounter) count(text []byte, weight float64, dl *float64, tf *[]float64) {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		if !analysis.WordRune(r) {
			i += size
			continue
		}
		start := i
		for i += size; i < len(text); i += size {
			if r, size = utf8.DecodeRune(text[i:]); !analysis.WordRune(r) {
				break
			}
		}
		t := c.lookup(text[start:i])
		if t == stopword {
			continue
		}
		*dl += weight
		if t >= 0 {
			if *tf == nil {
				*tf = make([]float64, len(c.index))
			}
			(*tf)[t] += weight
		}
	}
}

// lookup analyzes word (remembering the answer) and finds its term among
// the query's.
func (c *termCounter) lookup(word []byte) int {
	if t, ok := c.words[string(word)]; ok {
		return t
	}
	t := stopword
	if term, ok := analysis.Term(string(word)); ok {
		t = notTerm
		if i, ok := c.index[term]; ok {
			t = i
		}
	}
	if len(c.words) < maxRememberedWords {
		c.words[string(word)] = t
	}
	return t
}

// maxRememberedWords bounds the words a search remembers the analysis of.
const maxRememberedWords = 1 << 18
