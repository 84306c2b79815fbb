package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/journal/importer"
)

// serverMemoryVersion is the official MCP memory server the round trip
// is proven with, pinned.
const serverMemoryVersion = "2026.8.31"

// serverMemory is the official MCP memory server, npm-installed (once per
// version) into $MEMSYNC_E2E_CACHE, else a directory under os.TempDir();
// a skip saying so when node, npm or the npm registry is not there.
func serverMemory(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: the MCP memory server round trip needs Node and npm")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the MCP memory server round trip needs it")
	}
	root := os.Getenv("MEMSYNC_E2E_CACHE")
	if root == "" {
		root = filepath.Join(os.TempDir(), "memsync-e2e-cache")
	}
	dir := filepath.Join(root, "server-memory-"+serverMemoryVersion)
	bin := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return bin
	}
	os.RemoveAll(dir)
	out, err := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error",
		"@modelcontextprotocol/server-memory@"+serverMemoryVersion).CombinedOutput()
	if err != nil {
		if ping, pingErr := exec.Command(npm, "ping").CombinedOutput(); pingErr != nil {
			t.Skipf("the npm registry is unreachable (npm ping: %v, %s): the MCP memory server round trip needs it once, to install @modelcontextprotocol/server-memory@%s",
				pingErr, strings.TrimSpace(string(ping)), serverMemoryVersion)
		}
		t.Fatalf("npm install @modelcontextprotocol/server-memory@%s: %v\n%s", serverMemoryVersion, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return bin
}

// mcpServer is a running MCP memory server, driven over stdio.
type mcpServer struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// startServerMemory runs the server on the graph file path.
func startServerMemory(t *testing.T, bin, path string) *mcpServer {
	t.Helper()
	cmd := exec.Command("node", bin)
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &mcpServer{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(s.stop)
	s.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "memsync-roundtrip-test", "version": "1"}})
	s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

func (s *mcpServer) stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.in.Close()
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
	}
}

func (s *mcpServer) send(msg any) {
	s.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatalf("write to the MCP memory server: %v", err)
	}
}

// call sends one request and waits for its answer's result.
func (s *mcpServer) call(method string, params any) json.RawMessage {
	s.t.Helper()
	s.id++
	s.send(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			s.t.Fatalf("%s: the MCP memory server answered nothing: %v", method, err)
		}
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &resp) != nil || resp.ID == nil || *resp.ID != s.id {
			continue // a notification
		}
		if resp.Error != nil {
			s.t.Fatalf("%s: %s", method, resp.Error)
		}
		return resp.Result
	}
}

// tool calls one tool and fails on a tool error.
func (s *mcpServer) tool(name string, args any) json.RawMessage {
	s.t.Helper()
	res := s.call("tools/call", map[string]any{"name": name, "arguments": args})
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.IsError {
		s.t.Fatalf("%s: %s", name, res)
	}
	if r.StructuredContent != nil {
		return r.StructuredContent
	}
	if len(r.Content) > 0 {
		return json.RawMessage(r.Content[0].Text)
	}
	return res
}

// mcpGraph is read_graph's answer, normalised for comparison.
type mcpGraph struct {
	Entities []struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	} `json:"entities"`
	Relations []struct {
		From         string `json:"from"`
		To           string `json:"to"`
		RelationType string `json:"relationType"`
	} `json:"relations"`
}

func (g mcpGraph) lines() []string {
	var out []string
	for _, e := range g.Entities {
		obs := slices.Clone(e.Observations)
		sort.Strings(obs)
		out = append(out, fmt.Sprintf("entity %s (%s): %s", e.Name, e.EntityType, strings.Join(obs, " | ")))
	}
	for _, r := range g.Relations {
		out = append(out, fmt.Sprintf("relation %s %s %s", r.From, r.RelationType, r.To))
	}
	sort.Strings(out)
	return out
}

