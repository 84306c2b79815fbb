package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/journal/importer"
)

// roundTripRepo is a repository whose agent alice has private memories
// with entities, a link, a supersession and a record of memsync's own
// (feedback), and agents bob and carol that have none.
func roundTripRepo(t *testing.T) (repo string, uuids map[string]string) {
	t.Helper()
	repo = initRepo(t, "alice", "bob", "carol")
	uuids = map[string]string{}
	add := func(name string, args ...string) {
		t.Helper()
		r := cli(t, append([]string{"append", "--repo", repo, "--agent", "alice", "--no-fsync"}, args...)...)
		if r.code != 0 {
			t.Fatalf("append %s: %d %s", name, r.code, r.stderr)
		}
		uuids[name] = strings.TrimSpace(r.stdout)
	}
	add("pg15", "--kind", "fact", "--entity", "billing-service", "--ts", "2026-01-01T10:00:00Z", "The billing service runs on Postgres 15")
	add("queue", "--kind", "decision", "--entity", "ledger", "--link", uuids["pg15"], "--why", "fewer retries", "--ts", "2026-01-02T10:00:00Z", "Move billing writes to the ledger queue")
	add("pg16", "--kind", "fact", "--entity", "billing-service", "--supersedes", uuids["pg15"], "--ts", "2026-01-03T10:00:00Z", "The billing service runs on Postgres 16")
	add("oncall", "--kind", "preference", "--entity", "dana", "--tag", "team", "--ts", "2026-01-04T10:00:00Z", "Dana prefers pages after 9am")
	add("owner", "--kind", "fact", "--entity", "dana", "--link", uuids["pg16"], "--ts", "2026-01-04T11:00:00Z", "Dana owns the billing database upgrade")
	add("plain", "--kind", "observation", "--ts", "2026-01-05T10:00:00Z", "Deploys are slower on Fridays")
	return repo, uuids
}

func exportOf(t *testing.T, repo, agent, format string) string {
	t.Helper()
	r := cli(t, "export", "--repo", repo, "--agent", agent, "--format", format)
	if r.code != 0 {
		t.Fatalf("export %s %s: %d %s", agent, format, r.code, r.stderr)
	}
	return r.stdout
}

func importFile(t *testing.T, repo, agent, format, data string, flags ...string) importJSON {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export."+strings.ReplaceAll(format, "-", "")+".jsonl")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	// The source's own time (mcp-memory gives none: its modification
	// time), before the tests' clock.
	when := time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
	r := cli(t, append(append([]string{"import", "--repo", repo, "--agent", agent, "--json"}, flags...), format, path)...)
	if r.code != 0 {
		t.Fatalf("import %s into %s: %d %s %s", format, agent, r.code, r.stdout, r.stderr)
	}
	return importJSONOf(t, r)
}

