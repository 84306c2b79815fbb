package mcpclients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/realtools"
)

// The clients, pinned. Inspector 0.21.2 is the last release of the line
// whose CLI mode runs on Node 20 (later lines declare Node 22).
const (
	pythonMCPVersion = "2.3.0"
	inspectorVersion = "0.21.2"
)

// cacheDir is where the clients are installed, once for every run:
// $MEMSYNC_TEST_CACHE, else the user's cache directory, under
// memsync-test/mcpclients.
func cacheDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("MEMSYNC_TEST_CACHE")
	if root == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("cache directory: %v", err)
		}
		root = filepath.Join(dir, "memsync-test")
	}
	dir := filepath.Join(root, "mcpclients")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildMemsync compiles memsync and memsync-core into one directory, as
// they are installed, once per test binary run; it returns the front.
var buildMemsync = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "memsync-mcpclients-")
	if err != nil {
		return "", err
	}
	for _, b := range []struct{ name, pkg string }{{"memsync-core", "../../memsync-core"}, {"memsync", "../../memsync"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b.name), b.pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return filepath.Join(dir, "memsync"), nil
})

// fixture is a repository where planner has a private decision and a
// shared observation and critic a private decision, projected.
type fixture struct {
	bin, repo        string
	decision, hidden string // planner's decision, critic's private one
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	bin, err := buildMemsync()
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{bin: bin, repo: t.TempDir()}
	f.run(t, "init", "--repo", f.repo, "--agent", "planner", "--agent", "critic")
	f.decision = f.run(t, "append", "--repo", f.repo, "--agent", "planner", "--kind", "decision", "--why", "cheaper at our size",
		"Use #postgres for the billing service database")
	f.run(t, "append", "--repo", f.repo, "--agent", "planner", "--kind", "observation", "--scope", "shared", "Billing deploys happen on Tuesdays")
	f.hidden = f.run(t, "append", "--repo", f.repo, "--agent", "critic", "--kind", "decision",
		"critic-private: the billing service database password rotates monthly")
	f.run(t, "sync", "--once", "--repo", f.repo)
	return f
}

// run runs memsync with a clean environment and returns its stdout, trimmed.
func (f fixture) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(f.bin, args...)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("memsync %v: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// cleanEnv is this process's environment less memsync's own variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMSYNC_") {
			env = append(env, kv)
		}
	}
	return env
}

// journals is every journal line of agent.
func (f fixture) journals(t *testing.T, agent string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(f.repo, "agents", agent, "memory", "journal", "*.jsonl"))
	var all strings.Builder
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

// unknownUUID names no memory; critic's private one must be answered as it is.
const unknownUUID = "mem_20200101T000000Z_critic_0099"

// learning is a learning-tier memory: the first remember stores it, the
// same again is skipped by the surprise gate.
var learning = map[string]any{"text": "The staging cluster restarts every night at 02:00 UTC for patching", "kind": "observation", "tier": "learning"}

// toolResult is a tools/call result as a client parsed it.
type toolResult struct {
	IsError    bool            `json:"is_error"`
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured"`
}

// checkCalls checks the answers to the calls every client makes (see
// clientCalls), in order.
func checkCalls(t *testing.T, f fixture, tools []map[string]any, res []toolResult) {
	t.Helper()
	var names []string
	for _, tool := range tools {
		names = append(names, fmt.Sprint(tool["name"]))
		if tool["name"] == "remember" {
			raw, _ := json.Marshal(tool["inputSchema"])
			var sc struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			}
			var want []string
			for _, k := range journal.AgentKinds {
				want = append(want, string(k))
			}
			if json.Unmarshal(raw, &sc) != nil || !slices.Equal(sc.Properties["kind"].Enum, want) {
				t.Errorf("remember's kind enum as the client read it: %s", raw)
			}
		}
	}
	slices.Sort(names)
	if want := "explain flag packet record_outcome remember search session_context status support"; strings.Join(names, " ") != want {
		t.Errorf("tools %v, want %s", names, want)
	}
	if len(res) != len(clientCalls(f)) {
		t.Fatalf("%d results for %d calls", len(res), len(clientCalls(f)))
	}
	search, stored, skipped, internal, outcome, hiddenOutcome, unknownOutcome, hiddenSupport, ctx :=
		res[0], res[1], res[2], res[3], res[4], res[5], res[6], res[7], res[8]
	if search.IsError || !regexp.MustCompile(`(?m)^\d\.\d\d decision `+regexp.QuoteMeta(f.decision)+`: Use #postgres`).MatchString(search.Text) ||
		strings.Contains(search.Text+string(search.Structured), "critic-private") || !strings.Contains(string(search.Structured), f.decision) {
		t.Errorf("search: %+v", search)
	}
	if stored.IsError || !strings.HasPrefix(stored.Text, "Remembered as mem_") || !strings.Contains(string(stored.Structured), `"uuid":`) {
		t.Errorf("remember, stored: %+v", stored)
	}
	var skip struct {
		Skipped  bool     `json:"skipped"`
		Reason   string   `json:"reason"`
		Surprise *float64 `json:"surprise"`
	}
	if skipped.IsError || !strings.HasPrefix(skipped.Text, "skipped: surprise ") || json.Unmarshal(skipped.Structured, &skip) != nil ||
		!skip.Skipped || skip.Reason == "" || skip.Surprise == nil {
		t.Errorf("remember, skipped: %+v", skipped)
	}
	if !internal.IsError || !strings.Contains(internal.Text, "only memsync writes") || !strings.Contains(internal.Text, "decision, preference") {
		t.Errorf("remember of kind feedback: %+v", internal)
	}
	if outcome.IsError || !strings.HasPrefix(outcome.Text, "Remembered as mem_") {
		t.Errorf("record_outcome: %+v", outcome)
	}
	same := func(a toolResult, aID string, b toolResult, bID string) bool {
		return a.IsError && b.IsError && strings.ReplaceAll(a.Text, aID, "U") == strings.ReplaceAll(b.Text, bID, "U")
	}
	if !same(hiddenOutcome, f.hidden, unknownOutcome, unknownUUID) || !strings.Contains(unknownOutcome.Text, "no such memory visible") ||
		!same(hiddenSupport, f.hidden, unknownOutcome, unknownUUID) || strings.Contains(hiddenOutcome.Text+hiddenSupport.Text, "rotates") {
		t.Errorf("a memory planner cannot see, answered unlike an unknown one: outcome %+v, support %+v, unknown %+v", hiddenOutcome, hiddenSupport, unknownOutcome)
	}
	if ctx.IsError || strings.HasPrefix(strings.TrimSpace(ctx.Text), "{") || !strings.Contains(ctx.Text, "# memsync: the memory of agent planner") {
		t.Errorf("session_context: %+v", ctx)
	}
	// Written: the stored memory and the outcome, in planner's journal;
	// critic's journal is as it was.
	lines := strings.Split(strings.TrimSpace(f.journals(t, "planner")), "\n")
	var outcomes int
	for _, l := range lines {
		r, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind == journal.KindOutcome && r.Result() == journal.ResultSuccess && slices.Equal(r.Links, []string{f.decision}) {
			outcomes++
		}
	}
	if len(lines) != 4 || outcomes != 1 {
		t.Errorf("planner's journal, %d lines, %d outcomes:\n%s", len(lines), outcomes, strings.Join(lines, "\n"))
	}
	if got := f.journals(t, "critic"); strings.Count(got, "\n") != 1 {
		t.Errorf("critic's journal changed:\n%s", got)
	}
}

