package main

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/packet"
)

// toolSchemas is every tool's input schema, decoded, by tool name.
func toolSchemas(t *testing.T, s *mcp.ClientSession) map[string]jsonSchema {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]jsonSchema{}
	for _, tool := range res.Tools {
		raw, _ := json.Marshal(tool.InputSchema)
		var sc jsonSchema
		if err := json.Unmarshal(raw, &sc); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if tool.OutputSchema == nil && tool.Name != "session_context" {
			t.Errorf("%s has no output schema", tool.Name)
		}
		out[tool.Name] = sc
	}
	return out
}

type jsonSchema struct {
	Properties map[string]*jsonProp `json:"properties"`
}

type jsonProp struct {
	Enum      []string  `json:"enum"`
	Minimum   *float64  `json:"minimum"`
	Maximum   *float64  `json:"maximum"`
	MaxLength *int      `json:"maxLength"`
	MaxItems  *int      `json:"maxItems"`
	MinItems  *int      `json:"minItems"`
	Type      any       `json:"type"` // "array", or a list of types
	Items     *jsonProp `json:"items"`
}

// The bounds the MCP tools publish in their schemas and hold every call
// to, as a client sees them.
const (
	mcpMaxLimit = 50    // search results
	mcpMaxText  = 16000 // characters of a memory's text
	mcpMaxQuery = 1000  // characters of a search query
	mcpMaxGoal  = 2000  // characters of a packet goal
	mcpMaxItems = 50    // items of any list field
)

// TestMCPSchemaEnumsAndBounds: every enum a tool takes is the journal's
// (or the packet's) own list, every integer has its range, and every
// string and list field a bound.
func TestMCPSchemaEnumsAndBounds(t *testing.T) {
	schemas := toolSchemas(t, mcpSession(t, hookRepo(t)))
	strs := func(vs ...[]string) []string { return slices.Concat(vs...) }
	var roleNames []string
	for _, r := range packet.Roles {
		roleNames = append(roleNames, string(r))
	}
	for _, tc := range []struct {
		tool, field string
		enum        []string
	}{
		{"search", "kinds[]", kindNames(journal.Kinds)},
		{"remember", "kind", kindNames(journal.AgentKinds)},
		{"remember", "scope", strs([]string{"private", "shared"})},
		{"remember", "source_type", journal.SourceTypes},
		{"remember", "confidence", journal.Confidences},
		{"remember", "max_age", journal.MaxAges},
		{"remember", "tier", journal.Tiers},
		{"packet", "role", roleNames},
		{"flag", "feedback", journal.Feedbacks},
		{"record_outcome", "result", journal.Results},
		{"record_outcome", "scope", strs([]string{"private", "shared"})},
		{"support", "kind", kindNames(journal.AgentKinds)},
		{"support", "source_type", journal.SourceTypes},
	} {
		name := strings.TrimSuffix(tc.field, "[]")
		p := schemas[tc.tool].Properties[name]
		if p != nil && name != tc.field {
			p = p.Items
		}
		if p == nil || !slices.Equal(p.Enum, tc.enum) {
			t.Errorf("%s.%s: enum %+v, want %v", tc.tool, tc.field, p, tc.enum)
		}
	}
	if p := schemas["search"].Properties["limit"]; p == nil || p.Minimum == nil || *p.Minimum != 1 || p.Maximum == nil || *p.Maximum != mcpMaxLimit {
		t.Errorf("search.limit: %+v", p)
	}
	for tool, sc := range schemas {
		for name, p := range sc.Properties {
			if p.Items != nil && (p.MaxItems == nil || (p.Items.MaxLength == nil && p.Items.Enum == nil)) {
				t.Errorf("%s.%s: a list without bounds: %+v", tool, name, p)
			}
			if p.Items == nil && p.Minimum == nil && p.MaxLength == nil && name != "all" {
				t.Errorf("%s.%s: no bound", tool, name)
			}
		}
	}
	// A list the tool requires is a list of at least one in the schema:
	// neither null nor [] passes a client that checks it.
	for tool, field := range map[string]string{"record_outcome": "decisions", "support": "supports"} {
		if p := schemas[tool].Properties[field]; p == nil || p.MinItems == nil || *p.MinItems != 1 || p.Type != "array" {
			t.Errorf("%s.%s: %+v, want type array with minItems 1", tool, field, p)
		}
	}
	for tool, field := range map[string]string{"search": "query", "packet": "goal", "remember": "text", "record_outcome": "text", "support": "text"} {
		if p := schemas[tool].Properties[field]; p == nil || p.MaxLength == nil {
			t.Errorf("%s.%s has no length bound", tool, field)
		}
	}
}

