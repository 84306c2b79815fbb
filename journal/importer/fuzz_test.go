package importer

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
)

// fuzzFile runs one file parser on data and holds what comes out to the
// importer's promises: no panic, every problem at a line ≥ 1, and every
// record planned from it valid, its journal line parsing back to itself.
func fuzzFile(t *testing.T, format, rel string, data string, parse func(sourceFile, *Source)) {
	if !utf8.ValidString(data) {
		return // readFiles refuses such a file before any parser sees it
	}
	var src Source
	parse(sourceFile{rel: rel, data: data, mod: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}, &src)
	opts := Options{Format: format, Agent: "a", Scope: journal.ScopePrivate, SourceType: "read",
		Now: func() time.Time { return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) }}
	rep := &Report{}
	empty := &existing{suffixes: map[string]string{}, byKey: map[string][]string{}, retired: map[string]bool{}, ts: map[string]time.Time{}}
	plan := makePlan(&src, opts, empty, rep)
	for _, p := range append(src.Unparsable, rep.Unparsable...) {
		if p.Line < 1 || p.File == "" {
			t.Fatalf("problem without a place: %+v", p)
		}
	}
	for _, p := range plan {
		if err := p.rec.Validate(); err != nil {
			t.Fatalf("planned record invalid: %v: %+v", err, p.rec)
		}
		line := p.rec.Canonical()
		back, err := journal.Parse(line)
		if err != nil {
			t.Fatalf("journal line %s does not parse: %v", line, err)
		}
		if back.Hash() != p.rec.Hash() || back.UUID != p.rec.UUID {
			t.Fatalf("journal line %s reads back as another record", line)
		}
	}
}

// makePlan is the plan of src as Import makes it (both reads over
// src.Items), retirements left out.
func makePlan(src *Source, opts Options, have *existing, rep *Report) []planned {
	pl := newPlanner(opts, have, rep)
	for _, it := range src.Items {
		pl.first(it)
	}
	pl.resolve()
	var plan []planned
	for i, it := range src.Items {
		p, ok, err := pl.build(i, it)
		if err != nil {
			panic(err)
		}
		if ok {
			plan = append(plan, p)
		}
	}
	return plan
}

func FuzzOpenClawFile(f *testing.F) {
	f.Add("## Preferences\n- short answers\n\n## Lessons\n- page through exports\n", true)
	f.Add("- 09:15 deployed\n- [10:30] lunch\n```\n# not a heading\n```\n", false)
	f.Add("# Long-Term Memory\n\n## Promoted (2026-12-02)\n\n<!-- openclaw-memory-promotion:memory:x.md:1:5 -->\n- deploy uses blue-green [score=0.7 signals=3] <!-- trigger: a --> <!-- importance: 7 -->\n<!-- unclosed\n", true)
	f.Fuzz(func(t *testing.T, data string, daily bool) {
		rel := "MEMORY.md"
		if daily {
			rel = "memory/2026-03-02.md"
		}
		fuzzFile(t, "openclaw", rel, data, openClawFile)
	})
}

func FuzzVaultFile(f *testing.F) {
	f.Add("---\ntags: [a, b]\ncreated: 2026-02-15\nmax_age: 30d\nsource: hawk\nbacklinks: [obs-2026-02-14-003]\nverified: true\n---\nCTR dropped.\n")
	f.Add("---\ncreated: nope\nmax_age: 7y\nverified: maybe\n---\nx\n")
	f.Fuzz(func(t *testing.T, data string) {
		fuzzFile(t, "vault", "vault/obs-2026-02-15-001.md", data, vaultFile)
	})
}

func FuzzTiersFile(f *testing.F) {
	f.Add("---\nconfidence: low\ncreated: 2026-02-15\n---\nDecided X.\n\nWhy this matters: Y\n", "learning/decisions/x.md")
	f.Add("# Log\n\n## One\nfirst\n\n## Two\nsecond\n", "learning/insights/log.md")
	f.Add("- Saber owns it\n- Bridget reviews\n", "core/team.md")
	f.Fuzz(func(t *testing.T, data, rel string) {
		if _, _, ok := tierOf(rel); !ok {
			rel = "working/daily/2026-02-15.md"
		}
		fuzzFile(t, "tiers", rel, data, tiersFile)
	})
}

func FuzzNoteFile(f *testing.F) {
	f.Add("---\ntitle: Coffee\npermalink: coffee\ntags: [a]\n---\n# Coffee\n- [method] pour over #brew\n- relates_to [[Beans]]\n- [ ] a task\n")
	f.Add("no frontmatter [[Link|alias]] and #tag\n- [x] done\n- [] empty\n")
	f.Fuzz(func(t *testing.T, data string) {
		fuzzFile(t, "basic-memory", "notes/coffee.md", data, noteFile)
	})
}

func FuzzMCPMemoryFile(f *testing.F) {
	f.Add(`{"type":"entity","name":"A","entityType":"person","observations":["x","y"]}` + "\n" + `{"type":"relation","from":"A","to":"B","relationType":"knows"}` + "\n")
	f.Add("{\"type\":\"entity\",\"name\":\n{}\n[1]\n")
	f.Fuzz(func(t *testing.T, data string) {
		fuzzFile(t, "mcp-memory", "memory.jsonl", data, mcpMemoryFile)
	})
}

func FuzzMem0File(f *testing.F) {
	f.Add(`{"memories":[{"id":"1","content":"likes tea","created_at":"2026-01-10T10:00:00","state":"active","categories":["preferences"],"metadata":{"b":1,"a":2}}]}`)
	f.Add(`[{"id":2,"memory":"x","created_at":"2026-01-10"},{"id":"3"}]`)
	f.Add("{\"id\":\"1\",\"memory\":\"a\",\"created_at\":\"2026-01-01T00:00:00Z\"}\n{\"id\":\"2\"}\nnot json\n")
	f.Fuzz(func(t *testing.T, data string) {
		fuzzFile(t, "mem0", "memories.json", data, mem0File)
	})
}
