package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// loggedRequest is one request a host sent to the fake model API.
type loggedRequest struct {
	Phase string          `json:"phase"` // the step of the session that sent it
	Path  string          `json:"path"`
	Body  json.RawMessage `json:"body"`
}

// modelAPI is a fake Anthropic Messages and OpenAI Responses API on
// loopback. It answers from a small script: a prompt that asks which
// database is used gets a call of memsync's MCP search tool, the tool's
// result gets a short text answer, anything else "OK".
type modelAPI struct {
	url string

	mu    sync.Mutex
	phase string
	log   []loggedRequest
	n     int
}

// databasePrompt is the prompt memory bears on; the script answers it with
// a call of memsync's search tool.
const databasePrompt = "Which database do we use for the billing service?"

// unrelatedPrompt is the prompt memory does not bear on.
const unrelatedPrompt = "Tell me a joke about cats"

var (
	asksDatabase   = regexp.MustCompile(`(?i)which database do we use`)
	memsyncSearch  = regexp.MustCompile(`^mcp__memsync__search$`)
	compactRequest = regexp.MustCompile(`(?i)create a detailed summary of the conversation|summar(y|ize) (of )?the conversation|context checkpoint compaction`)
)

func startModelAPI(t *testing.T) *modelAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake model API: %v", err)
	}
	m := &modelAPI{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

// setPhase names the step whose requests follow.
func (m *modelAPI) setPhase(p string) {
	m.mu.Lock()
	m.phase = p
	m.mu.Unlock()
}

// requests is a copy of the log so far.
func (m *modelAPI) requests() []loggedRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]loggedRequest(nil), m.log...)
}

func (m *modelAPI) next() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	return m.n
}

