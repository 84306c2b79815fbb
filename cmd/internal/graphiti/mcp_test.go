package graphiti

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/memsync/realtools"
)

// mcpServerCommit is the getzep/graphiti commit whose mcp_server/src the
// test runs (mcpServerSource).
const mcpServerCommit = "993e081a6d79"

// mcpServerEnv names the directory holding Graphiti's MCP server source:
// mcp_server/src of github.com/getzep/graphiti at mcpServerCommit.
// Graphiti publishes that server as source and container images, not as a
// package a registry serves, and memsync does not carry another project's
// source; without the variable the test is a skip that says so.
const mcpServerEnv = "MEMSYNC_GRAPHITI_MCP_SRC"

// mcpServerSource is the server's source directory (mcpServerEnv), or a
// skip.
func mcpServerSource(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(mcpServerEnv)
	if dir == "" {
		t.Skip("Graphiti's MCP server is published as source only (github.com/getzep/graphiti, mcp_server/src), not on a registry: set " +
			mcpServerEnv + " to that directory at commit " + mcpServerCommit + " to run this test")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, "graphiti_mcp_server.py")); err != nil {
		t.Fatalf("%s=%s: not Graphiti's mcp_server/src (%v)", mcpServerEnv, dir, err)
	}
	return abs
}

// mcpPackages are the server's dependencies, pinned as that commit's
// mcp_server/uv.lock pins them, with the graphiti-core the other test
// reads with (the server asks for >= 0.29.2) and httpx beside it (see
// httpxVersion).
var mcpPackages = []string{
	"graphiti-core[falkordb]==" + graphitiVersion, "mcp==1.27.2", "openai==2.43.0",
	"pydantic-settings==2.10.1", "pyyaml==6.0.3", "python-dotenv==1.2.2", "httpx==" + httpxVersion,
}

