package importer

import (
	"regexp"
	"slices"
	"strings"

	"github.com/memsync/memsync/journal"
)

// Tiered memory directories (design note 002), the source being the
// memory/ directory:
//
//	core/*.md                  tier core; preferences.md → preference,
//	                           procedures.md → procedure, else fact
//	working/projects/*.md      tier working, fact
//	working/threads/*.md, working/pending.md   tier working, task
//	working/daily/*.md         tier working, observation (dated by name)
//	learning/decisions/        tier learning, decision
//	learning/corrections/      tier learning, correction
//	learning/insights/         tier learning, reflection
//	learning/outcomes/         tier learning, outcome
//
// core/ and working/ files are lists: every list item and paragraph is a
// memory (identity: file and content). A learning/ file is one entry, keyed
// by its path (an edit supersedes the previous import), or, when it has
// "## " sections, one entry per section. Frontmatter confidence
// (low|medium|high), why, and created/date are kept; a "Why this
// matters:" line becomes why. Dates: frontmatter, else the file name's
// YYYY-MM-DD, else the file's modification time (not part of the identity).

var learningKinds = map[string]journal.Kind{
	"decisions": journal.KindDecision, "corrections": journal.KindCorrection,
	"insights": journal.KindReflection, "outcomes": journal.KindOutcome,
}

// tierOf is the tier and default kind of a file of the tiers layout; ok
// false for a file outside it.
func tierOf(rel string) (tier string, kind journal.Kind, ok bool) {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 || !strings.HasSuffix(rel, ".md") {
		return "", "", false
	}
	name := strings.ToLower(strings.TrimSuffix(parts[len(parts)-1], ".md"))
	switch parts[0] {
	case "core":
		return "core", kindOf(name, journal.KindFact), true
	case "working":
		switch {
		case len(parts) == 2 && name == "pending", len(parts) > 2 && parts[1] == "threads":
			return "working", journal.KindTask, true
		case len(parts) > 2 && parts[1] == "daily":
			return "working", journal.KindObservation, true
		}
		return "working", journal.KindFact, true
	case "learning":
		if k, ok := learningKinds[parts[1]]; ok && len(parts) > 2 {
			return "learning", k, true
		}
	}
	return "", "", false
}

func isTiersFile(rel string) bool { _, _, ok := tierOf(rel); return ok }

func parseTiers(root string, out *Source) error {
	files, err := readFiles(root, isTiersFile, out)
	if err != nil {
		return err
	}
	for _, f := range files {
		tiersFile(f, out)
	}
	return nil
}

var whyLine = regexp.MustCompile(`(?im)^\**\s*why(?: this matters)?\s*\**\s*:\s*\**\s*(.+)$`)

// tiersFile reads one file of the tiers layout.
func tiersFile(f sourceFile, out *Source) {
	tier, kind, ok := tierOf(f.rel)
	if !ok {
		return
	}
	fm, body, first, err := frontmatter(f.data)
	if err != nil {
		problemAt(out, f.rel, err)
		return
	}
	base := Item{File: f.rel}
	br := &base.Record
	br.Tier, br.Kind = tier, kind
	if c := stringValue(fm["confidence"]); c != "" {
		if slices.Contains(journal.Confidences, c) {
			br.Confidence = c
		} else {
			out.problem(f.rel, fmLine(f.data, "confidence"), "confidence: %q is not one of low|medium|high (imported without it)", c)
		}
	}
	br.Why = stringValue(fm["why"])
	br.Tags = stringsValue(fm["tags"])
	ts, dated, ok := createdValue(fm, f, out)
	if !ok {
		return
	}
	if dated {
		br.TS = ts
	}
	if !dated {
		if d, ok := dayOf(f.rel); ok {
			br.TS, dated = d, true
		} else {
			br.TS, base.Undated = f.mod, true
		}
	}
	add := func(line int, text, section string, keyed bool) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		it := base
		it.Line = line
		r := &it.Record
		r.Tags = slices.Clone(base.Record.Tags)
		if m := whyLine.FindStringSubmatch(text); m != nil && r.Why == "" {
			r.Why = strings.TrimSpace(strings.Trim(m[1], "* "))
		}
		if tier == "working" && kind == journal.KindObservation {
			r.TS, text = atClock(r.TS, text)
		}
		r.Text = text
		it.Key = f.rel
		if keyed {
			it.Keyed = true
			if section != "" {
				it.Key = f.rel + "#" + section
			}
		}
		r.Tags = appendUnique(r.Tags, hashtags(text)...)
		it.Links = wikiLinks(text)
		out.add(&it)
	}
	if tier != "learning" {
		for _, b := range blocks(body, first) {
			add(b.line, b.text, "", false)
		}
		return
	}
	// A learning file: one entry, or one per "## " section.
	lines := strings.Split(body, "\n")
	start, section, hasSections := 0, "", false
	for _, l := range lines {
		if headingLevel(l) == 2 {
			hasSections = true
			break
		}
	}
	if !hasSections {
		add(first, body, "", true)
		return
	}
	var buf []string
	flush := func() {
		if section != "" {
			add(first+start, section+"\n"+strings.Join(buf, "\n"), section, true)
		}
	}
	for i, l := range lines {
		if headingLevel(l) == 2 {
			flush()
			start, section, buf = i, strings.TrimSpace(strings.TrimLeft(l, "#")), nil
			continue
		}
		buf = append(buf, l)
	}
	flush()
}