func (m *modelAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := r.URL.Path
	m.mu.Lock()
	if r.Method == http.MethodPost {
		m.log = append(m.log, loggedRequest{Phase: m.phase, Path: path, Body: append(json.RawMessage(nil), body...)})
	} else {
		m.log = append(m.log, loggedRequest{Phase: m.phase, Path: r.Method + " " + path})
	}
	m.mu.Unlock()
	switch {
	case strings.HasSuffix(path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case strings.HasSuffix(path, "/messages"):
		m.anthropic(w, body)
	case strings.HasSuffix(path, "/responses"):
		m.responses(w, body)
	case strings.HasSuffix(path, "/models"):
		writeJSON(w, map[string]any{"data": []any{}, "models": []any{}})
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// reply is what the script answers: text, or a call of a tool.
type reply struct {
	text     string
	toolName string
	toolArgs string
}

// script decides the answer from the last user turn: whether it carries a
// tool result, asks about the database (and the search tool is offered),
// or is a compaction request.
func script(lastUser string, hasToolResult bool, tools []string, lastAssistantCalled bool) reply {
	switch {
	case hasToolResult:
		return reply{text: "Memory says the billing service uses Postgres."}
	case compactRequest.MatchString(lastUser):
		return reply{text: "<analysis>Short session.</analysis>\n<summary>The user asked which database the billing service uses (Postgres, from memory) and for a joke about cats.</summary>"}
	case asksDatabase.MatchString(lastUser) && !lastAssistantCalled:
		for _, name := range tools {
			if memsyncSearch.MatchString(name) {
				return reply{toolName: name, toolArgs: `{"query":"database billing service"}`}
			}
		}
		return reply{text: "I have no memsync search tool."}
	case strings.Contains(lastUser, "joke about cats"):
		return reply{text: "Why did the cat sit on the computer? To keep an eye on the mouse."}
	}
	return reply{text: "OK."}
}

// anthropic answers POST /v1/messages (streaming or not).
func (m *modelAPI) anthropic(w http.ResponseWriter, body []byte) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var lastUser string
	hasResult, searchedTools := false, false
	called := map[string]string{} // tool_use id: the tool's name
	for i, msg := range req.Messages {
		for _, b := range anthropicBlocks(msg.Content) {
			switch {
			case b.Type == "tool_use":
				called[b.ID] = b.Name
			case i == len(req.Messages)-1 && msg.Role == "user" && b.Type == "text":
				lastUser += b.Text + "\n"
			case i == len(req.Messages)-1 && msg.Role == "user" && b.Type == "tool_result":
				if called[b.ToolUseID] == claudeToolSearch {
					searchedTools = true
				} else {
					hasResult = true
				}
			}
		}
	}
	var tools []string
	for _, tl := range req.Tools {
		tools = append(tools, tl.Name)
	}
	var rep reply
	switch {
	case searchedTools:
		// The tool search loaded memsync's search: call it.
		rep = reply{toolName: "mcp__memsync__search", toolArgs: `{"query":"database billing service"}`}
	case asksDatabase.MatchString(lastUser) && !slices.ContainsFunc(tools, memsyncSearch.MatchString) &&
		slices.Contains(tools, claudeToolSearch) && strings.Contains(string(body), "mcp__memsync__search"):
		// Claude Code 2.1.332 defers MCP tools: their names are listed in
		// the conversation, and ToolSearch loads one before it is called.
		rep = reply{toolName: claudeToolSearch, toolArgs: `{"query":"select:mcp__memsync__search"}`}
	default:
		rep = script(lastUser, hasResult, tools, false)
	}
	id := m.next()
	msgID := fmt.Sprintf("msg_%04d", id)
	var content []map[string]any
	stop := "end_turn"
	if rep.toolName != "" {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%04d", id), "name": rep.toolName, "input": json.RawMessage(rep.toolArgs)})
	} else {
		content = append(content, map[string]any{"type": "text", "text": rep.text})
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		writeJSON(w, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	ev := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message", "role": "assistant",
		"model": "claude-sonnet-4-5", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if rep.toolName != "" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": content[0]["id"], "name": rep.toolName, "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": rep.toolArgs}})
	} else {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": rep.text}})
	}
	ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

// claudeToolSearch is the tool behind which Claude Code (2.1.332) defers
// MCP tools: the model calls it with "select:NAME" to load one.
const claudeToolSearch = "ToolSearch"

// anthropicBlock is one content block of a Messages API message.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`          // tool_use
	Name      string          `json:"name"`        // tool_use
	ToolUseID string          `json:"tool_use_id"` // tool_result
	Content   json.RawMessage `json:"content"`     // tool_result
}

// anthropicBlocks reads a message's content: a string or a list of blocks.
func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	json.Unmarshal(raw, &bs)
	return bs
}

// responses answers POST /v1/responses with a Server-Sent Events stream.
// Codex defers MCP tools behind its client-side tool_search: to call
// memsync's search the script first searches for it (tool_search_call),
// then calls the function the tool_search_output exposed, namespaced.
func (m *modelAPI) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Input []json.RawMessage `json:"input"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tools []string
	for _, raw := range req.Tools {
		tools = append(tools, responsesToolNames(raw)...)
	}
	// The last user turn: every item after the last assistant message.
	var lastUser string
	hasResult, called, searched := false, false, false
	var found []string
	for _, raw := range req.Input {
		var it responsesItem
		json.Unmarshal(raw, &it)
		switch it.Type {
		case "message":
			if it.Role == "assistant" {
				lastUser, hasResult, called, searched, found = "", false, false, false, nil
			} else if it.Role == "user" {
				lastUser += it.text() + "\n"
			}
		case "tool_search_call":
			searched = true
		case "tool_search_output":
			for _, tl := range it.Tools {
				found = append(found, responsesToolNames(tl)...)
			}
		case "function_call":
			called = true
		case "function_call_output", "mcp_tool_call_output":
			hasResult = true
		}
	}
	rep := script(lastUser, hasResult, append(tools, found...), called)
	search := false
	if rep.toolName == "" && !hasResult && !searched && asksDatabase.MatchString(lastUser) && slices.Contains(tools, "tool_search") {
		search = true
	}
	id := m.next()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	ev := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	respID := fmt.Sprintf("resp_%04d", id)
	ev(map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
	var item map[string]any
	switch {
	case search:
		item = map[string]any{"type": "tool_search_call", "id": fmt.Sprintf("tsc_%04d", id), "call_id": fmt.Sprintf("call_%04d", id),
			"status": "completed", "execution": "client", "arguments": map[string]any{"query": "memsync search memory"}}
	case rep.toolName != "":
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%04d", id), "call_id": fmt.Sprintf("call_%04d", id),
			"name": rep.toolName, "arguments": rep.toolArgs}
		if i := strings.LastIndex(rep.toolName, "__"); i > 0 && !slices.Contains(tools, rep.toolName) {
			item["namespace"], item["name"] = rep.toolName[:i], rep.toolName[i+2:]
		}
	default:
		item = map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%04d", id),
			"content": []any{map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}}}
		ev(map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": rep.text})
	}
	ev(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	tokens := 120
	if m.phaseNow() == overflowPhase {
		tokens = 900000 // past model_auto_compact_token_limit: Codex compacts
	}
	ev(map[string]any{"type": "response.completed", "response": map[string]any{"id": respID,
		"usage": map[string]any{"input_tokens": tokens - 20, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": tokens}}})
}

// overflowPhase is the phase in which the Responses API reports a usage
// past Codex's auto-compaction limit (codex exec has no /compact).
const overflowPhase = "compact"

func (m *modelAPI) phaseNow() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.phase
}

// responsesItem is one input item of a Responses API request.
type responsesItem struct {
	Type      string            `json:"type"`
	Role      string            `json:"role"`
	Content   json.RawMessage   `json:"content"`
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Output    json.RawMessage   `json:"output"`
	Tools     []json.RawMessage `json:"tools"` // tool_search_output
}

// text is a message item's text, its parts joined.
func (it responsesItem) text() string {
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(it.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// responsesToolNames is the callable names one tool entry offers: a
// function's name, or each function of a namespace as namespace__name.
func responsesToolNames(raw json.RawMessage) []string {
	var tl struct {
		Type  string            `json:"type"`
		Name  string            `json:"name"`
		Tools []json.RawMessage `json:"tools"`
	}
	json.Unmarshal(raw, &tl)
	out := []string{cmp.Or(tl.Name, tl.Type)} // tool_search has a type only
	for _, sub := range tl.Tools {
		for _, n := range responsesToolNames(sub) {
			out = append(out, tl.Name+"__"+n)
		}
	}
	return out
}
