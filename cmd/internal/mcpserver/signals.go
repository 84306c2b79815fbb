package mcpserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/read"
)

// outcomeIn is the record_outcome tool's input: append --result.
type outcomeIn struct {
	Result    string   `json:"result" jsonschema:"how it turned out"`
	Decisions []string `json:"decisions" jsonschema:"uuids of the decisions (or predictions) this outcome judges; this agent must be able to see each"`
	Text      string   `json:"text" jsonschema:"what happened, in words"`
	Scope     string   `json:"scope,omitempty" jsonschema:"private (default: only this agent sees it) or shared (every agent does)"`
	Why       string   `json:"why,omitempty" jsonschema:"why it turned out so"`
	Session   string   `json:"session,omitempty" jsonschema:"session id, for session-scoped recall"`
	Task      string   `json:"task,omitempty" jsonschema:"task id, for task-scoped recall"`
}

func addOutcomeTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "record_outcome", Title: "Record an outcome",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool), OpenWorldHint: new(bool)},
		Description: "Record how decisions this agent may see turned out: an outcome memory in this agent's journal " +
			"(success, failure or mixed) that links to them. A success raises a decision's importance; every " +
			"outcome is kept whatever the surprise gate says. A uuid it may not see is reported like an unknown one."},
		toolRules{"result": enumRule(journal.Results...), "decisions": listRule(mcpMaxTargets, 200), "text": textRule(mcpMaxText),
			"scope": enumRule(scopes...), "why": textRule(mcpMaxText)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in outcomeIn) (*mcp.CallToolResult, rememberOut, error) {
			if !slices.Contains(journal.Results, in.Result) {
				return nil, rememberOut{}, fmt.Errorf("result: %q is not one of success, failure, mixed", in.Result)
			}
			if len(in.Decisions) == 0 {
				return nil, rememberOut{}, fmt.Errorf("decisions: name at least one decision uuid")
			}
			if err := b.visible(ctx, in.Decisions); err != nil {
				return nil, rememberOut{}, err
			}
			args := []string{"--agent=" + b.d.Agent, "--json", "--kind=outcome", "--result=" + in.Result}
			for _, id := range in.Decisions {
				args = append(args, "--link="+id)
			}
			args = appendOptional(args, map[string]string{"scope": in.Scope, "why": in.Why, "session": in.Session, "task": in.Task})
			return b.remember(ctx, append(args, "--", in.Text), in.Text)
		})
}

// supportIn is the support tool's input: append --supports.
type supportIn struct {
	Supports   []string `json:"supports" jsonschema:"uuids of the memories this evidence corroborates; this agent must be able to see each"`
	Text       string   `json:"text" jsonschema:"the evidence, in words: a new memory that supports them"`
	Kind       string   `json:"kind,omitempty" jsonschema:"what the new memory is (default observation)"`
	Scope      string   `json:"scope,omitempty" jsonschema:"private (default: only this agent sees it) or shared (every agent does)"`
	SourceType string   `json:"source_type,omitempty" jsonschema:"how the agent knows it"`
	Session    string   `json:"session,omitempty" jsonschema:"session id, for session-scoped recall"`
	Task       string   `json:"task,omitempty" jsonschema:"task id, for task-scoped recall"`
}

func addSupportTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "support", Title: "Support a memory",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool), OpenWorldHint: new(bool)},
		Description: "Record later evidence for memories this agent may see: a new memory in this agent's journal " +
			"that supports them, which corroborates them (their confidence and importance rise). " +
			"A uuid it may not see is reported like an unknown one."},
		toolRules{"supports": listRule(mcpMaxTargets, 200), "text": textRule(mcpMaxText), "kind": agentKindRule,
			"scope": enumRule(scopes...), "source_type": enumRule(journal.SourceTypes...)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in supportIn) (*mcp.CallToolResult, rememberOut, error) {
			if len(in.Supports) == 0 {
				return nil, rememberOut{}, fmt.Errorf("supports: name at least one memory uuid")
			}
			kind := in.Kind
			if kind == "" {
				kind = string(journal.KindObservation)
			}
			if journal.Kind(kind).Memsync() {
				return nil, rememberOut{}, fmt.Errorf("kind: %s", agentKindRule.refuse(kind))
			}
			if err := b.visible(ctx, in.Supports); err != nil {
				return nil, rememberOut{}, err
			}
			args := []string{"--agent=" + b.d.Agent, "--json", "--kind=" + kind}
			for _, id := range in.Supports {
				args = append(args, "--supports="+id)
			}
			args = appendOptional(args, map[string]string{"scope": in.Scope, "source-type": in.SourceType, "session": in.Session, "task": in.Task})
			return b.remember(ctx, append(args, "--", in.Text), in.Text)
		})
}

// visible is nil when b's agent may see every memory of ids (shared, or
// its own), else the error an unknown uuid gets: a tool call learns
// nothing of a memory its agent cannot see, not even that it exists.
func (b *server) visible(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if !journal.ValidUUID(id) {
			return fmt.Errorf("%q is not a valid uuid", id)
		}
		n, found, err := b.findMemory(ctx, id)
		if err != nil {
			return err
		}
		if !found || !slices.Contains(b.groups(), n.Record.GroupID()) {
			return fmt.Errorf("%s: %w", id, read.ErrNotVisible)
		}
	}
	return nil
}

// appendOptional adds --flag=value for each non-empty value, in flag
// order.
func appendOptional(args []string, values map[string]string) []string {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if v := values[name]; v != "" {
			args = append(args, "--"+name+"="+v)
		}
	}
	return args
}
