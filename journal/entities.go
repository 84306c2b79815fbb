package journal

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ExtractEntities finds `@name`, `#tag` and `[[Wiki Link]]` mentions in text,
// in order of appearance. Mentions keep their sigil and lose trailing dots
// and dashes (sentence punctuation); all-digit ones (#123, an issue number)
// are not entities. Wiki links lose their brackets and any |alias.
//
// A mention's sigil must not follow a letter, digit or one of _@#/&, so that
// emails (a@b.com), URL fragments (/#top), HTML entities (&#39;) and words
// like C# are not taken for mentions; nor may it follow the last character
// of the previous mention (in "@a.@b" the dot belongs to "@a.", so "@b" is
// not a mention). The returned names are substrings of text.
//
// The scanners below give exactly the matches of the regular expressions
// this function used to run, FindAll-style (leftmost, non-overlapping):
//
//	mention: (^|[^\pL\pN_@#/&])([@#])([\pL\pN_][\pL\pN_.-]*)
//	wiki:    \[\[([^\[\]\n|]{1,200})(?:\|[^\[\]\n]*)?\]\]
//
// oracle_test.go keeps those expressions and checks the two agree.
func ExtractEntities(text string) []string {
	mentions := mentionScanner{text: text, from: len(text)}
	if strings.IndexByte(text, '@') >= 0 || strings.IndexByte(text, '#') >= 0 {
		mentions.from = 0
	}
	wikis := wikiScanner{text: text, from: len(text)}
	if strings.Contains(text, "[[") {
		wikis.from = 0
	}
	if mentions.from != 0 && wikis.from != 0 {
		return nil
	}
	var out []string
	mAt, mName := mentions.next()
	wAt, wName := wikis.next()
	for mAt >= 0 || wAt >= 0 {
		if wAt < 0 || mAt >= 0 && mAt < wAt {
			out = append(out, mName)
			mAt, mName = mentions.next()
		} else {
			out = append(out, wName)
			wAt, wName = wikis.next()
		}
	}
	return out
}

// mentionScanner yields the @name and #tag mentions of text in order.
type mentionScanner struct {
	text string
	from int // where the search for the next sigil starts
	end  int // where the previous match ended: the character before a sigil must start at or after it
}

// next returns the next mention and the offset of its sigil, or -1.
func (s *mentionScanner) next() (int, string) {
	text := s.text
	for s.from < len(text) {
		i := strings.IndexAny(text[s.from:], "@#")
		if i < 0 {
			s.from = len(text)
			break
		}
		at := s.from + i
		s.from = at + 1
		if at > 0 {
			r, size := rune(text[at-1]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeLastRuneInString(text[:at])
			}
			if at-size < s.end || isNameRune(r) || r == '@' || r == '#' || r == '/' || r == '&' {
				continue
			}
		}
		j := at + 1
		if r, size := decodeRune(text, j); j < len(text) && isNameRune(r) {
			j += size
		} else {
			continue
		}
		for j < len(text) {
			r, size := decodeRune(text, j)
			if !isNameRune(r) && r != '.' && r != '-' {
				break
			}
			j += size
		}
		s.from, s.end = j, j
		for j > at+1 && (text[j-1] == '.' || text[j-1] == '-') {
			j--
		}
		if !allDigits(text[at+1 : j]) {
			return at, text[at:j]
		}
	}
	return -1, ""
}

// decodeRune is utf8.DecodeRuneInString(text[i:]) with an ASCII fast path;
// past the end it returns utf8.RuneError.
func decodeRune(text string, i int) (rune, int) {
	if i >= len(text) {
		return utf8.RuneError, 0
	}
	if c := text[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(text[i:])
}

// isNameRune reports whether r is in [\pL\pN_].
func isNameRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// allDigits reports whether s is empty or all ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// wikiScanner yields the [[Wiki Link]] mentions of text in order.
type wikiScanner struct {
	text string
	from int // where the search for the next "[[" starts
}

// maxWikiChars is the longest link name, in characters.
const maxWikiChars = 200

// next returns the next link's name and the offset of its "[[", or -1.
func (s *wikiScanner) next() (int, string) {
	text := s.text
	for s.from < len(text) {
		i := strings.Index(text[s.from:], "[[")
		if i < 0 {
			s.from = len(text)
			break
		}
		at := s.from + i
		s.from = at + 1
		// The name is every character up to a [, ], newline or |: a
		// shorter one could be followed by neither |alias nor ]].
		j, n := at+2, 0
		for j < len(text) && n <= maxWikiChars {
			c := text[j]
			if c == '[' || c == ']' || c == '\n' || c == '|' {
				break
			}
			_, size := decodeRune(text, j)
			j += size
			n++
		}
		if n == 0 || n > maxWikiChars {
			continue
		}
		nameEnd := j
		if j < len(text) && text[j] == '|' {
			j++
			for j < len(text) && text[j] != '[' && text[j] != ']' && text[j] != '\n' {
				j++
			}
		}
		if !strings.HasPrefix(text[j:], "]]") {
			continue
		}
		s.from = j + 2
		if name := strings.TrimSpace(text[at+2 : nameEnd]); name != "" {
			return at, name
		}
	}
	return -1, ""
}

// AllEntities is the record's declared entities followed by those its text
// mentions, trimmed, without duplicates, in first-seen order.
func (r *Record) AllEntities() []string {
	seen := map[string]bool{}
	var out []string
	add := func(list []string) {
		for _, e := range list {
			e = strings.TrimSpace(e)
			if e != "" && !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	add(r.Entities)
	add(ExtractEntities(r.Text))
	return out
}
