package journal

import (
	"regexp"
	"strings"
)

var (
	mentionRE = regexp.MustCompile(`(^|[^\pL\pN_@#/&])([@#])([\pL\pN_][\pL\pN_.-]*)`)
	wikiRE    = regexp.MustCompile(`\[\[([^\[\]\n|]{1,200})(?:\|[^\[\]\n]*)?\]\]`)
)

// ExtractEntities finds `@name`, `#tag` and `[[Wiki Link]]` mentions in text,
// in order of first appearance. Mentions keep their sigil; wiki links do not.
func ExtractEntities(text string) []string {
	var out []string
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		name := strings.TrimRight(m[3], ".-")
		if name != "" {
			out = append(out, m[2]+name)
		}
	}
	for _, m := range wikiRE.FindAllStringSubmatch(text, -1) {
		if name := strings.TrimSpace(m[1]); name != "" {
			out = append(out, name)
		}
	}
	return out
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