// fakeOpenAI serves an OpenAI-compatible /v1/embeddings on loopback: the
// MCP server's search tools embed the query for the cosine leg of their
// hybrid search (the shape stores no vectors, so that leg finds nothing
// and BM25 answers). Any other request (a chat completion: the LLM) is
// counted and refused; the read tools must never make one.
func fakeOpenAI(t *testing.T, dim int) (url string, llmCalls *atomic.Int64) {
	t.Helper()
	llmCalls = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings") {
			llmCalls.Add(1)
			http.Error(w, `{"error": {"message": "no LLM here"}}`, http.StatusInternalServerError)
			return
		}
		var req struct {
			Input any    `json:"input"`
			Model string `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := 1
		if l, ok := req.Input.([]any); ok {
			n = len(l)
		}
		vec := make([]float64, dim)
		for i := range vec {
			vec[i] = 1 / float64(i+1)
		}
		data := make([]map[string]any, n)
		for i := range data {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": vec}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", llmCalls
}

// mcpConfig is the server's configuration: stdio, the test Neo4j, the
// fake on loopback for the LLM and the embedder (a placeholder key: the
// server does not start without one, see mcpNoKey), group memsync.
const mcpConfig = `server:
  transport: stdio
llm:
  provider: openai
  model: fake-llm
  providers:
    openai:
      api_key: placeholder
      api_url: %[1]s
embedder:
  provider: openai
  model: fake-embedder
  dimensions: 8
  providers:
    openai:
      api_key: placeholder
      api_url: %[1]s
database:
  provider: neo4j
  providers:
    neo4j:
      uri: %[2]s
      username: neo4j
      password: unused
      database: %[3]s
graphiti:
  group_id: memsync
`

type mcpCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

type mcpAnswer struct {
	IsError bool `json:"is_error"`
	Result  struct {
		Error string `json:"error"`
		Facts []struct {
			Fact      string  `json:"fact"`
			Name      string  `json:"name"`
			GroupID   string  `json:"group_id"`
			InvalidAt *string `json:"invalid_at"`
		} `json:"facts"`
		Nodes []struct {
			Name    string `json:"name"`
			GroupID string `json:"group_id"`
		} `json:"nodes"`
		Episodes []struct {
			UUID    string `json:"uuid"`
			GroupID string `json:"group_id"`
			Content string `json:"content"`
		} `json:"episodes"`
	} `json:"result"`
}

// mcpProbe starts Graphiti's MCP server over stdio with cfg and makes
// calls (testdata/mcp_probe.py); it returns the server's tools and answers.
func mcpProbe(t *testing.T, py, server, cfg, fake string, calls []mcpCall) ([]string, []mcpAnswer) {
	t.Helper()
	in, _ := json.Marshal(calls)
	cmd := exec.Command(py, "testdata/mcp_probe.py", server, cfg)
	cmd.Stdin = bytes.NewReader(in)
	// Nothing leaves loopback: telemetry off, every OpenAI variable the
	// server or its clients read pointed at the fake.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GRAPHITI_TELEMETRY_ENABLED=false", "OPENAI_API_KEY=placeholder",
		"OPENAI_BASE_URL="+fake, "OPENAI_API_URL="+fake)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp_probe.py: %v\n%s", err, tail(stderr.String(), 4000))
	}
	var out struct {
		Tools   []string    `json:"tools"`
		Answers []mcpAnswer `json:"answers"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out.Answers) != len(calls) {
		t.Fatalf("mcp_probe.py: %v, %d answers to %d calls\n%s\n%s", err, len(out.Answers), len(calls), stdout.String(), tail(stderr.String(), 4000))
	}
	return out.Tools, out.Answers
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestGraphitiMCPServerReadsProjection: Graphiti's own MCP server (its
// source at mcpServerCommit, its dependencies from PyPI), started over
// stdio against the test Neo4j with no LLM (a fake on loopback that only
// embeds), reads memsync's projection of a seeded repository through its
// read tools: search_memory_facts and search_nodes find each group's
// memories when asked for that group and none of another's, the
// superseded fact carries invalid_at, and get_episodes lists a group's
// memories newest first (the server orders by uuid, and memsync's uuids
// begin with their time), the configured group memsync when none is
// named. No LLM call is made.
func TestGraphitiMCPServerReadsProjection(t *testing.T) {
	pyBin, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Graphiti MCP server test needs it")
	}
	server := mcpServerSource(t)
	py := realtools.Venv(t, pyBin, filepath.Join(cacheDir(t), "graphiti-mcp-"+mcpServerCommit+"-core-"+graphitiVersion), mcpPackages...)
	neo4jtest.Open(t) // the cross-process lock on the test server, and a clean graph
	bin := buildMemsync(t)
	repo := t.TempDir()
	memsyncCmd(t, bin, "init", "--repo", repo, "--agent", "alice", "--agent", "bob")
	old := memsyncCmd(t, bin, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--scope", "shared", "The billing database is #postgres 14")
	time.Sleep(10 * time.Millisecond)
	cur := memsyncCmd(t, bin, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--scope", "shared", "--supersedes", old, "The billing database is #postgres 16")
	kiwi := memsyncCmd(t, bin, "append", "--repo", repo, "--agent", "alice", "--kind", "decision", "alice keeps the kiwi recipe private")
	memsyncCmd(t, bin, "append", "--repo", repo, "--agent", "bob", "--kind", "decision", "bob plans the zebra launch")
	memsyncCmd(t, bin, "sync", "--once", "--repo", repo, "--graph", "neo4j", "--graphiti", "--graphiti-private")

	fake, llmCalls := fakeOpenAI(t, 8)
	nc := neo4jtest.Config(t)
	db := nc.Database
	if db == "" {
		db = "neo4j"
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(mcpConfig, fake, nc.URI, db)), 0o600); err != nil {
		t.Fatal(err)
	}
	facts := func(q string, groups ...string) mcpCall {
		return mcpCall{"search_memory_facts", map[string]any{"query": q, "group_ids": groups, "max_facts": 20}}
	}
	nodes := func(q string, groups ...string) mcpCall {
		return mcpCall{"search_nodes", map[string]any{"query": q, "group_ids": groups, "max_nodes": 20}}
	}
	calls := []mcpCall{
		facts("postgres", "memsync"),
		facts("postgres", "AGENT_alice", "AGENT_bob"),
		facts("zebra", "AGENT_bob"),
		facts("zebra", "memsync", "AGENT_alice"),
		nodes("postgres", "memsync"),
		nodes("kiwi", "AGENT_alice"),
		nodes("kiwi", "AGENT_bob", "main"),
		{"get_episodes", map[string]any{"group_ids": []string{"memsync"}}},
		{"get_episodes", map[string]any{"group_ids": []string{"AGENT_alice"}}},
		{"get_episodes", map[string]any{}},
	}
	tools, answers := mcpProbe(t, py, server, cfg, fake, calls)
	t.Logf("tools: %v", tools)
	for i, a := range answers {
		if a.IsError || a.Result.Error != "" {
			t.Fatalf("%s %v: error %q", calls[i].Tool, calls[i].Args, a.Result.Error)
		}
	}
	// Facts and nodes: at least (or, for 0, exactly) so many, each of a
	// group asked for and about the query.
	for i, want := range []int{2, 0, 1, 0, 1, 1, 0} {
		c, r := calls[i], answers[i].Result
		allowed := map[string]bool{}
		for _, g := range c.Args["group_ids"].([]string) {
			allowed[g] = true
		}
		q := c.Args["query"].(string)
		n := len(r.Facts) + len(r.Nodes)
		for _, f := range r.Facts {
			if !allowed[f.GroupID] || !strings.Contains(strings.ToLower(f.Fact), q) {
				t.Errorf("%s %v: fact %q of group %s", c.Tool, c.Args, f.Fact, f.GroupID)
			}
		}
		for _, nd := range r.Nodes {
			if !allowed[nd.GroupID] {
				t.Errorf("%s %v: node %q of group %s", c.Tool, c.Args, nd.Name, nd.GroupID)
			}
		}
		if n < want || (want == 0 && n != 0) {
			t.Errorf("%s %v: %d results, want at least %d (none when 0)", c.Tool, c.Args, n, want)
		}
	}
	var invalid, valid int
	for _, f := range answers[0].Result.Facts {
		switch {
		case strings.Contains(f.Fact, "14") && f.InvalidAt != nil:
			invalid++
		case strings.Contains(f.Fact, "16") && f.InvalidAt == nil:
			valid++
		default:
			t.Errorf("fact %q (%s): invalid_at %v", f.Fact, f.Name, f.InvalidAt)
		}
	}
	if invalid == 0 || valid == 0 {
		t.Errorf("postgres facts through the MCP server: %d invalid of 14, %d valid of 16; want both", invalid, valid)
	}
	var postgres bool
	for _, nd := range answers[4].Result.Nodes {
		postgres = postgres || strings.TrimPrefix(nd.Name, "#") == "postgres"
	}
	if !postgres {
		t.Errorf("search_nodes postgres in memsync: %+v, want the entity postgres", answers[4].Result.Nodes)
	}
	episodes := func(a mcpAnswer) (out []string) {
		for _, e := range a.Result.Episodes {
			out = append(out, e.UUID+"@"+e.GroupID)
		}
		return out
	}
	if got, want := episodes(answers[7]), []string{cur + "@memsync", old + "@memsync"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("get_episodes memsync: %v, want %v", got, want)
	}
	if got, want := episodes(answers[8]), []string{kiwi + "@AGENT_alice"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("get_episodes AGENT_alice: %v, want %v", got, want)
	}
	if got, want := episodes(answers[9]), []string{cur + "@memsync", old + "@memsync"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("get_episodes with no group (the configured memsync): %v, want %v", got, want)
	}
	if n := llmCalls.Load(); n != 0 {
		t.Errorf("the read tools made %d LLM requests", n)
	}
}
