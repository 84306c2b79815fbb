package importer

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
)

// The earned-importance vault (design note 000): vault/obs-YYYY-MM-DD-NNN.md
// and archive/obs-…md, markdown with YAML frontmatter. One observation is
// one memory, keyed by its id (the file name without .md, so a move to the
// archive or an edit is a new version that supersedes the old):
//
//	tags      → tags
//	created   → ts (midnight UTC, plus NNN seconds to keep the day's order)
//	max_age   → max_age (kept; a value memsync does not know is reported)
//	source    → source.actor (the agent that wrote it)
//	backlinks → links (to the observations named; they earn importance)
//	verified  → true: the record's source_verified metadata (no feedback: only a person's flag through memsync counts)
//	importance, refs, ref_by → not imported: importance is earned, and
//	            refs/ref_by are the backlinks seen from the other side
//	archive/  → tag "archived"; promoted: true → tag "promoted"

var obsName = regexp.MustCompile(`^obs-(\d{4}-\d{2}-\d{2})-(\d{1,4})\.md$`)

func isVaultFile(rel string) bool {
	dir, name := path.Split(rel)
	return obsName.MatchString(name) && (dir == "" || dir == "vault/" || dir == "archive/")
}

func parseVault(root string, out *Source) error {
	files, err := readFiles(root, isVaultFile, out)
	if err != nil {
		return err
	}
	for _, f := range files {
		vaultFile(f, out)
	}
	return nil
}

// fmLine is the line of key in a file's frontmatter, 1 when not found.
func fmLine(data, key string) int {
	for i, l := range strings.Split(data, "\n") {
		if strings.HasPrefix(l, key+":") {
			return i + 1
		}
		if i > 0 && strings.TrimRight(l, "\r") == "---" {
			break
		}
	}
	return 1
}

// vaultFile reads one observation.
func vaultFile(f sourceFile, out *Source) {
	fm, body, first, err := frontmatter(f.data)
	if err != nil {
		problemAt(out, f.rel, err)
		return
	}
	id := strings.TrimSuffix(path.Base(f.rel), ".md")
	text := strings.TrimSpace(body)
	if text == "" {
		out.skip(f.rel, "empty observation")
		return
	}
	it := Item{Key: id, Keyed: true, Names: []string{id, id + ".md"}, File: f.rel, Line: first}
	r := &it.Record
	r.Kind, r.Text = journal.KindObservation, text
	r.Tags = stringsValue(fm["tags"])
	if c, ok := fm["created"]; ok {
		ts, ok := timeValue(c)
		if !ok {
			out.problem(f.rel, fmLine(f.data, "created"), "created: %q is not a date (YYYY-MM-DD)", stringValue(c))
			return
		}
		r.TS = ts
	} else if m := obsName.FindStringSubmatch(path.Base(f.rel)); m != nil {
		r.TS, _ = time.Parse("2006-01-02", m[1])
	}
	if m := obsName.FindStringSubmatch(path.Base(f.rel)); m != nil && r.TS.Format("2006-01-02") == m[1] && r.TS.Equal(r.TS.Truncate(24*time.Hour)) {
		n, _ := strconv.Atoi(m[2])
		r.TS = r.TS.Add(time.Duration(n) * time.Second)
	}
	if v := stringValue(fm["max_age"]); v != "" {
		if slices.Contains(journal.MaxAges, v) {
			r.MaxAge = v
		} else {
			out.problem(f.rel, fmLine(f.data, "max_age"), "max_age: %q is not one of %s (imported without it)", v, strings.Join(journal.MaxAges, " "))
		}
	}
	if s := stringValue(fm["source"]); s != "" {
		r.Source = &journal.Source{Actor: s}
	}
	for _, l := range stringsValue(fm["backlinks"]) {
		it.Links = appendUnique(it.Links, strings.TrimSuffix(strings.Trim(l, "[]"), ".md"))
	}
	switch v := fm["verified"].(type) {
	case bool:
		it.Verified = v
	case nil:
	default:
		out.problem(f.rel, fmLine(f.data, "verified"), "verified: %q is not true or false (imported as not verified)", stringValue(v))
	}
	if strings.HasPrefix(f.rel, "archive/") {
		r.Tags = appendUnique(r.Tags, "archived")
	}
	if p, _ := fm["promoted"].(bool); p {
		r.Tags = appendUnique(r.Tags, "promoted")
	}
	out.add(&it)
}
