// Package analysis is memsync's one text analyzer: how a memory's text and a
// search query become the terms that recall compares. Every search path —
// the embedded store's index and queries, Neo4j's index and queries, and
// the offline scan of the journals — calls it, so a query means the same
// thing everywhere.
//
// Words are runs of Unicode letters, digits and combining marks (anything
// else separates words, so nothing typed is ever query syntax), lowercased.
// English stopwords, question words included, are dropped; what is left is
// reduced to its Porter stem ("joined" and "joining" both become "join").
// A term is never empty and never holds a space.
package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQueryTerms bounds the distinct terms of one query.
const MaxQueryTerms = 64

// Words splits text into its lowercased words, stopwords included.
func Words(text string) []string {
	words := strings.FieldsFunc(text, notWordRune)
	for i, w := range words {
		words[i] = strings.ToLower(w)
	}
	return words
}

// Terms is the analyzed form of text: its words without stopwords, stemmed,
// in order, repeats kept (a document's term frequencies).
func Terms(text string) []string { return AppendTerms(nil, text) }

// AppendTerms appends the terms of text to dst.
func AppendTerms(dst []string, text string) []string {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !WordRune(r) {
			i += size
			continue
		}
		start := i
		for i += size; i < len(text); i += size {
			if r, size = utf8.DecodeRuneInString(text[i:]); !WordRune(r) {
				break
			}
		}
		if t, ok := Term(text[start:i]); ok {
			dst = append(dst, t)
		}
	}
	return dst
}

// Term analyzes one word (a run of word runes): lowercased, its diacritics
// removed and stemmed, or false when it is a stopword (or only marks).
func Term(word string) (string, bool) {
	w := fold(lower(word))
	if w == "" || stopwords[w] {
		return "", false
	}
	return Stem(w), true
}

// fold removes diacritics from a lowercase word: combining marks are
// dropped and the precomposed Latin letters are written as their base
// letter ("café" and "cafe\u0301" both become "cafe").
func fold(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	var b strings.Builder
	b.Grow(len(w))
	for _, r := range w {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r >= 0xe0 && r < 0x180:
			if base := latinBase[r-0xe0]; base != '.' {
				b.WriteByte(base)
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// latinBase is the base letter of U+00E0..U+017F ('.': none, kept as is):
// the lowercase letters of Latin-1 and Latin Extended-A.
var latinBase = []byte("" +
	"aaaaaa.ceeeeiiii.nooooo.ouuuuy.y" + // U+00E0
	"aaaaaaccccccccddddeeeeeeeeeegggg" + // U+0100
	"gggghhhhiiiiiiiiii..jjkkklllllll" + // U+0120
	"lllnnnnnnnnnoooooo..rrrrrrssssss" + // U+0140
	"ssttttttuuuuuuuuuuuuwwyyyzzzzzzs") // U+0160

// lower is strings.ToLower without an allocation for lowercase ASCII.
func lower(w string) string {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return strings.ToLower(w)
		}
	}
	return w
}

// QueryTerms are the distinct terms of a query, in first-seen order, at
// most MaxQueryTerms. A query of stopwords only has none, and finds nothing.
func QueryTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range Terms(text) {
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == MaxQueryTerms {
			break
		}
	}
	return out
}

// Holds is the set of terms that texts hold, analyzed as the lexical
// indexes analyze them (Terms): bit i for terms[i], of the first 64 (a
// query has at most MaxQueryTerms). Over a memory's text it is which query
// terms the text says; over its tags or entities, which they name.
func Holds(terms []string, texts ...string) uint64 {
	terms = terms[:min(len(terms), 64)]
	var m uint64
	for _, text := range texts {
		for _, t := range Terms(text) {
			for i, qt := range terms {
				if t == qt {
					m |= 1 << i
				}
			}
		}
	}
	return m
}

// Text is the analyzed form of text as one string: its terms joined by
// single spaces. Indexes that store it split it on spaces and nothing else
// (Neo4j's whitespace analyzer, SQLite's ascii tokenizer on lowercase terms).
func Text(text string) string { return string(AppendText(nil, text)) }

// AppendText appends Text(text) to dst. It is what indexing runs on every
// record, so ASCII words are lowercased and stemmed in dst itself.
func AppendText(dst []byte, text string) []byte { return appendText(dst, text, nil) }

// Analyzer is AppendText with a memory of the stems it computed: words
// repeat (a store's vocabulary is small beside its text), and the Porter
// steps cost more than a map lookup. Its output is AppendText's, byte for
// byte. One goroutine uses an Analyzer at a time.
type Analyzer struct {
	stems map[string]string
}

// analyzerStems bounds an Analyzer's memory: at that many stems it forgets
// them all and starts again (a few MB at most).
const analyzerStems = 1 << 16

// AppendText appends Text(text) to dst, as the package's AppendText.
func (a *Analyzer) AppendText(dst []byte, text string) []byte {
	if a.stems == nil {
		a.stems = make(map[string]string)
	}
	return appendText(dst, text, a.stems)
}

func appendText(dst []byte, text string, stems map[string]string) []byte {
	first := true
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !WordRune(r) {
			i += size
			continue
		}
		start, ascii := i, r < utf8.RuneSelf
		for i += size; i < len(text); i += size {
			if r, size = utf8.DecodeRuneInString(text[i:]); !WordRune(r) {
				break
			}
			ascii = ascii && r < utf8.RuneSelf
		}
		mark := len(dst)
		if !first {
			dst = append(dst, ' ')
		}
		at := len(dst)
		if ascii {
			for _, c := range []byte(text[start:i]) {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				dst = append(dst, c)
			}
		} else {
			dst = append(dst, fold(strings.ToLower(text[start:i]))...)
		}
		word := dst[at:]
		if len(word) == 0 || stopwords[string(word)] {
			dst = dst[:mark]
			continue
		}
		if stemmable(word) {
			if stems == nil {
				dst = append(dst[:at], stem(word)...)
			} else if st, ok := stems[string(word)]; ok {
				dst = append(dst[:at], st...)
			} else {
				w := string(word)
				dst = append(dst[:at], stem(word)...)
				if len(stems) >= analyzerStems {
					clear(stems)
				}
				stems[w] = string(dst[at:])
			}
		}
		first = false
	}
	return dst
}

// WordRune reports whether r belongs to a word.
func WordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

func notWordRune(r rune) bool { return !WordRune(r) }

// Stopword reports whether the lowercased word w is dropped by the analyzer.
func Stopword(w string) bool { return stopwords[w] }

// stopwords: English function words (NLTK's list, with the pieces that
// splitting contractions at the apostrophe leaves), question words, and
// the auxiliaries questions are built from. They say how a sentence is put,
// not what it is about, and in a question they would otherwise outweigh
// the words that name the answer.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
		she her hers herself it its itself they them their theirs themselves
		what which who whom whose this that these those am is are was were be been being
		have has had having do does did doing a an the and but if or because as until while
		of at by for with about against between into through during before after above below
		to from up down in out on off over under again further then once here there
		when where why how all any both each few more most other some such no nor not only own
		same so than too very s t can will just don should now d ll m o re ve y ain aren couldn
		didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
		would could might must shall may also ever yet whether`) {
		m[w] = true
	}
	return m
}()
