package main

import (
	"strings"
	"unicode"
)

// The relevance threshold of a prompt's context (UserPromptSubmit): a
// memory is offered with a prompt only when its text (with its why) holds
// enough of the prompt's significant terms: at least one when the prompt
// has one or two, at least two when it has more. A significant term is a
// word of three or more letters or digits that is not a stop word, folded
// to lower case with a plural or -ing/-ed ending cut ("cats" and "cat",
// "deploys" and "deploying" meet). Ranked retrieval always returns its
// best few, however weak; this gate is what lets "Tell me a joke about
// cats" get nothing on a store that holds no cat memory. It decides only
// whether a memory the packet already chose is worth the prompt's context,
// never its rank (memsync/recall's rule).
const (
	minTermsShortPrompt = 1 // prompts with one or two significant terms
	minTermsLongPrompt  = 2 // prompts with more
)

// promptStopWords are words that carry no topic.
var promptStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours all any can had has have her his him
		was were will would should could what which who whom whose when where why how this that these those
		there their them they then than into onto from with without about above below over under again once
		here out off own same some such only very just also too more most other each few both does did doing done
		its it's our ours ourselves she shes he hes i'm i've we we're let lets let's tell give show make get got
		please thanks thank hey hello know think want need like use used using one two yes now new way may might
		must shall say said see look looking find tell me my mine any anything something nothing everything`) {
		m[w] = true
	}
	return m
}()

// significantTerms are the prompt's distinct significant terms, stemmed.
func significantTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		w = strings.Trim(w, "'")
		if len([]rune(w)) < 3 || promptStopWords[w] {
			continue
		}
		w = stemTerm(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// stemTerm cuts a plural or -ing/-ed ending, so that a word and its
// inflections meet; never below three letters.
func stemTerm(w string) string {
	for _, suf := range []string{"ies", "ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			if suf == "ies" {
				return w[:len(w)-3] + "y"
			}
			return w[:len(w)-len(suf)]
		}
	}
	return w
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
