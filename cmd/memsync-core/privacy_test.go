package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

// appendAs runs memsync append in repo and returns the new record's uuid.
func appendAs(t *testing.T, repo string, args ...string) string {
	t.Helper()
	r := cli(t, append([]string{"append", "--repo", repo}, args...)...)
	if r.code != 0 {
		t.Fatalf("append %q: exit %d: %s", args, r.code, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

// journalKinds counts the records of each kind in every journal of repo.
func journalKinds(t *testing.T, repo string) map[journal.Kind]int {
	t.Helper()
	out := map[journal.Kind]int{}
	files, _ := filepath.Glob(filepath.Join(repo, "agents", "*", "memory", "journal", "*.jsonl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if rec, err := journal.Parse([]byte(l)); err == nil {
				out[rec.Kind]++
			}
		}
	}
	return out
}

// privacyReaders are the ways a read command answers: from the graph, and
// from the journals when the graph cannot be reached.
var privacyReaders = []struct {
	name string
	iv   invocation
}{{"graph", invocation{}}, {"offline", unreachableNeo4j}}

// TestLinksNeverPublishAnotherAgentsSecret is issue 25 §2's first repro:
// a links b's private memory twice (from a shared and a private record);
// after a sync nothing is promoted, a finds nothing of it, and b's memory
// keeps its importance.
func TestLinksNeverPublishAnotherAgentsSecret(t *testing.T) {
	repo := initRepo(t, "a", "b")
	secret := appendAs(t, repo, "--agent", "b", "--kind", "fact", "--ts", "2026-11-21T09:10:00Z", "the launch secret is zebra")
	appendAs(t, repo, "--agent", "a", "--kind", "fact", "--scope", "shared", "--link", secret, "x")
	appendAs(t, repo, "--agent", "a", "--kind", "fact", "--link", secret, "y")
	appendAs(t, repo, "--agent", "a", "--kind", "fact", "--link", "mem_nowhere", "z")
	syncRepo(t, repo)
	// The owner of the repository sees what changed nothing.
	r := cli(t, "verify", "--json", "--repo", repo)
	var v struct {
		OK       bool     `json:"ok"`
		Dangling int      `json:"dangling_references"`
		Crossing int      `json:"crossing_references"`
		Sample   []string `json:"blocked_references"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 || !v.OK || v.Dangling != 1 || v.Crossing != 2 || len(v.Sample) != 3 {
		t.Fatalf("verify: exit %d %+v %v\n%s%s", r.code, v, err, r.stdout, r.stderr)
	}
	if r := cli(t, "verify", "--repo", repo); !strings.Contains(r.stdout, "references that change nothing: 1 to no record, 2 to a memory the writer cannot see") ||
		!strings.Contains(r.stdout, "\n    links to no record: 1, e.g. ") || !strings.Contains(r.stdout, "-> mem_nowhere\n") ||
		!strings.Contains(r.stdout, "\n    links to a memory the writer cannot see: 2, e.g. ") {
		t.Fatalf("verify, by kind:\n%s", r.stdout)
	}
	// --all lists each one, in as many parts as asked, on a line of its own.
	r = cli(t, "verify", "--all", "--parts", "3", "--repo", repo)
	if n := strings.Count(r.stdout, "\n    links "); r.code != 0 || n != 2+3 || strings.Count(r.stdout, "-> mem_nowhere\n") != 2 {
		t.Fatalf("verify --all: %d lines of links\n%s", n, r.stdout)
	}
	r = cli(t, "verify", "--all", "--json", "--repo", repo)
	var all struct {
		All    []string `json:"blocked_all"`
		ByKind []struct {
			Field, Blocked string
			Count          int
		} `json:"blocked_by_kind"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &all); err != nil || len(all.All) != 3 || len(all.ByKind) != 2 || all.ByKind[0].Count != 1 || all.ByKind[1].Count != 2 {
		t.Fatalf("verify --all --json: %+v %v\n%s", all, err, r.stdout)
	}
	if n := journalKinds(t, repo)[journal.KindPromotion]; n != 0 {
		t.Fatalf("%d promotion records journaled for b's secret", n)
	}
	for _, rd := range privacyReaders {
		t.Run(rd.name, func(t *testing.T) {
			r := rd.iv.run(t, "search", "secret", "--agent", "a", "--all", "--json", "--repo", repo)
			if got := hitIDs(decodeSearch(t, r)); len(got) != 0 || strings.Contains(r.stdout, "zebra") {
				t.Fatalf("a finds %v:\n%s", got, r.stdout)
			}
			if res := explainJSON(t, rd.iv, secret, "--agent", "b", "--repo", repo); res.Importance != 0.5 || len(res.Events) != 0 {
				t.Fatalf("b's secret: importance %v events %+v, want 0.5 and none", res.Importance, res.Events)
			}
		})
	}
}

// TestNoAgentRetiresAnothersPrivateMemory is issue 25 §2's third repro:
// bob supersedes and contradicts alice's private memory, which he cannot
// see; alice still finds it, active, at its importance.
func TestNoAgentRetiresAnothersPrivateMemory(t *testing.T) {
	repo := initRepo(t, "alice", "bob")
	plan := appendAs(t, repo, "--agent", "alice", "--kind", "decision", "--ts", "2026-11-21T09:10:00Z", "alice's private tiger plan")
	appendAs(t, repo, "--agent", "bob", "--kind", "decision", "--scope", "shared", "--supersedes", plan, "a replacement")
	appendAs(t, repo, "--agent", "bob", "--kind", "fact", "--scope", "shared", "--conflicts-with", plan, "a contradiction")
	syncRepo(t, repo)
	for _, rd := range privacyReaders {
		t.Run(rd.name, func(t *testing.T) {
			r := rd.iv.run(t, "search", "tiger plan", "--agent", "alice", "--json", "--repo", repo)
			if got := hitIDs(decodeSearch(t, r)); len(got) != 1 || got[0] != plan {
				t.Fatalf("alice's search = %v, want her plan %s", got, plan)
			}
			res := explainJSON(t, rd.iv, plan, "--agent", "alice", "--repo", repo)
			if res.Importance != 0.5 || res.Status != "active" || res.ReplacedBy != "" || len(res.Events) != 0 {
				t.Fatalf("alice's plan: %+v, want importance 0.5, active, no events", res)
			}
		})
	}
}

// TestInvisibleRecordsAreNeverNamed is issue 25 §3: b supersedes and
// references c's shared memory with private records. The shared memory
// stays current for everyone (a private record retires only its own
// group), and show, explain and search --all as a or c print no uuid,
// author or time of b's records.
func TestInvisibleRecordsAreNeverNamed(t *testing.T) {
	repo := initRepo(t, "a", "b", "c")
	s := appendAs(t, repo, "--agent", "c", "--kind", "fact", "--scope", "shared", "--ts", "2026-11-21T09:10:00Z", "the deploy window is friday")
	repl := appendAs(t, repo, "--agent", "b", "--kind", "fact", "--ts", "2026-11-21T09:12:00Z", "--supersedes", s, "b thinks the deploy window is tuesday")
	ref := appendAs(t, repo, "--agent", "b", "--kind", "fact", "--ts", "2026-11-21T09:13:00Z", "--link", s, "b builds on the deploy window")
	syncRepo(t, repo)
	hidden := []string{repl, ref, `"b"`, "by b"}
	check := func(t *testing.T, what, out string) {
		t.Helper()
		for _, h := range hidden {
			if strings.Contains(out, h) {
				t.Fatalf("%s names b's private record (%s):\n%s", what, h, out)
			}
		}
	}
	for _, rd := range privacyReaders {
		for _, reader := range []string{"a", "c"} {
			t.Run(rd.name+"/"+reader, func(t *testing.T) {
				r := rd.iv.run(t, "search", "deploy window friday", "--agent", reader, "--json", "--repo", repo)
				if got := hitIDs(decodeSearch(t, r)); len(got) != 1 || got[0] != s {
					t.Fatalf("search = %v, want %s current", got, s)
				}
				r = rd.iv.run(t, "search", "deploy window", "--agent", reader, "--all", "--json", "--repo", repo)
				check(t, "search --all", r.stdout)
				r = rd.iv.run(t, "show", s, "--agent", reader, "--json", "--repo", repo)
				if r.code != 0 {
					t.Fatalf("show: %d %s", r.code, r.stderr)
				}
				check(t, "show", r.stdout)
				var doc showJSON
				if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.ReplacedBy != "" || doc.InvalidAt != "" {
					t.Fatalf("show: %+v %v, want no replacement", doc, err)
				}
				res := explainJSON(t, rd.iv, s, "--agent", reader, "--repo", repo)
				if res.Status != "active" || res.ReplacedBy != "" || len(res.Events) == 0 {
					t.Fatalf("explain: %+v, want active, b's reference counted", res)
				}
				for _, e := range res.Events {
					if e.UUID == "" && e.TS != "" {
						t.Fatalf("explain: event %+v of a record %s may not see carries its time", e, reader)
					}
				}
				out, _ := json.Marshal(res)
				check(t, "explain --json", string(out))
				check(t, "explain", rd.iv.run(t, "explain", s, "--agent", reader, "--repo", repo).stdout)
			})
		}
	}
	// b, who sees both, still sees its own records.
	if r := cli(t, "show", repl, "--agent", "b", "--repo", repo); r.code != 0 {
		t.Fatalf("b's show of its own record: %d %s", r.code, r.stderr)
	}
}

// TestPrivateImportVerifiedStaysPrivate is issue 51 §1: a private import
// of a source item marked verified: true is the source's word, kept as the
// record's metadata; it writes no feedback, earns no promotion, and after
// a sync another agent finds nothing of it (search, list, show).
func TestPrivateImportVerifiedStaysPrivate(t *testing.T) {
	repo := initRepo(t, "a", "b")
	src := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(filepath.Join(src, "vault"), 0o755); err != nil {
		t.Fatal(err)
	}
	obs := "---\ncreated: 2026-02-14\nsource: hawk\nimportance: 0.9\nverified: true\n---\nThe okapi launch code is 4417.\n"
	if err := os.WriteFile(filepath.Join(src, "vault", "obs-2026-02-14-001.md"), []byte(obs), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, "import", "vault", src, "--agent", "a", "--repo", repo); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	syncRepo(t, repo)
	syncRepo(t, repo) // a promotion journaled by the first pass is projected by the second
	kinds := journalKinds(t, repo)
	if kinds[journal.KindPromotion] != 0 || kinds[journal.KindFeedback] != 0 {
		t.Fatalf("a private import journaled %d promotions and %d feedback records", kinds[journal.KindPromotion], kinds[journal.KindFeedback])
	}
	recs := importedRecords(t, repo, "a")
	if len(recs) != 1 || string(recs[0].Extra["source_verified"]) != "true" {
		t.Fatalf("imported: %+v, want one record with source_verified", recs)
	}
	secret := recs[0].UUID
	for _, rd := range privacyReaders {
		t.Run(rd.name, func(t *testing.T) {
			r := rd.iv.run(t, "search", "okapi launch code", "--agent", "b", "--all", "--json", "--repo", repo)
			if got := hitIDs(decodeSearch(t, r)); len(got) != 0 || strings.Contains(r.stdout, "4417") {
				t.Fatalf("b finds %v:\n%s", got, r.stdout)
			}
			if r := rd.iv.run(t, "list", "--agent", "b", "--json", "--repo", repo); strings.Contains(r.stdout, "4417") {
				t.Fatalf("b's list shows a's import:\n%s", r.stdout)
			}
			if r := rd.iv.run(t, "show", secret, "--agent", "b", "--repo", repo); r.code == 0 || strings.Contains(r.stdout, "4417") {
				t.Fatalf("b's show: exit %d\n%s", r.code, r.stdout)
			}
			if r := rd.iv.run(t, "search", "okapi launch code", "--agent", "a", "--json", "--repo", repo); len(hitIDs(decodeSearch(t, r))) != 1 {
				t.Fatalf("a does not find her own import:\n%s", r.stdout)
			}
		})
	}
}