// TestMCPMemoryServerRoundTrip proves the mcp-memory format with the
// official MCP memory server: the server writes a graph (create_entities,
// create_relations, add_observations) to its file; memsync imports it
// (every observation and relation found by search, with its source;
// entity types and relations kept as such); memsync's export, read by the
// server's own read_graph, is the same graph; importing that export back
// writes nothing, into another agent writes each item once, and the
// counts stay put through a second round trip.
func TestMCPMemoryServerRoundTrip(t *testing.T) {
	bin := serverMemory(t)
	graphFile := filepath.Join(t.TempDir(), "memory.jsonl")
	srv := startServerMemory(t, bin, graphFile)
	srv.tool("create_entities", map[string]any{"entities": []map[string]any{
		{"name": "Ana_Ruiz", "entityType": "person", "observations": []string{"Leads the payments team", "Prefers async reviews"}},
		{"name": "billing-api", "entityType": "service", "observations": []string{"Written in Go", "Deploys every Tuesday"}},
		{"name": "ledger-db", "entityType": "database", "observations": []string{"Postgres 16 cluster in eu-west-1"}},
		{"name": "Stripe", "entityType": "vendor", "observations": []string{"Handles card payments"}},
	}})
	srv.tool("create_relations", map[string]any{"relations": []map[string]any{
		{"from": "Ana_Ruiz", "to": "billing-api", "relationType": "owns"},
		{"from": "billing-api", "to": "ledger-db", "relationType": "writes_to"},
		{"from": "billing-api", "to": "Stripe", "relationType": "depends_on"},
	}})
	srv.tool("add_observations", map[string]any{"observations": []map[string]any{
		{"entityName": "billing-api", "contents": []string{"p99 latency budget is 300ms"}},
		{"entityName": "Ana_Ruiz", "contents": []string{"On call the first week of each month"}},
	}})
	var want mcpGraph
	if err := json.Unmarshal(srv.tool("read_graph", map[string]any{}), &want); err != nil {
		t.Fatal(err)
	}
	srv.stop()
	const items = 8 + 3 // observations + relations
	if got := len(want.lines()); got != 4+3 {
		t.Fatalf("the server's graph: %v", want.lines())
	}
	when := time.Now().Add(-time.Hour)
	os.Chtimes(graphFile, when, when)

	repo := initRepo(t, "a", "b")
	iv := invocation{now: time.Now()}
	doc := importJSONOf(t, iv.run(t, "import", "mcp-memory", graphFile, "--agent", "a", "--repo", repo, "--json"))
	if doc.Imported != items || len(doc.Unparsable) != 0 {
		t.Fatalf("import of the server's file: %+v", doc.Report)
	}
	recs := importedRecords(t, repo, "a")
	relations := 0
	for _, r := range recs {
		if rel, ok := importer.MCPRelationOf(&r); ok {
			relations++
			if !slices.Equal(r.Entities, []string{rel.From, rel.To}) {
				t.Errorf("relation %+v: entities %v, want both ends", rel, r.Entities)
			}
			continue
		}
		if importer.MCPEntityType(&r) == string(journal.KindFact) {
			t.Errorf("%q: entity type turned into fact", r.Text)
		}
	}
	if relations != 3 {
		t.Errorf("%d relations imported as relations, want 3", relations)
	}
	if r := iv.run(t, "sync", "--once", "--repo", repo); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	for _, rec := range recs {
		res := searchJSON(t, iv, repo, "a", rec.Text)
		hit, ok := findHit(res, rec.UUID)
		if !ok {
			t.Errorf("search %q: %s not found", rec.Text, rec.UUID)
			continue
		}
		if hit.Source == nil || hit.Source.Context != rec.Source.Context {
			t.Errorf("search %q: source %+v, want context %q", rec.Text, hit.Source, rec.Source.Context)
		}
	}

	// memsync → the server: its own read_graph reads the same graph.
	exported := iv.run(t, "export", "--repo", repo, "--agent", "a", "--format", "mcp-memory")
	if exported.code != 0 {
		t.Fatalf("export: %s", exported.stderr)
	}
	exportFile := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(exportFile, []byte(exported.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(exportFile, when, when)
	back := startServerMemory(t, bin, exportFile)
	var got mcpGraph
	if err := json.Unmarshal(back.tool("read_graph", map[string]any{}), &got); err != nil {
		t.Fatal(err)
	}
	back.stop()
	if g, w := got.lines(), want.lines(); !slices.Equal(g, w) {
		t.Errorf("the server reads memsync's export as\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}

	// Round trips: back into a writes nothing; into b each item once;
	// b's export is a's, byte for byte.
	if again := importJSONOf(t, iv.run(t, "import", "mcp-memory", exportFile, "--agent", "a", "--repo", repo, "--json")); again.Imported != 0 {
		t.Errorf("export back into a: imported %d, want 0", again.Imported)
	}
	if into := importJSONOf(t, iv.run(t, "import", "mcp-memory", exportFile, "--agent", "b", "--repo", repo, "--json")); into.Imported != items {
		t.Errorf("export into b: imported %d, want %d", into.Imported, items)
	}
	if b := iv.run(t, "export", "--repo", repo, "--agent", "b", "--format", "mcp-memory"); b.stdout != exported.stdout {
		t.Errorf("b's export differs from a's:\n%s\nwant\n%s", b.stdout, exported.stdout)
	}
}
