package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/journal/importer"
)

// importFixture is testdata/import/<name> from this package.
func importFixture(name string) string {
	return filepath.Join("..", "..", "testdata", "import", filepath.FromSlash(name))
}

// importedRecords reads every record of agent's journal that an import wrote.
func importedRecords(t *testing.T, repo, agent string) []journal.Record {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(journalDir(repo, agent), "*.jsonl"))
	var out []journal.Record
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			r, err := journal.Parse([]byte(line))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if _, ok := r.Extra[importer.FieldImport]; ok {
				out = append(out, r)
			}
		}
	}
	return out
}

func importJSONOf(t *testing.T, r result) importJSON {
	t.Helper()
	var doc importJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("import --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return doc
}

// TestImportEachFormat: each format's fixture → import → a daemon pass →
// search finds every imported memory with its source; a second import
// writes nothing; verify is clean.
func TestImportEachFormat(t *testing.T) {
	for _, tc := range []struct {
		format             string
		imported, verified int
		skipped            int
		kinds              map[journal.Kind]int // at least these
		check              func(t *testing.T, recs []journal.Record)
	}{
		{format: "openclaw", imported: 7, kinds: map[journal.Kind]int{journal.KindPreference: 2, journal.KindDecision: 1, journal.KindReflection: 1, journal.KindObservation: 3},
			check: func(t *testing.T, recs []journal.Record) {
				r := byText(t, recs, "kestrel dashboard")
				if want := time.Date(2026, 3, 2, 9, 15, 0, 0, time.UTC); !r.TS.Equal(want) || r.Source.Context != "memory/2026-03-02.md#2026-03-02#1" {
					t.Errorf("daily entry: ts %v context %q", r.TS, r.Source.Context)
				}
			}},
		{format: "vault", imported: 3, verified: 1, kinds: map[journal.Kind]int{journal.KindObservation: 3, journal.KindFeedback: 0},
			check: func(t *testing.T, recs []journal.Record) {
				old, ctr := byText(t, recs, "quokka form"), byText(t, recs, "marmot campaign")
				if !slices.Equal(ctr.Links, []string{old.UUID}) || ctr.MaxAge != "30d" || ctr.Source.Actor != "watchtower" || ctr.Source.Context != "obs-2026-02-15-001" {
					t.Errorf("backlinks/max_age/source not mapped: %+v %+v", ctr, ctr.Source)
				}
				if !ctr.TS.Equal(time.Date(2026, 2, 15, 0, 0, 1, 0, time.UTC)) {
					t.Errorf("created → ts: %v", ctr.TS)
				}
				if fb := byKind(recs, journal.KindFeedback); len(fb) != 0 {
					t.Errorf("verified: true → feedback records %+v (want metadata only)", fb)
				}
				if string(old.Extra[importer.FieldSourceVerified]) != "true" {
					t.Errorf("verified: true → extra %v, want source_verified", old.Extra)
				}
				if _, ok := ctr.Extra["importance"]; ok {
					t.Error("importance was imported")
				}
				if a := byText(t, recs, "wombat"); !slices.Contains(a.Tags, "archived") {
					t.Errorf("archive/ not tagged: %v", a.Tags)
				}
			}},
		{format: "tiers", imported: 10, kinds: map[journal.Kind]int{journal.KindFact: 2, journal.KindPreference: 1, journal.KindProcedure: 1, journal.KindTask: 1, journal.KindDecision: 1, journal.KindCorrection: 1, journal.KindReflection: 2, journal.KindOutcome: 1},
			check: func(t *testing.T, recs []journal.Record) {
				if r := byText(t, recs, "pelican team"); r.Tier != "core" {
					t.Errorf("core/ → tier %q", r.Tier)
				}
				if r := byText(t, recs, "falcon budget"); r.Tier != "working" || r.Kind != journal.KindTask {
					t.Errorf("working/pending.md → %s %s", r.Tier, r.Kind)
				}
				d := byText(t, recs, "Gate surprise")
				if d.Tier != "learning" || d.Why != "core knowledge must survive the egret filter" || d.Confidence != "medium" {
					t.Errorf("learning/decisions → %+v", d)
				}
			}},
		{format: "basic-memory", imported: 6, kinds: map[journal.Kind]int{journal.KindProcedure: 2, journal.KindDecision: 1, journal.KindFact: 3},
			check: func(t *testing.T, recs []journal.Record) {
				note, origins := byText(t, recs, "kettle experiments"), byText(t, recs, "Ethiopian beans")
				originsNote := byText(t, recs, "Coffee Bean Origins\n- part_of")
				if !slices.Contains(note.Links, originsNote.UUID) || !slices.Contains(originsNote.Links, note.UUID) {
					t.Errorf("relations → links: %v / %v", note.Links, originsNote.Links)
				}
				if !slices.Contains(origins.Entities, "Coffee Bean Origins") || !slices.Contains(origins.Tags, "fact") {
					t.Errorf("observation: %+v", origins)
				}
				if w := byText(t, recs, "94C"); !slices.Contains(w.Tags, "brewing") || w.Kind != journal.KindProcedure {
					t.Errorf("[technique] ... #brewing → %s %v", w.Kind, w.Tags)
				}
			}},
		{format: "mcp-memory", imported: 4, kinds: map[journal.Kind]int{journal.KindFact: 4},
			check: func(t *testing.T, recs []journal.Record) {
				r := byText(t, recs, "Portuguese")
				if !slices.Equal(r.Entities, []string{"John_Smith"}) || !slices.Equal(r.Tags, []string{"person"}) {
					t.Errorf("observation: %+v", r)
				}
				byText(t, recs, "John_Smith leads Albatross")
			}},
		{format: "mem0", imported: 2, skipped: 1, kinds: map[journal.Kind]int{journal.KindPreference: 1, journal.KindFact: 1},
			check: func(t *testing.T, recs []journal.Record) {
				r := byText(t, recs, "dark mode")
				if want := time.Date(2026, 1, 10, 10, 0, 0, 123456000, time.UTC); !r.TS.Equal(want) || r.Source.Context != "mem0:3f1c2a9e-0001-4b6e-9a51-6c1d2e3f4a01" || r.Source.Actor != "openmemory" {
					t.Errorf("mem0 memory: ts %v source %+v", r.TS, r.Source)
				}
				if a := byText(t, recs, "pangolin"); !slices.Contains(a.Tags, "mem0-archived") {
					t.Errorf("archived state: %v", a.Tags)
				}
			}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			repo := initRepo(t, "a", "b")
			iv := invocation{now: time.Now()}
			r := iv.run(t, "import", tc.format, importFixture(tc.format), "--agent", "a", "--repo", repo, "--json")
			if r.code != 0 {
				t.Fatalf("import: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("stderr is not a terminal, yet the import wrote to it: %q", r.stderr)
			}
			doc := importJSONOf(t, r)
			if doc.Imported != tc.imported || doc.Verified != tc.verified || len(doc.Skipped) != tc.skipped || len(doc.Unparsable) != 0 {
				t.Fatalf("import: %+v", doc.Report)
			}
			recs := importedRecords(t, repo, "a")
			if len(recs) != tc.imported {
				t.Fatalf("%d records in the journal, want %d", len(recs), tc.imported)
			}
			kinds := map[journal.Kind]int{}
			for _, rec := range recs {
				kinds[rec.Kind]++
				if rec.Source == nil || rec.Source.Context == "" || rec.Source.Type == "" {
					t.Errorf("%s: no attribution: %+v", rec.UUID, rec.Source)
				}
				if owner, ok := journal.UUIDOwner(rec.UUID); !ok || owner != "a" {
					t.Errorf("%s: not a uuid of agent a", rec.UUID)
				}
			}
			for k, n := range tc.kinds {
				if kinds[k] != n {
					t.Errorf("kind %s: %d records, want %d (all: %v)", k, kinds[k], n, kinds)
				}
			}
			tc.check(t, recs)

			before := snapshot(t, filepath.Join(repo, "agents"))
			again := importJSONOf(t, iv.run(t, "import", tc.format, importFixture(tc.format), "--agent", "a", "--repo", repo, "--json"))
			if again.Imported != 0 || again.Verified != 0 || again.SkippedByReason[importer.SkipAlreadyImported] != tc.imported {
				t.Errorf("second import: %+v", again.Report)
			}
			if after := snapshot(t, filepath.Join(repo, "agents")); !mapsEqual(before, after) {
				t.Error("a second import of the same source changed the journal")
			}

			if r := iv.run(t, "sync", "--once", "--repo", repo); r.code != 0 {
				t.Fatalf("sync: %d %s", r.code, r.stderr)
			}
			for _, rec := range recs {
				if rec.Kind == journal.KindFeedback {
					continue
				}
				res := searchJSON(t, iv, repo, "a", rec.Text)
				hit, ok := findHit(res, rec.UUID)
				if !ok {
					t.Errorf("search %q: %s not found", rec.Text, rec.UUID)
					continue
				}
				if hit.Source == nil || hit.Source.Context != rec.Source.Context {
					t.Errorf("search %q: source %+v, want context %q", rec.Text, hit.Source, rec.Source.Context)
				}
				if res.Offline {
					t.Errorf("search answered offline: %s", res.Reason)
				}
			}
			if res := searchJSON(t, iv, repo, "b", recs[0].Text); len(hitsOf(res, recs)) != 0 {
				t.Error("agent b sees a's private imported memories")
			}
			v := iv.run(t, "verify", "--json", "--repo", repo)
			if v.code != 0 || !strings.Contains(v.stdout, `"ok": true`) {
				t.Errorf("verify: %d %s %s", v.code, v.stdout, v.stderr)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func byText(t *testing.T, recs []journal.Record, sub string) journal.Record {
	t.Helper()
	for _, r := range recs {
		if strings.Contains(r.Text, sub) && r.Kind != journal.KindFeedback {
			return r
		}
	}
	t.Fatalf("no imported record holds %q", sub)
	return journal.Record{}
}

func byKind(recs []journal.Record, k journal.Kind) []journal.Record {
	var out []journal.Record
	for _, r := range recs {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

func searchJSON(t *testing.T, iv invocation, repo, agent, query string) searchResult {
	t.Helper()
	r := iv.run(t, "search", "--query", query, "--agent", agent, "--limit", "50", "--json", "--repo", repo)
	if r.code != 0 {
		t.Fatalf("search %q: %d %s", query, r.code, r.stderr)
	}
	var res searchResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func findHit(res searchResult, uuid string) (searchHit, bool) {
	for _, h := range res.Results {
		if h.UUID == uuid {
			return h, true
		}
	}
	return searchHit{}, false
}

func hitsOf(res searchResult, recs []journal.Record) []string {
	var out []string
	for _, r := range recs {
		if _, ok := findHit(res, r.UUID); ok {
			out = append(out, r.UUID)
		}
	}
	return out
}

// TestImportMalformed: a malformed file gives file:line errors, the rest
// is imported, and the exit code says something could not be parsed.
func TestImportMalformed(t *testing.T) {
	for _, tc := range []struct {
		format   string
		problems []string // file:line each
		imported string   // text of a memory imported anyway
	}{
		{"openclaw", []string{"MEMORY.md:2"}, "okapi deploy"},
		{"vault", []string{"vault/obs-2026-02-10-001.md:3"}, "gecko cluster"},
		{"tiers", []string{"learning/decisions/bad.md:2"}, "manatee pipeline"},
		{"basic-memory", []string{"broken.md:3"}, "lemur service"},
		{"mcp-memory", []string{"memory.jsonl:2", "memory.jsonl:3"}, "iguana search"},
		{"mem0", []string{"memories.jsonl:2", "memories.jsonl:3"}, "walrus coffee"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			repo := initRepo(t, "a")
			iv := invocation{now: time.Now()}
			r := iv.run(t, "import", tc.format, importFixture("malformed/"+tc.format), "--agent", "a", "--repo", repo, "--json")
			if r.code != exitFail {
				t.Errorf("exit %d, want 1", r.code)
			}
			doc := importJSONOf(t, r)
			var got []string
			for _, p := range doc.Unparsable {
				got = append(got, p.File+":"+strconv.Itoa(p.Line))
			}
			if !slices.Equal(got, tc.problems) {
				t.Errorf("unparsable %v, want %v (%+v)", got, tc.problems, doc.Unparsable)
			}
			byText(t, importedRecords(t, repo, "a"), tc.imported)
			text := iv.run(t, "import", tc.format, importFixture("malformed/"+tc.format), "--agent", "a", "--repo", repo)
			if !strings.Contains(text.stdout, "could not parse "+tc.problems[0]+": ") {
				t.Errorf("text report does not name %s:\n%s", tc.problems[0], text.stdout)
			}
		})
	}
}

// TestExport: export shows what search would (A's own and shared, not
// another agent's private memories); an exported mcp-memory file imports
// back; jsonl lines are the journal's records.
func TestExport(t *testing.T) {
	repo := initRepo(t, "a", "b")
	iv := invocation{now: time.Now()}
	for _, args := range [][]string{
		{"import", "vault", importFixture("vault"), "--agent", "a"},
		{"import", "mem0", importFixture("mem0"), "--agent", "b", "--scope", "shared"},
		{"import", "mcp-memory", importFixture("mcp-memory"), "--agent", "b"},
	} {
		if r := iv.run(t, append(args, "--repo", repo)...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	r := iv.run(t, "export", "--agent", "a", "--format", "jsonl", "--repo", repo)
	if r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	var texts []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		rec, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatalf("jsonl line %q: %v", l, err)
		}
		texts = append(texts, rec.Text)
	}
	if len(texts) != 5 { // a's 3 observations (verified: true is metadata, no flag), b's 2 shared
		t.Errorf("jsonl exported %d records: %q", len(texts), texts)
	}
	if strings.Contains(r.stdout, "Portuguese") {
		t.Error("export of a holds b's private memory")
	}
	// A memory flagged wrong leaves the markdown and mcp-memory exports,
	// as it leaves default search.
	wrong := byText(t, importedRecords(t, repo, "a"), "wombat")
	if r := iv.run(t, "flag", wrong.UUID, "--wrong", "--agent", "a", "--repo", repo); r.code != 0 {
		t.Fatalf("flag: %d %s", r.code, r.stderr)
	}
	md := iv.run(t, "export", "--agent", "a", "--format", "markdown", "--repo", repo)
	if strings.Contains(md.stdout, "wombat") {
		t.Errorf("markdown export holds a memory flagged wrong")
	}
	if md.code != 0 || !strings.Contains(md.stdout, "## observation") || !strings.Contains(md.stdout, "quokka form") ||
		!strings.Contains(md.stdout, "dark mode") || strings.Contains(md.stdout, "flagged") {
		t.Errorf("markdown export: %d\n%s", md.code, md.stdout)
	}
	mcp := iv.run(t, "export", "--agent", "a", "--format", "mcp-memory", "--repo", repo)
	if mcp.code != 0 {
		t.Fatalf("mcp-memory export: %d %s", mcp.code, mcp.stderr)
	}
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, []byte(mcp.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	other := initRepo(t, "c")
	back := importJSONOf(t, iv.run(t, "import", "mcp-memory", file, "--agent", "c", "--repo", other, "--json"))
	if back.Imported != 4+1 || len(back.Unparsable) != 0 { // 4 memories, 1 relation (the backlink)
		t.Errorf("mcp-memory export imported back: %+v\n%s", back.Report, mcp.stdout)
	}
	byText(t, importedRecords(t, other, "c"), "quokka form")
	if r := iv.run(t, "export", "--agent", "zed", "--format", "jsonl", "--repo", repo); r.code != exitUsage {
		t.Errorf("export of an unknown agent: %d", r.code)
	}
	if r := iv.run(t, "export", "--agent", "a", "--format", "csv", "--repo", repo); r.code != exitUsage {
		t.Errorf("export --format csv: %d", r.code)
	}
}

// TestImportUsage: bad arguments write nothing (exit 2).
func TestImportUsage(t *testing.T) {
	repo := initRepo(t, "a")
	for _, args := range [][]string{
		{"import", "vault"},
		{"import", "evernote", importFixture("vault"), "--agent", "a"},
		{"import", "vault", importFixture("vault")},
		{"import", "vault", importFixture("vault"), "--agent", "zed"},
		{"import", "vault", importFixture("vault"), "--agent", "a", "--scope", "public"},
		{"import", "vault", "/nonexistent/path", "--agent", "a"},
	} {
		if r := cli(t, append(args, "--repo", repo)...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	if recs := importedRecords(t, repo, "a"); len(recs) != 0 {
		t.Errorf("a refused import wrote %d records", len(recs))
	}
}

// journalLinesSorted is every line of agent's journal files, sorted; a
// file ending in a torn line fails the test.
func journalLinesSorted(t *testing.T, repo, agent string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(journalDir(repo, agent), "*.jsonl"))
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Fatalf("%s ends in a torn line", f)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestImportKilledMidwayCompletesOnRerun: `memsync import` killed with
// SIGKILL while it writes leaves whole lines only, and the same import
// run again leaves the journal exactly as one uninterrupted import does.
func TestImportKilledMidwayCompletesOnRerun(t *testing.T) {
	bin := memsyncBinary(t)
	src := t.TempDir()
	for i := 0; i < 3000; i++ {
		note := fmt.Sprintf("---\ntitle: Kill note %d\ncreated: 2026-01-%02dT10:00:00Z\n---\n- [fact] Fact number %d about the yak shed\n", i, 1+i%28, i)
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("n%04d.md", i)), []byte(note), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo, clean := initRepo(t, "a"), initRepo(t, "a")
	cmd := exec.Command(bin, "import", "basic-memory", src, "--agent", "a", "--repo", repo)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	killed := false
poll:
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			break poll // finished before it could be killed: the re-run must still be a no-op
		default:
		}
		files, _ := filepath.Glob(filepath.Join(journalDir(repo, "a"), "*.jsonl"))
		if len(files) > 0 {
			cmd.Process.Kill()
			<-exited
			killed = true
			break
		}
		time.Sleep(time.Millisecond)
	}
	partial := journalLinesSorted(t, repo, "a")
	iv := invocation{now: time.Now()}
	if r := iv.run(t, "import", "basic-memory", src, "--agent", "a", "--repo", repo); r.code != 0 {
		t.Fatalf("re-run: %d %s", r.code, r.stderr)
	}
	if r := iv.run(t, "import", "basic-memory", src, "--agent", "a", "--repo", clean); r.code != 0 {
		t.Fatalf("clean import: %d %s", r.code, r.stderr)
	}
	got, want := journalLinesSorted(t, repo, "a"), journalLinesSorted(t, clean, "a")
	if !slices.Equal(got, want) {
		t.Fatalf("killed (%v) after %d lines, re-run: %d lines, an uninterrupted import: %d", killed, len(partial), len(got), len(want))
	}
	t.Logf("killed: %v, after %d of %d lines", killed, len(partial), len(want))
}
