package journal

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The patterns are compiled on first use: their Unicode classes are the
// costliest part of this package's start-up, and every `memsync append`
// process would pay for them without extracting anything.
var (
	// A mention's sigil must not follow a letter, digit or one of _@#/&, so
	// that emails (a@b.com), URL fragments (/#top), HTML entities (&#39;)
	// and words like C# are not taken for mentions.
	mentionRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(^|[^\pL\pN_@#/&])([@#])([\pL\pN_][\pL\pN_.-]*)`)
	})
	wikiRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[\[([^\[\]\n|]{1,200})(?:\|[^\[\]\n]*)?\]\]`)
	})
)

// ExtractEntities finds `@name`, `#tag` and `[[Wiki Link]]` mentions in text,
// in order of appearance. Mentions keep their sigil and lose trailing dots
// and dashes (sentence punctuation); all-digit ones (#123, an issue number)
// are not entities. Wiki links lose their brackets and any |alias.
func ExtractEntities(text string) []string {
	type hit struct {
		at   int
		name string
	}
	var hits []hit
	for _, m := range mentionRE().FindAllStringSubmatchIndex(text, -1) {
		name := strings.TrimRight(text[m[6]:m[7]], ".-")
		if name != "" && strings.Trim(name, "0123456789") != "" {
			hits = append(hits, hit{m[4], text[m[4]:m[5]] + name})
		}
	}
	for _, m := range wikiRE().FindAllStringSubmatchIndex(text, -1) {
		if name := strings.TrimSpace(text[m[2]:m[3]]); name != "" {
			hits = append(hits, hit{m[0], name})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.name)
	}
	if len(out) == 0 {
		return nil
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