// clientCalls are the calls every client makes, in order.
func clientCalls(f fixture) []call {
	return []call{
		{"search", map[string]any{"query": "billing service database", "limit": 10}},
		{"remember", learning},
		{"remember", learning},
		{"remember", map[string]any{"text": "that memory is wrong", "kind": "feedback"}},
		{"record_outcome", map[string]any{"result": "success", "decisions": []string{f.decision}, "text": "Postgres held the billing load"}},
		{"record_outcome", map[string]any{"result": "failure", "decisions": []string{f.hidden}, "text": "it failed"}},
		{"record_outcome", map[string]any{"result": "failure", "decisions": []string{unknownUUID}, "text": "it failed"}},
		{"support", map[string]any{"supports": []string{f.hidden}, "text": "seen again"}},
		{"session_context", map[string]any{}},
	}
}

type call struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// TestPythonSDK drives memsync mcp with the official Python MCP SDK.
func TestPythonSDK(t *testing.T) {
	t.Parallel()
	python := pythonClient(t)
	f := newFixture(t)
	calls, _ := json.Marshal(clientCalls(f))
	callsFile := filepath.Join(t.TempDir(), "calls.json")
	if err := os.WriteFile(callsFile, calls, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "client.py"), f.bin, f.repo, "planner", callsFile)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python client: %v\n%s", err, stderr.String())
	}
	var out struct {
		Tools   []map[string]any `json:"tools"`
		Results []toolResult     `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("python client printed %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	checkCalls(t, f, out.Tools, out.Results)
}

// TestInspectorCLI drives memsync mcp with the MCP Inspector's CLI mode,
// one process (and one server) per request, as a person would.
func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	inspector := inspectorClient(t)
	f := newFixture(t)
	inspect := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, inspector, append([]string{"--cli", f.bin, "mcp", "--agent", "planner", "--repo", f.repo}, args...)...)
		cmd.Env = cleanEnv()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
		return stdout.Bytes()
	}
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(inspect("--method", "tools/list"), &list); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var results []toolResult
	for _, c := range clientCalls(f) {
		args := []string{"--method", "tools/call", "--tool-name", c.Name}
		for k, v := range c.Arguments {
			s, ok := v.(string)
			if !ok {
				b, _ := json.Marshal(v)
				s = string(b)
			}
			args = append(args, "--tool-arg", k+"="+s)
		}
		var res struct {
			IsError           bool              `json:"isError"`
			Content           []json.RawMessage `json:"content"`
			StructuredContent json.RawMessage   `json:"structuredContent"`
		}
		out := inspect(args...)
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s: %v: %s", c.Name, err, out)
		}
		r := toolResult{IsError: res.IsError, Structured: res.StructuredContent}
		for _, raw := range res.Content {
			var tc struct{ Type, Text string }
			if json.Unmarshal(raw, &tc) == nil && tc.Type == "text" {
				r.Text += tc.Text
			}
		}
		results = append(results, r)
	}
	checkCalls(t, f, list.Tools, results)
}

// pythonClient is a Python with mcp==pythonMCPVersion, in a virtual
// environment in the cache (made once).
func pythonClient(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python MCP SDK test needs it")
	}
	return realtools.Venv(t, py, filepath.Join(cacheDir(t), "py-mcp-"+pythonMCPVersion), "mcp=="+pythonMCPVersion)
}

// inspectorClient is the MCP Inspector's launcher, npm-installed into
// the cache (once).
func inspectorClient(t *testing.T) string {
	t.Helper()
	dir := realtools.NPM(t, filepath.Join(cacheDir(t), "inspector-"+inspectorVersion), nil,
		"@modelcontextprotocol/inspector@"+inspectorVersion)
	return filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
}
