package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
)

var searchClock = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// srec is a journal record for the search tests; opts adjust it.
func srec(uuid, agent string, sec int, text string, opts ...func(*journal.Record)) journal.Record {
	r := journal.Record{
		UUID: uuid, TS: searchClock.Add(time.Duration(sec) * time.Second), Agent: agent,
		Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: text,
	}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func sShared(r *journal.Record) { r.Scope = journal.ScopeShared }

// searchRepo writes the records into agents' journals under a new repo.
func searchRepo(t *testing.T, recs ...journal.Record) string {
	t.Helper()
	repo := t.TempDir()
	for _, r := range recs {
		path := filepath.Join(layout(repo).JournalDir(r.Agent), journal.FileName(r.TS))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(r.Canonical(), '\n')); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return repo
}

// searchCorpus: a better and a weaker match, private memories of two
// agents, a supersession, and a hostile text.
func searchCorpus(t *testing.T) string {
	return searchRepo(t,
		srec("mem_weak", "alice", 1, "the deploy finished", sShared),
		srec("mem_strong", "bob", 2, "deploy rollback: the deploy failed, rollback the deploy", sShared,
			func(r *journal.Record) { r.Source = &journal.Source{Type: "observed", Actor: "ci"} }),
		srec("mem_alice_priv", "alice", 3, "alice private deploy notes ALICESECRET"),
		srec("mem_bob_priv", "bob", 4, "bob private deploy notes BOBSECRET"),
		srec("mem_old", "alice", 5, "kafka retention is 7 days", sShared),
		srec("mem_new", "alice", 6, "kafka retention is 3 days", sShared, func(r *journal.Record) { r.Supersedes = []string{"mem_old"} }),
		srec("mem_hostile", "alice", 7, `foo:bar AND ( "quoted" OR *`, sShared, func(r *journal.Record) { r.Kind = journal.KindDecision }),
	)
}

func syncRepo(t *testing.T, repo string) {
	t.Helper()
	if r := cli(t, "sync", "--once", "--repo", repo); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func decodeSearch(t *testing.T, r result) searchResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("search exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var out searchResult
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("search --json printed %q: %v", r.stdout, err)
	}
	return out
}

// lexicalIDs are the uuids of res's lexical hits, without the neighbours
// (factors.beside) the recipe brought in beside them: the corpus's
// sessionless records, seconds apart, are one agent's episode.
func lexicalIDs(res searchResult) []string {
	var out []string
	for _, h := range res.Results {
		if h.Factors.Beside == "" {
			out = append(out, h.UUID)
		}
	}
	return out
}

func hitIDs(res searchResult) []string {
	var out []string
	for _, h := range res.Results {
		out = append(out, h.UUID)
	}
	return out
}

// unreachableNeo4j points the configuration at a port nothing listens on.
var unreachableNeo4j = invocation{env: map[string]string{"MEMSYNC_NEO4J_URI": "bolt://127.0.0.1:1"}}

// checkSearchContract runs the same questions online and offline.
func checkSearchContract(t *testing.T, iv invocation, repo string, wantOffline bool) {
	t.Helper()
	res := decodeSearch(t, iv.run(t, "search", "deploy rollback", "--agent", "alice", "--json", "--repo", repo))
	if res.Offline != wantOffline {
		t.Fatalf("offline = %v, want %v", res.Offline, wantOffline)
	}
	got := hitIDs(res)
	if len(got) < 2 || got[0] != "mem_strong" || !slices.Contains(got, "mem_weak") || !slices.Contains(got, "mem_alice_priv") {
		t.Fatalf("alice's hits: %v", got)
	}
	if slices.Contains(got, "mem_bob_priv") {
		t.Fatalf("alice sees bob's private memory: %v", got)
	}
	top := res.Results[0]
	if top.Agent != "bob" || top.Kind != "fact" || top.TS != "2026-11-20T09:00:02Z" || top.Score <= res.Results[1].Score ||
		top.Path != "agents/bob/memory/journal/2026-11-20.jsonl" || top.Line != 1 || top.Scope != "shared" ||
		top.GroupID != "CONSTELLATION" || top.Source == nil || top.Source.Actor != "ci" || !strings.Contains(top.Text, "rollback") {
		t.Fatalf("top hit: %+v", top)
	}
	for _, h := range decodeSearch(t, iv.run(t, "search", "private notes", "--agent", "bob", "--json", "--repo", repo)).Results {
		if h.UUID == "mem_alice_priv" {
			t.Fatal("bob sees alice's private memory")
		}
	}
	// Supersession: hidden, then shown with --all.
	if got := lexicalIDs(decodeSearch(t, iv.run(t, "search", "kafka retention", "--agent", "bob", "--json", "--repo", repo))); !slices.Equal(got, []string{"mem_new"}) {
		t.Fatalf("kafka: %v", got)
	}
	all := decodeSearch(t, iv.run(t, "search", "kafka retention", "--agent", "bob", "--all", "--json", "--repo", repo))
	if got := lexicalIDs(all); len(got) != 2 || !slices.Contains(got, "mem_old") {
		t.Fatalf("kafka --all: %v", got)
	}
	for _, h := range all.Results {
		if h.UUID == "mem_old" && (h.ReplacedBy != "mem_new" || h.InvalidAt != "2026-11-20T09:00:06Z") {
			t.Fatalf("retired hit: %+v", h)
		}
	}
	// Hostile query text is data.
	hostile := decodeSearch(t, iv.run(t, "search", `foo:bar AND (`, "--agent", "alice", "--json", "--repo", repo))
	if got := hitIDs(hostile); len(got) == 0 || got[0] != "mem_hostile" {
		t.Fatalf("hostile query: %v", got)
	}
	for _, q := range []string{`"`, `*`, `)`, `NEAR(x y)`, `' OR 1=1 --`, `\`, `{}`, `((((`} {
		if r := iv.run(t, "search", q, "--agent", "alice", "--json", "--repo", repo); r.code != 0 {
			t.Fatalf("query %q: exit %d: %s", q, r.code, r.stderr)
		}
	}
	// Filters.
	if got := lexicalIDs(decodeSearch(t, iv.run(t, "search", "quoted deploy", "--agent", "alice", "--kind", "decision", "--json", "--repo", repo))); !slices.Equal(got, []string{"mem_hostile"}) {
		t.Fatalf("--kind decision: %v", got)
	}
	if got := lexicalIDs(decodeSearch(t, iv.run(t, "search", "deploy", "--agent", "alice", "--since", "2026-11-20T09:00:02Z", "--json", "--repo", repo))); !slices.Equal(got, []string{"mem_strong", "mem_alice_priv"}) {
		t.Fatalf("--since: %v", got)
	}
	if got := hitIDs(decodeSearch(t, iv.run(t, "search", "deploy", "--agent", "alice", "--limit", "1", "--json", "--repo", repo))); len(got) != 1 {
		t.Fatalf("--limit 1: %v", got)
	}
	// No match: exit 0, an empty list.
	none := iv.run(t, "search", "zzzunknownword", "--agent", "alice", "--json", "--repo", repo)
	if res := decodeSearch(t, none); res.Results == nil || len(res.Results) != 0 || !strings.Contains(none.stdout, `"results": []`) {
		t.Fatalf("no match: %s", none.stdout)
	}
}

func TestSearchEmbedded(t *testing.T) {
	repo := searchCorpus(t)
	syncRepo(t, repo)
	checkSearchContract(t, invocation{}, repo, false)
	if r := cli(t, "search", "deploy", "--agent", "alice", "--repo", repo); r.stderr != "" {
		t.Fatalf("online search wrote to stderr: %s", r.stderr)
	}
}

func TestSearchOffline(t *testing.T) {
	repo := searchCorpus(t)
	checkSearchContract(t, unreachableNeo4j, repo, true)
	r := unreachableNeo4j.run(t, "search", "deploy", "--agent", "alice", "--json", "--repo", repo)
	if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "offline") {
		t.Fatalf("want a one-line note on stderr, got %q", r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "{\n  \"offline\": true,\n  \"offline_reason\": ") {
		t.Fatalf("json: %s", r.stdout)
	}
}

// An embedded store that cannot be opened also sends search offline.
func TestSearchBrokenEmbeddedStore(t *testing.T) {
	repo := searchCorpus(t)
	if err := os.MkdirAll(layout(repo).LocalDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layout(repo).LocalDir(), "graph.db"), []byte("this is not a database, not at all, no"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := decodeSearch(t, cli(t, "search", "deploy", "--agent", "alice", "--json", "--repo", repo))
	if !res.Offline || len(res.Results) == 0 {
		t.Fatalf("broken store: %+v", res)
	}
}

func TestSearchText(t *testing.T) {
	repo := searchCorpus(t)
	r := unreachableNeo4j.run(t, "search", "deploy", "rollback", "--agent", "alice", "--limit", "2", "--repo", repo)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	if !strings.HasPrefix(lines[0], "1. [") || !strings.Contains(lines[0], "] fact 2026-11-20T09:00:02Z bob shared  agents/bob/memory/journal/2026-11-20.jsonl:1  mem_strong") {
		t.Fatalf("first line %q", lines[0])
	}
	if lines[1] != "   source: observed ci" || !strings.HasPrefix(lines[2], "   deploy rollback") || !strings.HasPrefix(lines[4], "2. [") {
		t.Fatalf("output:\n%s", r.stdout)
	}
	r = unreachableNeo4j.run(t, "search", "zzzunknownword", "--agent", "alice", "--repo", repo)
	if r.code != 0 || r.stdout != "no results\n" {
		t.Fatalf("no results: %d %q", r.code, r.stdout)
	}
}

func TestSearchUsage(t *testing.T) {
	repo := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "x"}, "--agent: required"},
		{[]string{"search", "--agent", "alice"}, "QUERY: required"},
		{[]string{"search", "  ", "--agent", "alice"}, "QUERY: required"},
		{[]string{"search", "x", "--agent", "../etc"}, "invalid agent name"},
		{[]string{"search", "x", "--agent", "alice", "--kind", "gossip"}, `unknown kind "gossip"`},
		{[]string{"search", "x", "--agent", "alice", "--kind", "fact,nope"}, `unknown kind "nope"`},
		{[]string{"search", "x", "--agent", "alice", "--since", "last tuesday"}, "--since"},
		{[]string{"search", "x", "--agent", "alice", "--limit", "0"}, "--limit"},
		{[]string{"search", "x", "--agent", "alice", "--limit", "many"}, "limit"},
		{[]string{"search", "x", "--agent", "alice", "--bogus"}, "bogus"},
	} {
		r := cli(t, append(tc.args, "--repo", repo)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if r := cli(t, "search", "--help"); r.code != 0 || !strings.Contains(r.stdout, "usage: memsync search QUERY --agent A") {
		t.Fatalf("--help: %d %q", r.code, r.stdout)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-11-20T09:00:00+02:00": time.Date(2026, 11, 20, 7, 0, 0, 0, time.UTC),
		"2026-11-20":                time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC),
		"7d":                        now.AddDate(0, 0, -7),
		"36h":                       now.Add(-36 * time.Hour),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-3d", "-1h", "last tuesday", "2026-13-01"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) accepted", bad)
		}
	}
}

// The same contract against the Neo4j server named by MEMSYNC_NEO4J_URI
// (skipped without one, failed with MEMSYNC_REQUIRE_NEO4J=1).
func TestSearchNeo4j(t *testing.T) {
	neo4jtest.Open(t) // an empty graph, and the server to this test alone
	iv := invocation{env: map[string]string{}}
	for _, k := range []string{"MEMSYNC_NEO4J_URI", "MEMSYNC_NEO4J_USER", "MEMSYNC_NEO4J_PASSWORD", "MEMSYNC_NEO4J_DATABASE"} {
		iv.env[k] = os.Getenv(k)
	}
	repo := searchCorpus(t)
	if r := iv.run(t, "sync", "--once", "--repo", repo); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkSearchContract(t, iv, repo, false)
	if r := iv.run(t, "cache", "--repo", repo); r.code != 0 || !strings.Contains(r.stdout, "alice: ") {
		t.Fatalf("cache: %d %s %s", r.code, r.stdout, r.stderr)
	}
	bob, _ := os.ReadFile(filepath.Join(cacheDir(repo, "bob"), "GRAPHITI_FACTS.md"))
	if strings.Contains(string(bob), "ALICESECRET") || !strings.Contains(string(bob), "BOBSECRET") {
		t.Fatalf("bob's snapshot from Neo4j:\n%s", bob)
	}
}

// TestSearchDashQuery: a query that begins with - is taken after -- and in
// --query; without either, the error says how to ask for it. A query of
// stopwords only finds nothing and is not an error.
func TestSearchDashQuery(t *testing.T) {
	repo := searchRepo(t, srec("mem_dash", "alice", 1, "the -foo flag broke the build", sShared))
	syncRepo(t, repo)
	for _, args := range [][]string{
		{"search", "--agent", "alice", "--json", "--repo", repo, "--", "-foo"},
		{"search", "--agent", "alice", "--json", "--repo", repo, "--query", "-foo"},
		{"search", "--query=-foo", "--agent", "alice", "--json", "--repo", repo, "build"},
	} {
		res := decodeSearch(t, cli(t, args...))
		if len(res.Results) != 1 || res.Results[0].UUID != "mem_dash" {
			t.Errorf("%q: %+v, want mem_dash", args, res.Results)
		}
	}
	r := cli(t, "search", "-foo", "--agent", "alice", "--repo", repo)
	if r.code != 2 || !strings.Contains(r.stderr, "-- -foo") || !strings.Contains(r.stderr, "--query") {
		t.Errorf("search -foo: exit %d, stderr %q: want 2 and how to search for -foo", r.code, r.stderr)
	}
	res := decodeSearch(t, cli(t, "search", "--agent", "alice", "--json", "--repo", repo, "what", "is", "the"))
	if len(res.Results) != 0 {
		t.Errorf("a stopword-only query found %+v", res.Results)
	}
}

// TestSearchTagOnlyMatch is issue 49's repro: a memory only tagged with
// one query term does not count as holding every term, so the one whose
// text says the other comes first, and explain says where each term is.
func TestSearchTagOnlyMatch(t *testing.T) {
	repo := searchRepo(t,
		srec("mem_hooks", "a", 1, "Upgrade webhooks dependencies", func(r *journal.Record) { r.Kind, r.Tags = journal.KindTask, []string{"billing"} }),
		srec("mem_pg", "a", 2, "Keep postgres as is", func(r *journal.Record) { r.Kind = journal.KindTask }),
	)
	syncRepo(t, repo)
	for _, inv := range []invocation{{}, unreachableNeo4j} {
		res := decodeSearch(t, inv.run(t, "search", "postgres", "billing", "--agent", "a", "--json", "--repo", repo))
		if len(res.Results) != 2 || res.Results[0].UUID != "mem_pg" {
			t.Fatalf("offline %v: %+v, want mem_pg first", res.Offline, res.Results)
		}
		if f := res.Results[0].Factors; f.Terms != 1 || f.Held != "text: postgres" {
			t.Errorf("mem_pg factors %+v", f)
		}
		if f := res.Results[1].Factors; f.Terms != 1 || f.Held != "tag: billing" {
			t.Errorf("mem_hooks factors %+v", f)
		}
		r := inv.run(t, "search", "postgres", "billing", "--agent", "a", "--explain", "--repo", repo)
		if !strings.Contains(r.stdout, "holds 1 query term (tag: billing)") {
			t.Errorf("explain:\n%s", r.stdout)
		}
	}
}

// TestSearchExplainsEpisodesAndTime: --explain and --json name a
// sessionless neighbour's source and how it came (its episode), and the
// date factor of a hit whose ts falls in the time the query names.
func TestSearchExplainsEpisodesAndTime(t *testing.T) {
	repo := searchRepo(t,
		srec("ep_q", "alice", 1, "what did you paint for the harbour show?", sShared),
		srec("ep_a", "alice", 2, "a sunrise over a lake, in oils", sShared),
	)
	syncRepo(t, repo)
	for _, iv := range []invocation{{}, unreachableNeo4j} {
		res := decodeSearch(t, iv.run(t, "search", "paint harbour", "--agent", "alice", "--json", "--repo", repo))
		var a *searchHit
		for i := range res.Results {
			if res.Results[i].UUID == "ep_a" {
				a = &res.Results[i]
			}
		}
		if a == nil || a.Factors.Beside != "ep_q" || a.Factors.Via != "episode" {
			t.Fatalf("offline %v: the next turn is no episode neighbour of ep_q: %+v", res.Offline, res.Results)
		}
		month := searchClock.Format("January 2006")
		res = decodeSearch(t, iv.run(t, "search", "harbour in "+month, "--agent", "alice", "--json", "--repo", repo))
		if len(res.Results) == 0 || res.Results[0].UUID != "ep_q" || res.Results[0].Factors.DateMatch != 3 {
			t.Fatalf("offline %v: %q: %+v, want ep_q with date_match 3", res.Offline, "harbour in "+month, res.Results)
		}
		out := iv.run(t, "search", "paint harbour in "+month, "--agent", "alice", "--explain", "--repo", repo).stdout
		if !strings.Contains(out, "episode neighbour of ep_q") || !strings.Contains(out, "date match 3.00") {
			t.Fatalf("offline %v: explain does not name the episode and the date:\n%s", res.Offline, out)
		}
	}
}