// TestMCPArgumentsCheckedByTheServer: whatever a client checks, the
// server refuses a value outside a field's enum or bounds, naming the
// field and what it may hold, and writes nothing.
func TestMCPArgumentsCheckedByTheServer(t *testing.T) {
	repo := hookRepo(t)
	s := mcpSession(t, repo)
	before := journalsOf(t, repo, "planner")
	decision := uuidOf(t, repo, "planner", "Use #postgres")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{"query": "x", "limit": 51}, "limit: must be 1 to 50, not 51"},
		{"search", map[string]any{"query": "x", "kinds": []string{"fact", "gossip"}}, `kinds: "gossip" is not one of decision, preference`},
		{"search", map[string]any{"query": strings.Repeat("q", mcpMaxQuery+1)}, "query: at most 1000 characters"},
		{"remember", map[string]any{"text": "x", "kind": "fact", "scope": "public"}, `scope: "public" is not one of private, shared`},
		{"remember", map[string]any{"text": "x", "kind": "fact", "tier": "gold"}, `tier: "gold" is not one of core, working, learning`},
		{"remember", map[string]any{"text": "x", "kind": "fact", "confidence": "certain"}, `confidence: "certain" is not one of low, medium, high`},
		{"remember", map[string]any{"text": "x", "kind": "fact", "max_age": "1y"}, `max_age: "1y" is not one of 14d`},
		{"remember", map[string]any{"text": "x", "kind": "fact", "source_type": "dreamt"}, `source_type: "dreamt" is not one of experienced`},
		{"remember", map[string]any{"text": strings.Repeat("é", mcpMaxText+1), "kind": "fact"}, "text: at most 16000 characters"},
		{"remember", map[string]any{"text": "x", "kind": "fact", "tags": make([]string, mcpMaxItems+1)}, "tags: at most 50 items"},
		{"packet", map[string]any{"role": "boss", "goal": "plan"}, `role: "boss" is not one of planner, executor, critic, responder`},
		{"packet", map[string]any{"role": "planner", "goal": strings.Repeat("g", mcpMaxGoal+1)}, "goal: at most 2000 characters"},
		{"flag", map[string]any{"uuid": decision, "feedback": "meh"}, `feedback: "meh" is not one of important, wrong, verified, unimportant`},
		{"record_outcome", map[string]any{"result": "great", "decisions": []string{decision}, "text": "x"}, `result: "great" is not one of success, failure, mixed`},
		{"record_outcome", map[string]any{"result": "success", "decisions": []string{}, "text": "x"}, "decisions: name at least one"},
		{"record_outcome", map[string]any{"result": "success", "decisions": nil, "text": "x"}, "decisions: name at least one"},
		{"support", map[string]any{"supports": []string{}, "text": "x"}, "supports: name at least one"},
		{"remember", map[string]any{"text": "  ", "kind": "fact"}, "text: "},
		{"support", map[string]any{"supports": []string{decision}, "text": "x", "kind": "promotion"}, "kind only memsync writes"},
	} {
		out, isErr := call(t, s, tc.tool, tc.args)
		if !isErr || !strings.Contains(out, tc.want) {
			t.Errorf("%s %.200v: error %t %q, want a tool error saying %q", tc.tool, tc.args, isErr, out, tc.want)
		}
	}
	if got := journalsOf(t, repo, "planner"); got != before {
		t.Fatalf("a refused call wrote:\n%s", strings.TrimPrefix(got, before))
	}
}

