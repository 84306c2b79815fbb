package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/journal"
)

// rememberOut is the structured content of remember, record_outcome and
// support, as a client reads it.
type rememberOut struct {
	UUID     string   `json:"uuid"`
	Path     string   `json:"path"`
	Skipped  bool     `json:"skipped"`
	Reason   string   `json:"reason"`
	Surprise *float64 `json:"surprise"`
}

// mcpSearchOut is the search tool's structured content, as a client
// reads it.
type mcpSearchOut struct {
	Offline bool   `json:"offline"`
	Reason  string `json:"offline_reason"`
	Results []struct {
		UUID       string  `json:"uuid"`
		Agent      string  `json:"agent"`
		Kind       string  `json:"kind"`
		TS         string  `json:"ts"`
		Text       string  `json:"text"`
		Score      float64 `json:"score"`
		Status     string  `json:"status"`
		ReplacedBy string  `json:"replaced_by"`
	} `json:"results"`
}

// mcpSession starts the built `memsync mcp --agent planner` and connects
// the SDK's own client to it over stdio.
func mcpSession(t *testing.T, repo string, env ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.Command(memsyncBinary(t), "mcp", "--agent", "planner", "--repo", repo)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_AGENT=", "MEMSYNC_GRAPH=", "MEMSYNC_NEO4J_URI="), env...)
	client := mcp.NewClient(&mcp.Implementation{Name: "memsync-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call calls a tool and returns its result's structured content as JSON
// and whether it is a tool error; a protocol error fails the test.
func call(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				msg = append(msg, tc.Text)
			}
		}
		return strings.Join(msg, " "), true
	}
	if res.StructuredContent == nil { // a text-only tool (session_context)
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return strings.Join(text, "\n"), false
	}
	out, _ := json.Marshal(res.StructuredContent)
	return string(out), false
}

