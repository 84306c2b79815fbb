package importer

import (
	"path"
	"regexp"
	"strings"

	"github.com/memsync/memsync/journal"
)

// Basic Memory / Obsidian notes: markdown files with optional frontmatter
// (title, type, tags, permalink), observation lines "- [category] text
// #tag (context)" and relation lines "- relation_type [[Target]]".
//
//	a note        → one memory keyed by its permalink (an edit supersedes
//	                the previous import): its title, its prose and its
//	                relation lines; kind from type (else fact); tags
//	relations     → links of the note's memory to the notes named (by
//	                title, permalink or path)
//	observations  → one memory each, keyed by the note's permalink and its
//	                place among the note's observations (permalink#3,
//	                matched by content first, places.go: an insertion
//	                writes one record, an edit supersedes, an observation
//	                gone from a note that is still there is retired); kind
//	                from the category (decision, preference, technique →
//	                procedure, insight/idea → reflection, else
//	                observation); the category and #tags as tags; the
//	                note's title as entity; [[links]] in it as links
//
// Dates: frontmatter created or date, else the file's modification time
// (not part of the identity).

var (
	observationLine = regexp.MustCompile(`^\s*[-*]\s+\[([^\[\]]+)\]\s+(.+?)\s*$`)
	relationLine    = regexp.MustCompile(`^\s*[-*]\s+([\p{L}_][\p{L}\p{N}_-]*)\s+\[\[([^\[\]]+)\]\]`)
	checkbox        = regexp.MustCompile(`^\s*[-*]\s+\[[ xX]\]\s`)
)

func isNote(rel string) bool { return strings.HasSuffix(strings.ToLower(rel), ".md") }

func parseBasicMemory(root string, out *Source) error {
	// One note in memory at a time: only its items are kept.
	return walkFiles(root, isNote, out, func(f sourceFile) { noteFile(f, out) })
}

// slug is a permalink as Basic Memory derives one: lower case, words
// joined by "-".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '/' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
	}
	return b.String()
}

// noteFile reads one note.
func noteFile(f sourceFile, out *Source) {
	fm, body, first, err := frontmatter(f.data)
	if err != nil {
		problemAt(out, f.rel, err)
		return
	}
	stem := strings.TrimSuffix(f.rel, path.Ext(f.rel))
	title := stringValue(fm["title"])
	if title == "" {
		title = path.Base(stem)
	}
	permalink := stringValue(fm["permalink"])
	if permalink == "" {
		permalink = slug(stem)
	}
	note := Item{Key: permalink, Keyed: true, Names: []string{title, permalink, stem, path.Base(stem)}, File: f.rel, Line: 1}
	nr := &note.Record
	nr.Kind = kindOf(stringValue(fm["type"]), journal.KindFact)
	nr.Tags = stringsValue(fm["tags"])
	nr.Entities = []string{title}
	ts, dated, ok := createdValue(fm, f, out)
	if !ok {
		return
	}
	if dated {
		nr.TS = ts
	}
	if !dated {
		nr.TS, note.Undated = f.mod, true
	}
	prose := []string{title}
	place := 0
	for i, line := range strings.Split(body, "\n") {
		n := first + i
		line = strings.TrimRight(line, "\r")
		if m := observationLine.FindStringSubmatch(line); m != nil && !checkbox.MatchString(line) {
			category, text := strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
			place++
			obs := Item{Key: permalink + "#" + itoa(place), Keyed: true, LegacyKey: permalink, File: f.rel, Line: n, Undated: note.Undated}
			r := &obs.Record
			r.TS, r.Text = nr.TS, text
			r.Kind = kindOf(category, journal.KindObservation)
			r.Tags = appendUnique([]string{strings.ToLower(category)}, hashtags(text)...)
			r.Entities = []string{title}
			obs.Links = wikiLinks(text)
			out.add(&obs)
			continue
		}
		if m := relationLine.FindStringSubmatch(line); m != nil {
			note.Links = appendUnique(note.Links, strings.TrimSpace(m[2]))
		} else {
			note.Links = appendUnique(note.Links, wikiLinks(line)...)
		}
		if t := strings.TrimSpace(line); t != "" && strings.TrimSpace(strings.TrimLeft(t, "#")) != title &&
			t != "## Observations" && t != "## Relations" {
			prose = append(prose, t)
		}
	}
	nr.Text = strings.Join(prose, "\n")
	out.add(&note)
}
