package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/packet"
)

// The bounds of the MCP tools' inputs. A memory is a few sentences (a
// longer document belongs in a file its ref_path names); a query or a goal
// is a line or a paragraph.
const (
	mcpMaxLimit   = 50    // search results
	mcpMaxText    = 16000 // characters of a memory's text
	mcpMaxQuery   = 1000  // characters of a search query
	mcpMaxGoal    = 2000  // characters of a packet goal
	mcpMaxField   = 2000  // characters of any other string field
	mcpMaxItems   = 50    // items of any list field
	mcpMaxTargets = 20    // memories one outcome or support names
)

// fieldRule is what one input field of a tool may hold: the one place its
// enum and bounds are written, both into the tool's published input
// schema and into the check the server makes of every call (checkArgs).
type fieldRule struct {
	enum     []string // allowed values (of the items, for a list)
	min, max int      // an integer's range, when max > 0
	maxLen   int      // the longest string (each item's, for a list), in characters
	maxItems int      // the longest list
	minItems int      // the shortest list (1 for a required list: set by inputSchema)
	// refuse, when set, says why a value outside enum is refused (a
	// clearer word than "not one of" for a value that means something).
	refuse func(v string) string
}

// toolRules are a tool's fieldRules by JSON field name.
type toolRules map[string]fieldRule

// The journal's own lists, as the enums of the tools' fields.
var (
	allKinds   = kindNames(journal.Kinds)
	agentKinds = kindNames(journal.AgentKinds)
	scopes     = []string{string(journal.ScopePrivate), string(journal.ScopeShared)}
	roles      = func() []string {
		var out []string
		for _, r := range packet.Roles {
			out = append(out, string(r))
		}
		return out
	}()
)

func kindNames(kinds []journal.Kind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}

// Rule builders.
func enumRule(vals ...string) fieldRule { return fieldRule{enum: vals, maxLen: mcpMaxField} }
func textRule(n int) fieldRule          { return fieldRule{maxLen: n} }
func listRule(n, each int) fieldRule    { return fieldRule{maxItems: n, maxLen: each} }
func enumListRule(vals ...string) fieldRule {
	return fieldRule{enum: vals, maxItems: len(vals), maxLen: mcpMaxField}
}

// agentKindRule is the kind of a memory an agent writes: memsync's own
// kinds are refused with a word on what to use instead.
var agentKindRule = fieldRule{enum: agentKinds, maxLen: mcpMaxField, refuse: func(v string) string {
	if journal.Kind(v).Memsync() {
		return fmt.Sprintf("%q is a kind only memsync writes (%s); use the flag tool for feedback, and one of %s",
			v, strings.Join(kindNames(journal.MemsyncKinds), ", "), strings.Join(agentKinds, ", "))
	}
	return ""
}}

// inputSchema is In's schema (from its fields and their jsonschema tags)
// with rules' enums and bounds set on the fields they name; every string
// and list field without a rule gets the default bounds. It panics on a
// rule naming no field: a programming error, caught by any test that
// starts the server.
func inputSchema[In any](rules toolRules) (*jsonschema.Schema, toolRules) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema: %v", err))
	}
	all := toolRules{}
	for name, p := range s.Properties {
		r, ok := rules[name]
		if !ok {
			switch {
			case p.Type == "string":
				r = textRule(mcpMaxField)
			case p.Items != nil:
				r = listRule(mcpMaxItems, mcpMaxField)
			}
		}
		item := p
		if p.Items != nil {
			item = p.Items
			if r.maxItems > 0 {
				p.MaxItems = jsonschema.Ptr(r.maxItems)
			}
			// A list the tool requires names at least one item, and
			// is a list: the schema says so, not only the server.
			if slices.Contains(s.Required, name) {
				r.minItems = 1
				p.MinItems = jsonschema.Ptr(1)
				p.Type, p.Types = "array", nil
			}
		}
		all[name] = r
		if len(r.enum) > 0 {
			item.Enum = make([]any, len(r.enum))
			for i, v := range r.enum {
				item.Enum[i] = v
			}
		}
		if r.maxLen > 0 && item.Type == "string" {
			item.MaxLength = jsonschema.Ptr(r.maxLen)
		}
		if r.max > 0 {
			p.Minimum, p.Maximum = jsonschema.Ptr(float64(r.min)), jsonschema.Ptr(float64(r.max))
		}
	}
	for name := range rules {
		if _, ok := s.Properties[name]; !ok {
			panic(fmt.Sprintf("input schema: a rule for %q, which is no field", name))
		}
	}
	return s, all
}

// checkArgs checks a call's arguments against the tool's rules, field by
// field in name order, and says what is wrong with the first that breaks
// one. What is not a rule's business (types, required fields, unknown
// fields) the SDK checks against the schema after it.
func checkArgs(raw json.RawMessage, rules toolRules) error {
	var args map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &args) != nil {
		return nil // not an object: the SDK's schema check says so
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r, ok := rules[name]
		if !ok {
			continue
		}
		var v any
		if json.Unmarshal(args[name], &v) != nil {
			continue
		}
		if err := r.check(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (r fieldRule) check(v any) error {
	switch v := v.(type) {
	case string:
		return r.checkString(v)
	case float64:
		if r.max > 0 && (v < float64(r.min) || v > float64(r.max)) {
			return fmt.Errorf("must be %d to %d, not %v", r.min, r.max, v)
		}
	case nil:
		if r.minItems > 0 {
			return errors.New("name at least one, not null")
		}
	case []any:
		if len(v) < r.minItems {
			return errors.New("name at least one")
		}
		if r.maxItems > 0 && len(v) > r.maxItems {
			return fmt.Errorf("at most %d items, not %d", r.maxItems, len(v))
		}
		for _, item := range v {
			if s, ok := item.(string); ok {
				if err := r.checkString(s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (r fieldRule) checkString(s string) error {
	if len(r.enum) > 0 && !slices.Contains(r.enum, s) {
		if r.refuse != nil {
			if why := r.refuse(s); why != "" {
				return fmt.Errorf("%s", why)
			}
		}
		return fmt.Errorf("%q is not one of %s", s, strings.Join(r.enum, ", "))
	}
	if r.maxLen > 0 && utf8.RuneCountInString(s) > r.maxLen {
		return fmt.Errorf("at most %d characters, not %d", r.maxLen, utf8.RuneCountInString(s))
	}
	return nil
}

// checkCalls is the server's middleware that checks every tools/call
// against the called tool's rules before the SDK decodes it: a call that
// breaks one is a tool error naming the field and what it may hold.
func (b *server) checkCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
			if rules, ok := b.rules[call.Params.Name]; ok {
				if err := checkArgs(call.Params.Arguments, rules); err != nil {
					res := &mcp.CallToolResult{}
					res.SetError(err)
					return res, nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

// addTool is mcp.AddTool with In's schema made from rules, which the
// server also checks every call against.
func addTool[In, Out any](s *mcp.Server, b *server, t *mcp.Tool, rules toolRules, h mcp.ToolHandlerFor[In, Out]) {
	schema, all := inputSchema[In](rules)
	t.InputSchema = schema
	b.rules[t.Name] = all
	mcp.AddTool(s, t, h)
}
