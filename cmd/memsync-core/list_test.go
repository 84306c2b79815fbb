package main

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
)

// listCorpus: shared and private memories of alice and bob, of two kinds,
// one a second apart, and carol with none of her own.
func listCorpus(t *testing.T) string {
	repo := searchRepo(t,
		srec("mem_l1", "alice", 1, "alice shared fact one", sShared),
		srec("mem_l2", "bob", 2, "bob private BOBSECRET"),
		srec("mem_l3", "alice", 3, "alice private note"),
		srec("mem_l4", "bob", 4, "bob shared decision", sShared, func(r *journal.Record) { r.Kind = journal.KindDecision }),
		srec("mem_l5", "alice", 5, "alice shared decision", sShared, func(r *journal.Record) { r.Kind = journal.KindDecision }),
		srec("mem_l6", "bob", 6, "bob private later BOBSECRET"),
	)
	if err := os.MkdirAll(memoryDir(repo, "carol"), 0o755); err != nil {
		t.Fatal(err)
	}
	return repo
}

func decodeList(t *testing.T, r result) listResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("list exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var out listResult
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("list --json printed %q: %v", r.stdout, err)
	}
	return out
}

// checkListContract asks the same questions of one reader: the graph
// (iv's configuration, after a sync) or the journals (offline).
func checkListContract(t *testing.T, iv invocation, repo string, wantOffline bool) {
	t.Helper()
	now := searchClock.Add(10 * 1e9)
	iv.now = now
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// Newest first; shared plus the reader's own, never another's private.
		{[]string{"--agent", "alice"}, []string{"mem_l5", "mem_l4", "mem_l3", "mem_l1"}},
		{[]string{"--agent", "bob"}, []string{"mem_l6", "mem_l5", "mem_l4", "mem_l2", "mem_l1"}},
		{[]string{"--agent", "carol"}, []string{"mem_l5", "mem_l4", "mem_l1"}},
		{[]string{"--agent", "alice", "--kind", "decision"}, []string{"mem_l5", "mem_l4"}},
		{[]string{"--agent", "alice", "--kind", "fact,decision", "--limit", "2"}, []string{"mem_l5", "mem_l4"}},
		{[]string{"--agent", "alice", "--limit", "1"}, []string{"mem_l5"}},
		// --since: the newest at or after T (9 seconds before now: ts 1 is out).
		{[]string{"--agent", "alice", "--since", "8s"}, []string{"mem_l5", "mem_l4", "mem_l3"}},
		{[]string{"--agent", "alice", "--since", searchClock.Add(4 * 1e9).Format("2006-01-02T15:04:05Z07:00")}, []string{"mem_l5", "mem_l4"}},
		{[]string{"--agent", "alice", "--since", "1s"}, []string{}},
	} {
		r := iv.run(t, append([]string{"list", "--json", "--repo", repo}, tc.args...)...)
		res := decodeList(t, r)
		var got []string
		for _, m := range res.Results {
			got = append(got, m.UUID)
		}
		if got == nil {
			got = []string{}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("list %q: %q, want %q", tc.args, got, tc.want)
		}
		wantSource := map[bool]string{false: "graph", true: "journals"}[wantOffline]
		if res.Offline != wantOffline || res.Source != wantSource {
			t.Errorf("list %q: offline %v source %q, want %v %q", tc.args, res.Offline, res.Source, wantOffline, wantSource)
		}
		if strings.Contains(r.stdout, "BOBSECRET") != (tc.args[1] == "bob") {
			t.Errorf("list %q: bob's private text leaked or missing:\n%s", tc.args, r.stdout)
		}
	}
	r := iv.run(t, "list", "--agent", "alice", "--limit", "2", "--repo", repo)
	want := "2 memories visible to alice, newest first (from the " + map[bool]string{false: "graph", true: "journals"}[wantOffline] + ")\n"
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) || !strings.Contains(r.stdout, "decision alice shared") ||
		!strings.Contains(r.stdout, "   alice shared decision\n") {
		t.Errorf("list text: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestListEmbedded(t *testing.T) {
	repo := listCorpus(t)
	syncRepo(t, repo)
	checkListContract(t, invocation{}, repo, false)
}

func TestListOffline(t *testing.T) {
	repo := listCorpus(t)
	checkListContract(t, unreachableNeo4j, repo, true)
	r := unreachableNeo4j.run(t, "list", "--agent", "alice", "--repo", repo)
	if !strings.Contains(r.stderr, "graph unavailable") {
		t.Errorf("offline list says nothing on stderr: %q", r.stderr)
	}
}

// The same contract against the Neo4j server named by MEMSYNC_NEO4J_URI
// (skipped without one, failed with MEMSYNC_REQUIRE_NEO4J=1).
func TestListNeo4j(t *testing.T) {
	neo4jtest.Open(t) // an empty graph, and the server to this test alone
	iv := invocation{env: map[string]string{}}
	for _, k := range []string{"MEMSYNC_NEO4J_URI", "MEMSYNC_NEO4J_USER", "MEMSYNC_NEO4J_PASSWORD", "MEMSYNC_NEO4J_DATABASE"} {
		iv.env[k] = os.Getenv(k)
	}
	repo := listCorpus(t)
	if r := iv.run(t, "sync", "--once", "--repo", repo); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkListContract(t, iv, repo, false)
}

func TestListUsage(t *testing.T) {
	repo := listCorpus(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "--agent: required"},
		{[]string{"list", "--agent", "../x"}, "invalid agent name"},
		{[]string{"list", "--agent", "alcie"}, `--agent: unknown agent "alcie" in ` + repo + "; did you mean alice? (agents: alice, bob, carol)"},
		{[]string{"list", "--agent", "alice", "--kind", "gossip"}, `unknown kind "gossip"`},
		{[]string{"list", "--agent", "alice", "--since", "last tuesday"}, "--since"},
		{[]string{"list", "--agent", "alice", "--limit", "0"}, "--limit: must be at least 1"},
		{[]string{"list", "--agent", "alice", "extra"}, `unexpected argument "extra"`},
		{[]string{"list", "--agnet", "alice"}, "unknown flag --agnet; did you mean --agent?"},
	} {
		r := cli(t, append(tc.args, "--repo", repo)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

func TestAgents(t *testing.T) {
	repo := listCorpus(t)
	r := cli(t, "agents", "--json", "--repo", repo)
	var doc struct {
		Agents []agentInfo `json:"agents"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &doc) != nil {
		t.Fatalf("agents --json: %d %q %q", r.code, r.stdout, r.stderr)
	}
	want := []agentInfo{
		{Agent: "alice", Records: 3, Shared: 2, Private: 1, Newest: "2026-11-20T09:00:05Z"},
		{Agent: "bob", Records: 3, Shared: 1, Private: 2, Newest: "2026-11-20T09:00:06Z"},
		{Agent: "carol"},
	}
	if !reflect.DeepEqual(doc.Agents, want) {
		t.Errorf("agents: %+v\nwant %+v", doc.Agents, want)
	}
	r = cli(t, "agents", "--repo", repo)
	for _, line := range []string{
		"agent  records  shared  private  newest\n",
		"alice  3        2       1        2026-11-20T09:00:05Z\n",
		"carol  0        0       0        -\n",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, line) {
			t.Errorf("agents text lacks %q:\n%s", line, r.stdout)
		}
	}
	empty := t.TempDir()
	if err := os.Mkdir(empty+"/agents", 0o755); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, "agents", "--json", "--repo", empty); r.code != 0 || !strings.Contains(r.stdout, `"agents": []`) {
		t.Errorf("no agents: %d %q", r.code, r.stdout)
	}
	if r := cli(t, "agents", "extra", "--repo", repo); r.code != exitUsage {
		t.Errorf("agents extra: %d", r.code)
	}
}