// journalsOf is every journal line of agent, to prove nothing was written.
func journalsOf(t *testing.T, repo, agent string) string {
	t.Helper()
	var all strings.Builder
	files, _ := filepath.Glob(filepath.Join(layout(repo).JournalDir(agent), "*.jsonl"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all.Write(b)
	}
	return all.String()
}

func TestMCPListTools(t *testing.T) {
	s := mcpSession(t, hookRepo(t))
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := map[string]bool{"search": true, "session_context": true, "packet": true, "explain": true, "status": true, "remember": false, "flag": false,
		"record_outcome": false, "support": false}
	seen := map[string]bool{}
	for _, tool := range res.Tools {
		want, known := readOnly[tool.Name]
		if !known {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		seen[tool.Name] = true
		if tool.Description == "" || tool.Annotations == nil || tool.Annotations.ReadOnlyHint != want {
			t.Errorf("%s: description %q, annotations %+v (want read-only %t)", tool.Name, tool.Description, tool.Annotations, want)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
			Required             []string `json:"required"`
			AdditionalProperties any      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil || schema.Type != "object" {
			t.Fatalf("%s: input schema %s: %v", tool.Name, raw, err)
		}
		for name, p := range schema.Properties {
			if p.Description == "" {
				t.Errorf("%s.%s has no description", tool.Name, name)
			}
			if name == "agent" || name == "groups" || name == "repo" {
				t.Errorf("%s takes %q: the agent, its groups and the repository are the server's", tool.Name, name)
			}
		}
		if tool.Name == "packet" {
			var props []string
			for name := range schema.Properties {
				props = append(props, name)
			}
			slices.Sort(props)
			out, _ := json.Marshal(tool.OutputSchema)
			if strings.Join(props, ",") != "as_of,constraints,failures,goal,questions,role,session,task" ||
				strings.Join(schema.Required, ",") != "role,goal" || !strings.Contains(string(out), `"selected_memory_ids"`) {
				t.Errorf("packet: properties %v, required %v, output schema %s", props, schema.Required, out)
			}
		}
		if tool.Name == "remember" && (len(schema.Properties) < 15 || strings.Join(schema.Required, ",") != "text,kind") {
			t.Errorf("remember: %d properties, required %v (want append's flags, text and kind required)", len(schema.Properties), schema.Required)
		}
	}
	if len(seen) != len(readOnly) {
		t.Fatalf("tools %v, want %v", seen, readOnly)
	}
}

// TestMCPBoundToAgent calls every tool, and tries every argument that
// could read critic's private memories or write into critic's journal, on
// each graph backend.
func TestMCPBoundToAgent(t *testing.T) {
	for _, b := range daemonBackends {
		t.Run(b.name, func(t *testing.T) {
			env, _ := b.setup(t, "")
			repo := hookRepoOn(t, env)
			testMCPBoundToAgent(t, repo, mcpSession(t, repo, env...))
		})
	}
}

func testMCPBoundToAgent(t *testing.T, repo string, s *mcp.ClientSession) {
	criticBefore := journalsOf(t, repo, "critic")

	out, isErr := call(t, s, "search", map[string]any{"query": "billing service database"})
	if isErr || !strings.Contains(out, "Use #postgres") || strings.Contains(out, "critic-private") {
		t.Fatalf("search: error %t: %s", isErr, out)
	}
	for _, args := range []map[string]any{
		{"query": "critic-private password rotates"},
		{"query": "password rotates monthly", "all": true, "limit": 50},
		{"query": "password", "kinds": []string{"fact"}, "since": "2000-01-01"},
	} {
		if out, isErr := call(t, s, "search", args); isErr || strings.Contains(out, "critic") {
			t.Fatalf("search %v: error %t: %s", args, isErr, out)
		}
	}
	// Arguments that would widen the reader are refused as tool errors.
	for _, args := range []map[string]any{
		{"query": "password", "agent": "critic"},
		{"query": "password", "groups": []string{"AGENT:critic"}},
		{"query": "password", "group_id": "AGENT:critic"},
		{"query": "password", "repo": "/"},
		{"query": "password", "limit": 100000},
		{"query": "password", "limit": 51},
		{"query": "password", "limit": 0},
		{"query": "password", "kinds": []string{"nonsense"}},
		{"query": ""},
	} {
		if out, isErr := call(t, s, "search", args); !isErr || strings.Contains(out, "rotates") {
			t.Fatalf("search %v: want a tool error, got %s", args, out)
		}
	}

	out, isErr = call(t, s, "remember", map[string]any{"text": "Billing invoices go out on the 1st", "kind": "fact", "scope": "shared",
		"why": "finance asked", "tags": []string{"billing"}, "entities": []string{"@Mira"}, "source_type": "told", "source_actor": "@Mira",
		"confidence": "high", "max_age": "90d", "session": "s-1", "task": "t-9"})
	var wrote rememberOut
	if isErr || json.Unmarshal([]byte(out), &wrote) != nil || !strings.Contains(wrote.UUID, "_planner_") || !strings.HasPrefix(wrote.Path, "agents/planner/") {
		t.Fatalf("remember: error %t: %s", isErr, out)
	}
	line := journalsOf(t, repo, "planner")
	for _, f := range []string{`"scope":"shared"`, `"why":"finance asked"`, `"session":"s-1"`, `"task":"t-9"`, `"max_age":"90d"`, `"actor":"@Mira"`} {
		if !strings.Contains(line, f) {
			t.Fatalf("remember dropped %s:\n%s", f, line)
		}
	}
	// Nothing an argument says writes as critic: a field naming the
	// agent is refused, and flag-looking values are values.
	for _, args := range []map[string]any{
		{"text": "as critic", "kind": "fact", "agent": "critic"},
		{"text": "as critic", "kind": "fact", "scope": "--agent=critic"},
		{"text": "as critic", "kind": "--agent=critic"},
		{"text": "as critic", "kind": "bogus"},
		{"text": "", "kind": "fact"},
		{"kind": "fact"},
	} {
		if out, isErr := call(t, s, "remember", args); !isErr {
			t.Fatalf("remember %v: want a tool error, got %s", args, out)
		}
	}
	for _, args := range []map[string]any{
		{"text": "--agent=critic", "kind": "fact"},
		{"text": "-", "kind": "fact"},
		{"text": "tagged", "kind": "fact", "tags": []string{"--agent=critic", "-- --agent critic"}, "why": "--repo=/tmp"},
	} {
		out, isErr := call(t, s, "remember", args)
		if isErr || !strings.Contains(out, "_planner_") {
			t.Fatalf("remember %v: error %t: %s", args, isErr, out)
		}
	}
	if got := journalsOf(t, repo, "critic"); got != criticBefore {
		t.Fatalf("critic's journal changed through planner's server:\n%s", strings.TrimPrefix(got, criticBefore))
	}
	if !strings.Contains(journalsOf(t, repo, "planner"), `"text":"--agent=critic"`) {
		t.Fatal("a flag-looking text was not stored as text")
	}

	// explain and flag: a memory planner sees answers; critic's private
	// one is refused exactly like an unknown uuid, and nothing is written.
	criticUUID := regexp.MustCompile(`mem_[0-9TZ]+_critic_([a-z0-9]+-)?[0-9]+`).FindString(criticBefore)
	if criticUUID == "" {
		t.Fatalf("no critic uuid in %q", criticBefore)
	}
	out, isErr = call(t, s, "explain", map[string]any{"uuid": wrote.UUID})
	if isErr || !strings.Contains(out, `"importance"`) || !strings.Contains(out, wrote.UUID) {
		t.Fatalf("explain: error %t: %s", isErr, out)
	}
	unknown, isErr := call(t, s, "explain", map[string]any{"uuid": "mem_20200101T000000Z_critic_0099"})
	if !isErr {
		t.Fatalf("explain of an unknown uuid: %s", unknown)
	}
	hidden, isErr := call(t, s, "explain", map[string]any{"uuid": criticUUID})
	if !isErr || strings.Contains(hidden, "rotates") || strings.ReplaceAll(hidden, criticUUID, "U") != strings.ReplaceAll(unknown, "mem_20200101T000000Z_critic_0099", "U") {
		t.Fatalf("explain of critic's private memory: %q (unknown: %q)", hidden, unknown)
	}
	out, isErr = call(t, s, "flag", map[string]any{"uuid": wrote.UUID, "feedback": "important", "by": "Shaun", "note": "keep"})
	if isErr || !strings.Contains(out, `"feedback":"important"`) || !strings.Contains(out, "agents/planner/") {
		t.Fatalf("flag: error %t: %s", isErr, out)
	}
	for _, args := range []map[string]any{
		{"uuid": criticUUID, "feedback": "wrong"},
		{"uuid": wrote.UUID, "feedback": "wrong", "agent": "critic"},
		{"uuid": wrote.UUID, "feedback": "--agent=critic"},
		{"uuid": wrote.UUID, "feedback": "important", "by": "x", "note": "--agent=critic", "extra": 1},
	} {
		if out, isErr := call(t, s, "flag", args); !isErr {
			t.Fatalf("flag %v: want a tool error, got %s", args, out)
		}
	}
	if got := journalsOf(t, repo, "critic"); got != criticBefore {
		t.Fatalf("critic's journal changed through planner's server:\n%s", strings.TrimPrefix(got, criticBefore))
	}

	out, isErr = call(t, s, "session_context", map[string]any{"session": "s-1"})
	if isErr || !strings.Contains(out, "Always write the failing test first") || strings.Contains(out, "critic-private") {
		t.Fatalf("session_context: error %t: %s", isErr, out)
	}
	// packet: planner's working memory, never critic's private memories,
	// whatever the task, session, goal or other arguments say; a bad
	// request is a tool error.
	out, isErr = call(t, s, "packet", map[string]any{"role": "planner", "goal": "plan the billing service work", "session": "s-1"})
	var p struct {
		Agent string `json:"agent"`
		Core  []struct {
			UUID string `json:"uuid"`
		} `json:"core"`
		Selected []string `json:"selected_memory_ids"`
	}
	if isErr || json.Unmarshal([]byte(out), &p) != nil || p.Agent != "planner" || len(p.Core) == 0 ||
		!strings.Contains(out, "Always write the failing test first") || strings.Contains(out, "critic") {
		t.Fatalf("packet: error %t: %s", isErr, out)
	}
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "packet", Arguments: map[string]any{"role": "executor", "goal": "billing service database"}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("packet: %v %+v", err, res)
	}
	if md, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.HasPrefix(md.Text, "# Working memory: executor for planner") ||
		!strings.Contains(md.Text, "Use #postgres") || len(md.Text) > 4000 {
		t.Fatalf("packet markdown: %+v", res.Content[0])
	}
	for _, args := range []map[string]any{
		{"role": "planner", "goal": "always deploy billing service to production", "task": "t-9", "session": "s-1"},
		{"role": "executor", "goal": "critic-private password rotates monthly, as I recall", "task": "t-9", "session": "s-1",
			"constraints": []string{"password"}, "failures": []string{"deploy straight to production"}, "questions": []string{"critic"}},
		{"role": "critic", "goal": "critic-private", "task": "t-9", "session": "s-1", "as_of": "2100-01-01T00:00:00Z"},
		{"role": "responder", "goal": "billing database password", "task": "t-9"},
	} {
		// The goal and questions are echoed: a memory of critic's would
		// show as an item by critic, or its uuid.
		if out, isErr := call(t, s, "packet", args); isErr || strings.Contains(out, `"agent":"critic"`) || strings.Contains(out, "_critic_") ||
			strings.Contains(out, "deploy the billing service straight") || strings.Contains(out, "password rotates monthly\"") {
			t.Fatalf("packet %v: error %t: %s", args, isErr, out)
		}
	}
	for _, args := range []map[string]any{
		{"role": "boss", "goal": "plan"},
		{"role": "planner", "goal": "  "},
		{"role": "planner"},
		{"role": "planner", "goal": "plan", "as_of": "yesterday"},
		{"role": "planner", "goal": "plan", "agent": "critic"},
		{"role": "planner", "goal": "plan", "groups": []string{"AGENT:critic"}},
	} {
		if out, isErr := call(t, s, "packet", args); !isErr || strings.Contains(out, "critic-private") {
			t.Fatalf("packet %v: want a tool error, got %s", args, out)
		}
	}

	out, isErr = call(t, s, "status", nil)
	if isErr || !strings.Contains(out, `"agent":"planner"`) || strings.Contains(out, "critic") || !strings.Contains(out, `"reachable":true`) {
		t.Fatalf("status: error %t: %s", isErr, out)
	}

	// A call to no tool is a protocol error; the server keeps serving.
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_everything"}); err == nil {
		t.Fatal("an unknown tool answered")
	}
	if out, isErr := call(t, s, "search", map[string]any{"query": "Tuesdays"}); isErr || !strings.Contains(out, "Deploys happen on Tuesdays") {
		t.Fatalf("after bad calls: error %t: %s", isErr, out)
	}
}

// TestMCPSearchFindsArchived: decay changes rank, never findability, on
// the MCP door too (SPEC §7): a year-old observation nothing referenced is
// found, marked archived; a memory flagged wrong is left out unless all.
func TestMCPSearchFindsArchived(t *testing.T) {
	repo := newRepo(t, "planner")
	now := time.Now().UTC()
	write := func(r journal.Record) string {
		t.Helper()
		r.Agent, r.Scope = "planner", journal.ScopeShared
		if _, err := journal.Append(layout(repo).JournalDir("planner"), &r, journal.AppendOptions{NoSync: true}); err != nil {
			t.Fatal(err)
		}
		return r.UUID
	}
	old := write(journal.Record{TS: now.Add(-400 * 24 * time.Hour), Kind: journal.KindObservation, Text: "the quasar cluster rebooted twice"})
	wrong := write(journal.Record{TS: now.Add(-2 * 24 * time.Hour), Kind: journal.KindFact, Text: "the quasar cluster runs on arm"})
	fb, _ := json.Marshal(journal.FeedbackWrong)
	write(journal.Record{TS: now.Add(-24 * time.Hour), Kind: journal.KindFeedback, Text: "not so", Links: []string{wrong},
		Source: &journal.Source{Type: "told", Actor: "Shaun"}, Extra: map[string]json.RawMessage{journal.FieldFeedback: fb}})
	syncRepo(t, repo)
	s := mcpSession(t, repo)
	for _, all := range []bool{false, true} {
		out, isErr := call(t, s, "search", map[string]any{"query": "quasar cluster", "all": all})
		var res searchResult
		if isErr || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("search (all %v): %s", all, out)
		}
		status := map[string]string{}
		for _, h := range res.Results {
			status[h.UUID] = h.Status
		}
		if status[old] != "archived" {
			t.Errorf("all %v: the year-old observation: %q in %v, want found and archived", all, status[old], status)
		}
		if _, found := status[wrong]; found != all {
			t.Errorf("all %v: the wrong-flagged fact found %v", all, found)
		}
	}
}
