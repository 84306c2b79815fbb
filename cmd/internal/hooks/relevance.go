package hooks

import (
	"strings"

	"github.com/memsync/memsync/memsync/analysis"
)

// The relevance threshold of a prompt's context (UserPromptSubmit): a
// memory is offered with a prompt only when its text (with its why) holds
// enough of the prompt's significant terms: at least one when the prompt
// has one or two, at least two when it has more. A significant term is a
// word that is neither a stopword nor request filler, analyzed by
// memsync/analysis (see significantTerms). Ranked retrieval always returns its
// best few, however weak; this gate is what lets "Tell me a joke about
// cats" get nothing on a store that holds no cat memory. It decides only
// whether a memory the packet already chose is worth the prompt's context,
// never its rank (memsync/recall's rule).
const (
	minTermsShortPrompt = 1 // prompts with one or two significant terms
	minTermsLongPrompt  = 2 // prompts with more
)

// promptFiller are the words of a request to an assistant that carry no
// topic ("tell me", "can you help", "please show"), beyond the stopwords
// of memsync/analysis, which every index and query share.
var promptFiller = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`tell give show make get got please thanks thank hey hello hi help know
		think want need like use used using let lets let's say said see look looking find anything
		something nothing everything one two yes now new way`) {
		m[w] = true
	}
	return m
}()

// significantTerms are the prompt's distinct significant terms: its words
// less the filler, analyzed as every index analyzes them
// (memsync/analysis: stopwords out, diacritics folded, Porter stems), so
// that "cats" and "cat", "deploys" and "deploying" meet.
func significantTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range analysis.Words(text) {
		if promptFiller[w] {
			continue
		}
		t, ok := analysis.Term(w)
		if !ok || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// promptRelevance says whether a memory's text bears on a prompt.
type promptRelevance struct {
	terms []string
	need  int
}

func newPromptRelevance(prompt string) promptRelevance {
	terms := significantTerms(prompt)
	need := minTermsLongPrompt
	if len(terms) <= 2 {
		need = minTermsShortPrompt
	}
	return promptRelevance{terms: terms, need: need}
}

// relevant reports whether text holds enough of the prompt's terms; a
// prompt with no significant term finds nothing relevant.
func (r promptRelevance) relevant(text string) bool {
	if len(r.terms) == 0 {
		return false
	}
	have := map[string]bool{}
	for _, t := range significantTerms(text) {
		have[t] = true
	}
	n := 0
	for _, t := range r.terms {
		if have[t] {
			n++
			if n >= r.need {
				return true
			}
		}
	}
	return false
}
