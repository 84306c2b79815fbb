// Package graphiti holds the test that reads memsync's Graphiti-shaped
// projection (issue 57, docs/design/graphiti.md) through graphiti-core's own
// API: a pinned graphiti-core from PyPI, installed once into a cache
// directory, against the test Neo4j. PyPI unreachable skips it with a note;
// every other failure fails.
package graphiti

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/memsync/realtools"
)

// graphitiVersion is the graphiti-core the test reads with: the newest of
// the 0.29–0.31 lines pip offered when it was written.
const graphitiVersion = "0.31.2"

// httpxVersion is installed beside it: graphiti_core.llm_client imports
// httpx, which graphiti-core 0.31.2 does not declare and today's openai
// (on httpx2) no longer brings.
const httpxVersion = "0.28.1"

// cacheDir is $MEMSYNC_E2E_CACHE, else a directory under os.TempDir().
func cacheDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("MEMSYNC_E2E_CACHE")
	if root == "" {
		root = filepath.Join(os.TempDir(), "memsync-graphiti")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// graphitiPython is the python of a venv holding graphiti-core, installed
// once per version.
func graphitiPython(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the graphiti-core test needs it")
	}
	return realtools.Venv(t, py, filepath.Join(cacheDir(t), "graphiti-core-"+graphitiVersion),
		"graphiti-core=="+graphitiVersion, "httpx=="+httpxVersion)
}

