package importer

import (
	"path"
	"regexp"
	"strings"

	"github.com/memsync/memsync/journal"
)

// OpenClaw workspace memory: MEMORY.md, the curated long-term memory in
// sections, and the daily logs memory/YYYY-MM-DD.md. Every list item and
// paragraph is one memory; its section names its kind (Preferences →
// preference, Decisions → decision, Lessons → reflection, ...: kindOf),
// else a MEMORY.md entry is a fact and a daily-log entry an observation.
// Daily entries are dated by their file (and an HH:MM they start with);
// MEMORY.md gives no dates, so its entries carry the file's modification
// time, which is not part of their identity.
//
// Each entry is keyed by its file, its section and its place in the
// section (MEMORY.md#Preferences#2, memory/2026-03-01.md##1 at the top):
// an edited entry supersedes its earlier import, and an entry gone from a
// section that is still there is retired (follow.go).

// openClawMarkup is what OpenClaw's memory promote writes around a
// promoted entry for itself: HTML comments (the promotion key, trigger
// words, a declared importance, which is never imported: SPEC §3) and the
// [score=... source=...] annotation.
var openClawMarkup = regexp.MustCompile(`<!--[\s\S]*?-->|\s*\[score=[^\]]*\]`)

func isOpenClawFile(rel string) bool {
	if strings.EqualFold(rel, "MEMORY.md") {
		return true
	}
	dir, name := path.Split(rel)
	_, dated := dayOf(name)
	return dir == "memory/" && dated && strings.HasSuffix(name, ".md")
}

func parseOpenClaw(root string, out *Source) error {
	return walkFiles(root, isOpenClawFile, out, func(f sourceFile) { openClawFile(f, out) })
}

// openClawFile reads one MEMORY.md or daily log.
func openClawFile(f sourceFile, out *Source) {
	_, body, first, err := frontmatter(f.data)
	if err != nil {
		problemAt(out, f.rel, err)
		return
	}
	day, daily := dayOf(f.rel)
	daily = daily && !strings.EqualFold(path.Base(f.rel), "MEMORY.md")
	places := map[string]int{}
	for _, b := range blocks(body, first) {
		b.text = strings.TrimSpace(openClawMarkup.ReplaceAllString(b.text, ""))
		if b.text == "" {
			continue // a comment line of OpenClaw's own
		}
		var path []string
		for _, h := range b.headings {
			if h != "" {
				path = append(path, h)
			}
		}
		section := f.rel + "#" + strings.Join(path, " > ")
		places[section]++
		it := Item{Key: section + "#" + itoa(places[section]), Keyed: true, LegacyKey: f.rel, File: f.rel, Line: b.line}
		r := &it.Record
		r.Text = b.text
		if daily {
			r.TS, r.Text = atClock(day, b.text)
			r.Kind = kindOf(b.section(), journal.KindObservation)
		} else {
			r.TS, it.Undated = f.mod, true
			r.Kind = kindOf(b.section(), journal.KindFact)
		}
		r.Tags = hashtags(r.Text)
		if s := b.section(); s != "" {
			r.Tags = appendUnique(r.Tags, strings.ToLower(s))
		}
		out.add(&it)
	}
}