// TestMCPRememberRefusesMemsyncKinds: compaction, feedback and promotion
// records are memsync's own; remember refuses them, naming the kinds it
// takes, and writes nothing.
func TestMCPRememberRefusesMemsyncKinds(t *testing.T) {
	repo := hookRepo(t)
	s := mcpSession(t, repo)
	before := journalsOf(t, repo, "planner")
	for _, k := range journal.MemsyncKinds {
		out, isErr := call(t, s, "remember", map[string]any{"text": "the memory is wrong", "kind": string(k)})
		if !isErr || !strings.Contains(out, "kind: \""+string(k)+"\" is a kind only memsync writes") ||
			!strings.Contains(out, strings.Join(kindNames(journal.AgentKinds), ", ")) || !strings.Contains(out, "flag tool") {
			t.Errorf("remember kind %s: error %t %q", k, isErr, out)
		}
	}
	if got := journalsOf(t, repo, "planner"); got != before {
		t.Fatalf("remember of a memsync kind wrote:\n%s", strings.TrimPrefix(got, before))
	}
}

// TestMCPRememberSkipped: a learning-tier memory the surprise gate keeps
// out is a clear non-error result: "skipped: ..." with the score and the
// reason, structured skipped, reason and surprise, no uuid; nothing is
// written. A memory stored says where.
func TestMCPRememberSkipped(t *testing.T) {
	repo := hookRepo(t)
	s := mcpSession(t, repo)
	args := map[string]any{"text": "The staging cluster restarts every night at 02:00 UTC for patching", "kind": "observation", "tier": "learning"}
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "remember", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("first remember: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !regexp.MustCompile(`^Remembered as mem_\S+_planner_\S+ \(agents/planner/memory/journal/\S+\.jsonl\)\.$`).MatchString(text) {
		t.Fatalf("stored: %q", text)
	}
	before := journalsOf(t, repo, "planner")
	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "remember", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("second remember: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var out rememberOut
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || !out.Skipped || out.Reason == "" || out.Surprise == nil || *out.Surprise >= 0.4 ||
		out.UUID != "" || strings.Contains(string(raw), `"uuid"`) {
		t.Fatalf("skipped, structured: %s", raw)
	}
	if !strings.HasPrefix(text, "skipped: surprise ") || !strings.Contains(text, out.Reason) || !strings.Contains(text, "nothing written") {
		t.Fatalf("skipped, text: %q", text)
	}
	if got := journalsOf(t, repo, "planner"); got != before {
		t.Fatalf("a skipped memory was written:\n%s", strings.TrimPrefix(got, before))
	}
}

// TestMCPOutcomeAndSupport: record_outcome and support write through
// append's --result and --supports and move the decision they name; a
// memory planner cannot see (critic's private one) is "not found" exactly
// as an unknown uuid is, and nothing is written.
func TestMCPOutcomeAndSupport(t *testing.T) {
	repo := hookRepo(t)
	s := mcpSession(t, repo)
	decision := uuidOf(t, repo, "planner", "Use #postgres")
	hidden := uuidOf(t, repo, "critic", "password rotates monthly")
	const unknown = "mem_20200101T000000Z_critic_0099"
	before, criticBefore := journalsOf(t, repo, "planner"), journalsOf(t, repo, "critic")
	for _, tc := range []struct {
		tool string
		args func(id string) map[string]any
	}{
		{"record_outcome", func(id string) map[string]any {
			return map[string]any{"result": "success", "decisions": []string{decision, id}, "text": "it held up"}
		}},
		{"support", func(id string) map[string]any { return map[string]any{"supports": []string{id}, "text": "seen again"} }},
	} {
		gotHidden, isErr := call(t, s, tc.tool, tc.args(hidden))
		gotUnknown, isErr2 := call(t, s, tc.tool, tc.args(unknown))
		if !isErr || !isErr2 || strings.ReplaceAll(gotHidden, hidden, "U") != strings.ReplaceAll(gotUnknown, unknown, "U") ||
			!strings.Contains(gotUnknown, "no such memory visible to this agent") || strings.Contains(gotHidden, "rotates") {
			t.Errorf("%s: a hidden memory: %t %q; an unknown one: %t %q", tc.tool, isErr, gotHidden, isErr2, gotUnknown)
		}
	}
	if journalsOf(t, repo, "planner") != before || journalsOf(t, repo, "critic") != criticBefore {
		t.Fatal("a refused outcome or support wrote")
	}

	out, isErr := call(t, s, "record_outcome", map[string]any{"result": "success", "decisions": []string{decision},
		"text": "Postgres held the billing load", "why": "indexes", "session": "s-1"})
	var wrote rememberOut
	if isErr || json.Unmarshal([]byte(out), &wrote) != nil || !strings.Contains(wrote.UUID, "_planner_") {
		t.Fatalf("record_outcome: %t %s", isErr, out)
	}
	out, isErr = call(t, s, "support", map[string]any{"supports": []string{decision}, "text": "Postgres again fine at month end", "source_type": "observed"})
	var supported rememberOut
	if isErr || json.Unmarshal([]byte(out), &supported) != nil || supported.UUID == "" {
		t.Fatalf("support: %t %s", isErr, out)
	}
	recs := map[string]journal.Record{}
	for _, line := range strings.Split(strings.TrimSpace(journalsOf(t, repo, "planner")), "\n") {
		r, err := journal.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		recs[r.UUID] = r
	}
	if r := recs[wrote.UUID]; r.Kind != journal.KindOutcome || r.Result() != "success" || !slices.Equal(r.Links, []string{decision}) || r.Why != "indexes" || r.Session != "s-1" {
		t.Fatalf("outcome record: %s", r.Canonical())
	}
	if r := recs[supported.UUID]; r.Kind != journal.KindObservation || !slices.Equal(r.Supports(), []string{decision}) || r.Source == nil || r.Source.Type != "observed" {
		t.Fatalf("support record: %s", r.Canonical())
	}
	syncRepo(t, repo)
	out, isErr = call(t, s, "explain", map[string]any{"uuid": decision})
	var ex explainResult
	if isErr || json.Unmarshal([]byte(out), &ex) != nil || ex.Importance < 0.5+0.2+0.1 {
		t.Fatalf("explain after an outcome and a support: %t %s", isErr, out)
	}
}

// TestMCPTextResults: what the model reads is short text, never JSON:
// session_context and packet are markdown, explain, flag and status a few
// lines.
func TestMCPTextResults(t *testing.T) {
	repo := hookRepo(t)
	s := mcpSession(t, repo)
	decision := uuidOf(t, repo, "planner", "Use #postgres")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"session_context", map[string]any{"session": "s-1"}, "Always write the failing test first"},
		{"packet", map[string]any{"role": "planner", "goal": "billing database"}, "# Working memory: planner for planner"},
		{"explain", map[string]any{"uuid": decision}, decision + " (decision by planner): importance 0.50"},
		{"status", nil, "; planner: 4 journal records, 4 projected, outbox 0, rejects 0"},
		{"flag", map[string]any{"uuid": decision, "feedback": "verified"}, "Flagged " + decision + " verified (feedback record mem_"},
	} {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("%s: %v %+v", tc.tool, err, res)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if strings.HasPrefix(strings.TrimSpace(text), "{") || !strings.Contains(text, tc.want) {
			t.Errorf("%s: text %q, want it to hold %q", tc.tool, text, tc.want)
		}
		if (res.StructuredContent == nil) != (tc.tool == "session_context") {
			t.Errorf("%s: structured content %v", tc.tool, res.StructuredContent)
		}
	}
}

// kindNames is kinds as the strings of a schema's enum.
func kindNames(kinds []journal.Kind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}