// buildMemsync compiles memsync and memsync-core into one directory.
func buildMemsync(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range []struct{ name, pkg string }{{"memsync-core", "../../memsync-core"}, {"memsync", "../../memsync"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b.name), b.pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return filepath.Join(dir, "memsync")
}

// memsyncCmd runs the memsync binary with only the Neo4j variables of
// memsync's own, and returns its stdout, trimmed.
func memsyncCmd(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMSYNC_") || strings.HasPrefix(kv, "MEMSYNC_NEO4J_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("memsync %v: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

type search struct {
	Query  string   `json:"query"`
	Groups []string `json:"groups"`
}

type observed struct {
	Foreign  any `json:"foreign"`
	Searches []struct {
		Facts []struct {
			Fact      string  `json:"fact"`
			GroupID   string  `json:"group_id"`
			Name      string  `json:"name"`
			InvalidAt *string `json:"invalid_at"`
			ExpiredAt *string `json:"expired_at"`
		} `json:"facts"`
		Nodes []struct {
			Name    string `json:"name"`
			GroupID string `json:"group_id"`
		} `json:"nodes"`
	} `json:"searches"`
	Episodes []struct {
		UUID    string `json:"uuid"`
		ValidAt string `json:"valid_at"`
		GroupID string `json:"group_id"`
	} `json:"episodes"`
}

// probe runs testdata/probe.py in mode with spec on stdin.
func probe(t *testing.T, py, mode string, spec map[string]any) observed {
	t.Helper()
	in, _ := json.Marshal(spec)
	cmd := exec.Command(py, "testdata/probe.py", mode)
	cmd.Stdin = bytes.NewReader(in)
	// No network: telemetry off, the OpenAI clients Graphiti makes by
	// default pointed at a closed loopback port (nothing here calls them).
	cmd.Env = append(os.Environ(), "NEO4J_URI="+neo4jtest.Config(t).URI, "GRAPHITI_TELEMETRY_ENABLED=false",
		"OPENAI_API_KEY=unused", "OPENAI_BASE_URL=http://127.0.0.1:9/v1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("probe.py %s: %v\n%s", mode, err, stderr.String())
	}
	var o observed
	if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
		t.Fatalf("probe.py %s: %v\n%s", mode, err, stdout.String())
	}
	return o
}

// TestGraphitiCoreReadsProjection: a repository seeded with the memsync
// binary and projected by sync --once --graphiti --graphiti-private, then
// rebuilt with them, is read by
// graphiti-core's BM25 search, which finds each group's memories when
// asked for that group and none of another's; retrieve_episodes lists the
// shared group in time order; the superseded memory's fact carries
// invalid_at; an episode graphiti-core saved itself survives a rebuild; a
// rebuild without --graphiti-private leaves no private group to read.
func TestGraphitiCoreReadsProjection(t *testing.T) {
	py := graphitiPython(t)
	neo4jtest.Open(t) // the cross-process lock on the test server, and a clean graph
	bin := buildMemsync(t)
	repo := t.TempDir()
	memsyncCmd(t, bin, "init", "--repo", repo, "--agent", "alice", "--agent", "bob")
	old := memsyncCmd(t, bin, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--scope", "shared", "The billing database is #postgres 14")
	time.Sleep(10 * time.Millisecond)
	cur := memsyncCmd(t, bin, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--scope", "shared", "--supersedes", old, "The billing database is #postgres 16")
	time.Sleep(10 * time.Millisecond)
	memsyncCmd(t, bin, "append", "--repo", repo, "--agent", "alice", "--kind", "decision", "alice keeps the kiwi recipe private")
	memsyncCmd(t, bin, "append", "--repo", repo, "--agent", "bob", "--kind", "decision", "bob plans the zebra launch")
	// The first projection is incremental (sync, as the daemon projects),
	// the later ones rebuilds.
	memsyncCmd(t, bin, "sync", "--once", "--repo", repo, "--graph", "neo4j", "--graphiti", "--graphiti-private")
	rebuild := []string{"rebuild", "--yes", "--repo", repo, "--graph", "neo4j", "--graphiti", "--graphiti-private"}

	afterSync := probe(t, py, "check", map[string]any{"searches": []search{{"zebra", []string{"AGENT_bob"}}, {"postgres", []string{"memsync"}}},
		"episode_groups": []string{"memsync"}, "foreign": "none"})
	if len(afterSync.Searches) != 2 || len(afterSync.Searches[0].Facts) == 0 || len(afterSync.Searches[1].Facts) < 2 || len(afterSync.Episodes) != 2 {
		t.Fatalf("after sync --once --graphiti --graphiti-private, graphiti-core read: %+v", afterSync)
	}
	foreign, _ := probe(t, py, "write", map[string]any{}).Foreign.(string)
	if foreign == "" {
		t.Fatal("graphiti-core saved no episode")
	}
	memsyncCmd(t, bin, rebuild...)

	searches := []search{
		{"postgres", []string{"memsync"}},
		{"postgres", []string{"AGENT_alice", "AGENT_bob"}},
		{"zebra", []string{"AGENT_bob"}},
		{"zebra", []string{"memsync", "AGENT_alice"}},
		{"kiwi", []string{"memsync", "AGENT_alice"}},
		{"kiwi", []string{"AGENT_bob", "main"}},
	}
	o := probe(t, py, "check", map[string]any{"searches": searches, "episode_groups": []string{"memsync"}, "foreign": foreign})
	t.Logf("graphiti-core read: %+v", o)
	if len(o.Searches) != len(searches) {
		t.Fatalf("%d search results, want %d", len(o.Searches), len(searches))
	}
	for i, c := range []struct {
		wantFacts, wantNodes int // at least; 0: none at all
	}{
		{2, 1}, // both postgres facts (ABOUT, SUPERSEDES...) and the postgres entity
		{0, 0},
		{1, 1},
		{0, 0},
		{1, 1},
		{0, 0},
	} {
		s, r := searches[i], o.Searches[i]
		allowed := map[string]bool{}
		for _, gid := range s.Groups {
			allowed[gid] = true
		}
		for _, f := range r.Facts {
			if !allowed[f.GroupID] || !strings.Contains(strings.ToLower(f.Fact), s.Query) {
				t.Errorf("search %q in %v: fact %q of group %s", s.Query, s.Groups, f.Fact, f.GroupID)
			}
		}
		for _, n := range r.Nodes {
			if !allowed[n.GroupID] {
				t.Errorf("search %q in %v: node %q of group %s", s.Query, s.Groups, n.Name, n.GroupID)
			}
		}
		if (c.wantFacts == 0) != (len(r.Facts) == 0) || len(r.Facts) < c.wantFacts || len(r.Nodes) < c.wantNodes || (c.wantNodes == 0 && len(r.Nodes) > 0) {
			t.Errorf("search %q in %v: %d facts and %d nodes, want at least %d and %d (none when 0)", s.Query, s.Groups, len(r.Facts), len(r.Nodes), c.wantFacts, c.wantNodes)
		}
	}
	// The superseded memory's facts are invalid, the current one's valid.
	var invalid, valid int
	for _, f := range o.Searches[0].Facts {
		switch {
		case strings.Contains(f.Fact, "14") && f.InvalidAt != nil && f.ExpiredAt != nil:
			invalid++
		case strings.Contains(f.Fact, "16") && f.InvalidAt == nil:
			valid++
		default:
			t.Errorf("fact %q (%s): invalid_at %v, expired_at %v", f.Fact, f.Name, f.InvalidAt, f.ExpiredAt)
		}
	}
	if invalid == 0 || valid == 0 {
		t.Errorf("postgres facts: %d invalid of 14, %d valid of 16; want both", invalid, valid)
	}
	var eps []string
	for _, e := range o.Episodes {
		if e.GroupID != "memsync" {
			t.Errorf("episode %s of group %s listed for memsync", e.UUID, e.GroupID)
		}
		eps = append(eps, e.UUID)
	}
	if want := []string{old, cur}; fmt.Sprint(eps) != fmt.Sprint(want) {
		t.Errorf("episodes of memsync %v, want %v in time order", eps, want)
	}
	if got, _ := o.Foreign.([]any); len(got) != 1 {
		t.Errorf("graphiti-core's own episode after a rebuild: %v, want it intact", o.Foreign)
	}

	// Without the second opt-in, a rebuild takes the private groups out:
	// asking graphiti-core for them by id finds nothing.
	memsyncCmd(t, bin, "rebuild", "--yes", "--repo", repo, "--graph", "neo4j", "--graphiti")
	private := []search{{"zebra", []string{"AGENT_bob"}}, {"kiwi", []string{"AGENT_alice"}}, {"postgres", []string{"memsync"}}}
	o = probe(t, py, "check", map[string]any{"searches": private, "episode_groups": []string{"AGENT_bob", "AGENT_alice"}, "foreign": foreign})
	if len(o.Searches) != 3 || len(o.Searches[0].Facts)+len(o.Searches[0].Nodes)+len(o.Searches[1].Facts)+len(o.Searches[1].Nodes) != 0 || len(o.Episodes) != 0 {
		t.Errorf("private groups readable through graphiti-core without --graphiti-private: %+v", o)
	}
	if len(o.Searches) == 3 && len(o.Searches[2].Facts) == 0 {
		t.Errorf("the shared group is gone too: %+v", o.Searches[2])
	}
	cleanForeign(t, py, foreign)
}

// cleanForeign deletes the episode graphiti-core wrote (unmarked: nothing
// of memsync's deletes it).
func cleanForeign(t *testing.T, py, uuid string) {
	t.Helper()
	cmd := exec.Command(py, "-c", `
import os, sys
from neo4j import GraphDatabase
d = GraphDatabase.driver(os.environ["NEO4J_URI"], auth=("neo4j", "unused"))
d.execute_query("MATCH (e:Episodic {uuid: $u}) DETACH DELETE e", u=sys.argv[1])
d.close()`, uuid)
	cmd.Env = append(os.Environ(), "NEO4J_URI="+neo4jtest.Config(t).URI)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("delete graphiti-core's episode: %v\n%s", err, out)
	}
}