// TestRoundTripIsTheIdentity: for every export format, export → import
// back into the same agent writes nothing; into another agent writes each
// memory once, and again nothing the second time; export → import →
// export gives the same file (mcp-memory byte for byte; jsonl and markdown,
// whose lines name the agent and uuid, the same memories). Fails before
// `import jsonl` existed and before mcp-memory kept types and relations.
func TestRoundTripIsTheIdentity(t *testing.T) {
	repo, ids := roundTripRepo(t)

	t.Run("jsonl", func(t *testing.T) {
		first := exportOf(t, repo, "alice", "jsonl")
		if n := strings.Count(first, "\n"); n != 6 {
			t.Fatalf("alice's jsonl export: %d lines, want 6\n%s", n, first)
		}
		if doc := importFile(t, repo, "alice", "jsonl", first); doc.Imported != 0 {
			t.Fatalf("back into alice: imported %d, want 0 (%+v)", doc.Imported, doc.Skipped)
		}
		// Alice's memories are private: bob gets none of them unless
		// the operator moves them (--include-private), and is told so.
		if doc := importFile(t, repo, "bob", "jsonl", first); doc.Imported != 0 || doc.SkippedByReason[importer.SkipOthersPrivate] != 6 {
			t.Fatalf("alice's private export into bob without --include-private: %+v", doc.Report)
		}
		doc := importFile(t, repo, "bob", "jsonl", first, "--include-private")
		if doc.Imported != 6 || doc.Superseded != 1 || len(doc.Unresolved) != 0 || len(doc.Unparsable) != 0 {
			t.Fatalf("into bob: %+v", doc.Report)
		}
		if again := importFile(t, repo, "bob", "jsonl", first, "--include-private"); again.Imported != 0 {
			t.Fatalf("into bob again: imported %d, want 0", again.Imported)
		}
		bob := importedRecords(t, repo, "bob")
		byOrigin := map[string]journal.Record{}
		for _, r := range bob {
			if r.Agent != "bob" || r.Scope != journal.ScopePrivate {
				t.Errorf("copy not re-owned: %s %s %s", r.UUID, r.Agent, r.Scope)
			}
			byOrigin[string(r.Extra[importer.FieldOriginUUID])] = r
		}
		get := func(name string) journal.Record {
			r, ok := byOrigin[`"`+ids[name]+`"`]
			if !ok {
				t.Fatalf("no copy of %s (%s)", name, ids[name])
			}
			return r
		}
		pg15, queue, pg16 := get("pg15"), get("queue"), get("pg16")
		if !slices.Equal(queue.Links, []string{pg15.UUID}) || queue.Why != "fewer retries" || queue.Kind != journal.KindDecision {
			t.Errorf("link not remapped / fields lost: %+v", queue)
		}
		if !slices.Equal(pg16.Supersedes, []string{pg15.UUID}) || !slices.Equal(pg16.Entities, []string{"billing-service"}) {
			t.Errorf("supersedes not remapped: %+v", pg16)
		}
		if want := "2026-01-04T10:00:00Z"; get("oncall").TS.UTC().Format("2006-01-02T15:04:05Z") != want || !slices.Equal(get("oncall").Tags, []string{"team"}) {
			t.Errorf("ts/tags lost: %+v", get("oncall"))
		}
		// export → import → export: the same memories, bob's names for them.
		second := exportOf(t, repo, "bob", "jsonl")
		if got, want := memoriesOf(t, second), memoriesOf(t, first); !slices.Equal(got, want) {
			t.Errorf("bob's export differs from alice's:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// A copy of a copy is the original: carol gets each once, and
		// alice's own export into carol then writes nothing.
		if doc := importFile(t, repo, "carol", "jsonl", second, "--include-private"); doc.Imported != 6 {
			t.Fatalf("bob's export into carol: %+v", doc.Report)
		}
		if doc := importFile(t, repo, "carol", "jsonl", first, "--include-private"); doc.Imported != 0 {
			t.Fatalf("alice's export into carol after bob's: imported %d, want 0", doc.Imported)
		}
		if got, want := memoriesOf(t, exportOf(t, repo, "carol", "jsonl")), memoriesOf(t, first); !slices.Equal(got, want) {
			t.Errorf("carol's export differs:\n%s", strings.Join(got, "\n"))
		}
		// Into another repository: each memory once, the same memories.
		other := initRepo(t, "alice")
		if doc := importFile(t, other, "alice", "jsonl", first); doc.Imported != 6 || len(doc.Unresolved) != 0 {
			t.Fatalf("into another repository: %+v", doc.Report)
		}
		if doc := importFile(t, other, "alice", "jsonl", first); doc.Imported != 0 {
			t.Fatalf("into another repository again: imported %d", doc.Imported)
		}
		if got, want := memoriesOf(t, exportOf(t, other, "alice", "jsonl")), memoriesOf(t, first); !slices.Equal(got, want) {
			t.Errorf("the other repository's export differs:\n%s", strings.Join(got, "\n"))
		}
	})

	t.Run("markdown", func(t *testing.T) {
		// markdown has no importer: its round trip is through jsonl, and
		// the copy's markdown is the original's, agent and uuids aside.
		a, b := exportOf(t, repo, "alice", "markdown"), exportOf(t, repo, "bob", "markdown")
		if na, nb := normMarkdown(a, "alice"), normMarkdown(b, "bob"); na != nb {
			t.Errorf("markdown of the copy differs:\n%s\nwant\n%s", nb, na)
		}
		if !strings.Contains(a, "Postgres 16") || strings.Contains(a, "Postgres 15") {
			t.Errorf("markdown export shows the superseded memory or misses the current one:\n%s", a)
		}
	})

	t.Run("mcp-memory", func(t *testing.T) {
		first := exportOf(t, repo, "alice", "mcp-memory")
		if doc := importFile(t, repo, "alice", "mcp-memory", first); doc.Imported != 0 {
			t.Fatalf("back into alice: imported %d, want 0 (%+v)", doc.Imported, doc.Report)
		}
		dave := "dave"
		if r := cli(t, "init", "--repo", repo, "--agent", dave); r.code != 0 {
			t.Fatalf("init dave: %s", r.stderr)
		}
		// alice's view: 5 memories (pg15 superseded), 1 link relation.
		doc := importFile(t, repo, dave, "mcp-memory", first)
		if doc.Imported != 6 {
			t.Fatalf("into dave: imported %d, want 5 observations and 1 relation (%+v)\n%s", doc.Imported, doc.Report, first)
		}
		if again := importFile(t, repo, dave, "mcp-memory", first); again.Imported != 0 {
			t.Fatalf("into dave again: imported %d", again.Imported)
		}
		second := exportOf(t, repo, dave, "mcp-memory")
		if second != first {
			t.Errorf("export → import → export changed the file:\n%s\nwant\n%s", second, first)
		}
		if !strings.Contains(first, `"entityType":"preference"`) || !strings.Contains(first, `"relationType":"links_to"`) {
			t.Errorf("types or relation missing:\n%s", first)
		}
		// And once more through another agent: stable counts.
		if r := cli(t, "init", "--repo", repo, "--agent", "erin"); r.code != 0 {
			t.Fatal(r.stderr)
		}
		if doc := importFile(t, repo, "erin", "mcp-memory", second); doc.Imported != 6 {
			t.Fatalf("into erin: %d", doc.Imported)
		}
		if third := exportOf(t, repo, "erin", "mcp-memory"); third != first {
			t.Errorf("second round trip changed the file:\n%s", third)
		}
	})
}

// memoriesOf is what each line of a jsonl export says, without who says
// it or its uuid: kind, time, text, entities, tags, why, and the texts of
// what it links to and supersedes; sorted.
func memoriesOf(t *testing.T, jsonl string) []string {
	t.Helper()
	var recs []journal.Record
	text := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		r, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		recs = append(recs, r)
		text[r.UUID] = r.Text
	}
	var out []string
	for _, r := range recs {
		var links, sup []string
		for _, l := range r.Links {
			links = append(links, text[l])
		}
		for _, s := range r.Supersedes {
			sup = append(sup, text[s])
		}
		out = append(out, strings.Join([]string{string(r.Kind), r.TS.UTC().String(), r.Text, strings.Join(r.Entities, ","),
			strings.Join(r.Tags, ","), r.Why, strings.Join(links, ","), strings.Join(sup, ",")}, " | "))
	}
	sort.Strings(out)
	return out
}

var markdownSub = regexp.MustCompile("· [a-z0-9_-]+ · (private|shared) · `[^`]+`")

func normMarkdown(md, agent string) string {
	md = strings.Replace(md, "# Memory of "+agent, "# Memory of AGENT", 1)
	return markdownSub.ReplaceAllString(md, "· AGENT · $1 · UUID")
}

// TestRoundTripWithSharedMemories: an agent's export holds the shared
// memories of others it sees; read back into it, they are already there
// (fails before: each shared memory was copied into the agent again).
func TestRoundTripWithSharedMemories(t *testing.T) {
	repo := initRepo(t, "alice", "bob")
	for i, args := range [][]string{
		{"--agent", "alice", "--kind", "fact", "--scope", "shared", "--entity", "ledger", "The ledger is append-only"},
		{"--agent", "alice", "--kind", "fact", "--entity", "ledger", "Alice keeps the ledger runbook"},
		{"--agent", "bob", "--kind", "decision", "--entity", "billing", "Bob moves billing to the ledger"},
	} {
		ts := []string{"--ts", time.Date(2026, 1, 1+i, 10, 0, 0, 0, time.UTC).Format(time.RFC3339)}
		if r := cli(t, append(append([]string{"append", "--repo", repo, "--no-fsync"}, ts...), args...)...); r.code != 0 {
			t.Fatalf("append: %s", r.stderr)
		}
	}
	for _, format := range []string{"jsonl", "mcp-memory"} {
		t.Run(format, func(t *testing.T) {
			out := exportOf(t, repo, "bob", format)
			if !strings.Contains(out, "append-only") || strings.Contains(out, "runbook") {
				t.Fatalf("bob's view: want alice's shared memory and not her private one:\n%s", out)
			}
			if doc := importFile(t, repo, "bob", format, out); doc.Imported != 0 {
				t.Errorf("bob's export back into bob: imported %d, want 0 (%+v)", doc.Imported, doc.Report)
			}
		})
	}
}
