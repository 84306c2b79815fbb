package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Synthetic pieces of a session, as the hooks under issue 26's contract
// would give them.
var (
	ex           = expectFor(agent)
	sessionCtx   = ex.SessionMarker + "\nGoal: start of session\n## Core\n- Always write the failing test first"
	relatedCtx   = ex.PromptMarker + "\n## Relevant facts\n- " + ex.Memory
	reminderLine = ex.ReminderMarker + ": journal what you learned with `memsync append --agent " + agent + " --session S --kind K \"TEXT\"`"
	reminderText = "Stop hook feedback:\n" + reminderLine
	// reminderReplay is how Claude Code's resumed transcript carries the
	// same Stop's reason a second time, in the same message.
	reminderReplay = "<system-reminder>\nStop hook blocking error from command: \"memsync hook claude-code Stop\": " + reminderLine + "\n</system-reminder>"
	searchResult   = `{"results":[{"text":"` + ex.Memory + `"}]}`
)

// anthropicMsg is a message of a synthetic Messages API request; a
// content of "tool_use:NAME" or "tool_result:TEXT" is that block.
type anthropicMsg struct {
	role  string
	texts []string
}

func anthropicRequest(phase string, msgs ...anthropicMsg) loggedRequest {
	var out []map[string]any
	for _, m := range msgs {
		var blocks []map[string]any
		for _, t := range m.texts {
			switch {
			case strings.HasPrefix(t, "tool_use:"):
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": "t1", "name": strings.TrimPrefix(t, "tool_use:"), "input": map[string]any{}})
			case strings.HasPrefix(t, "tool_result:"):
				blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": strings.TrimPrefix(t, "tool_result:")})
			default:
				blocks = append(blocks, map[string]any{"type": "text", "text": t})
			}
		}
		out = append(out, map[string]any{"role": m.role, "content": blocks})
	}
	body, _ := json.Marshal(map[string]any{"messages": out, "tools": []map[string]any{{"name": ex.SearchTool}}})
	return loggedRequest{Phase: phase, Path: "/v1/messages", Body: body}
}

func user(texts ...string) anthropicMsg      { return anthropicMsg{"user", texts} }
func assistant(texts ...string) anthropicMsg { return anthropicMsg{"assistant", texts} }

// goodClaudeSession is a session as the contract wants it: the packet
// once, a prompt packet for the related prompt only, the reminder once
// (at the first Stop), the search result after the call, and after
// compaction the packet again.
func goodClaudeSession() []loggedRequest {
	first := []anthropicMsg{user(sessionCtx, relatedCtx, ex.Related)}
	called := append(slices.Clone(first), assistant("tool_use:"+ex.SearchTool), user("tool_result:"+searchResult))
	answered := append(slices.Clone(called), assistant("Postgres."), user(reminderText))
	joke := append(slices.Clone(answered), assistant("Nothing to journal."), user(ex.Unrelated))
	compacted := []anthropicMsg{user("Summary: Postgres; a joke."), assistant("OK."), user(sessionCtx, "Thanks")}
	return []loggedRequest{
		anthropicRequest("start", first...),
		anthropicRequest("start", called...),
		anthropicRequest("start", answered...),
		anthropicRequest("unrelated", joke...),
		anthropicRequest("compact", append(slices.Clone(joke), assistant("Why..."), user("Your task is to create a detailed summary of the conversation so far"))...),
		anthropicRequest("resume", compacted...),
	}
}

// edit returns the session with every block whose text (or result) is
// from replaced by blocks of the texts to (removed when there are none),
// in the requests of phase (all for "").
func edit(reqs []loggedRequest, phase, from string, to ...string) []loggedRequest {
	var out []loggedRequest
	for _, r := range reqs {
		if phase != "" && r.Phase != phase {
			out = append(out, r)
			continue
		}
		var body map[string]any
		json.Unmarshal(r.Body, &body)
		for _, m := range body["messages"].([]any) {
			msg := m.(map[string]any)
			var kept []any
			for _, b := range msg["content"].([]any) {
				blk := b.(map[string]any)
				if blk["text"] != from && blk["content"] != from {
					kept = append(kept, blk)
					continue
				}
				for _, text := range to {
					c := maps.Clone(blk)
					if blk["text"] == from {
						c["text"] = text
					} else {
						c["content"] = text
					}
					kept = append(kept, c)
				}
			}
			msg["content"] = kept
		}
		b, _ := json.Marshal(body)
		out = append(out, loggedRequest{Phase: r.Phase, Path: r.Path, Body: b})
	}
	return out
}

// responsesRequest is a synthetic Responses API request: items are
// "developer:TEXT", "user:TEXT", "assistant:TEXT", "call:NAMESPACE:NAME"
// or "output:TEXT".
func responsesRequest(phase string, items ...string) loggedRequest {
	var input []map[string]any
	for _, it := range items {
		kind, rest, _ := strings.Cut(it, ":")
		switch kind {
		case "developer", "user":
			input = append(input, map[string]any{"type": "message", "role": kind, "content": []any{map[string]any{"type": "input_text", "text": rest}}})
		case "assistant":
			input = append(input, map[string]any{"type": "message", "role": kind, "content": []any{map[string]any{"type": "output_text", "text": rest}}})
		case "call":
			ns, name, _ := strings.Cut(rest, ":")
			input = append(input, map[string]any{"type": "function_call", "namespace": ns, "name": name, "call_id": "c1", "arguments": "{}"})
		case "output":
			input = append(input, map[string]any{"type": "function_call_output", "call_id": "c1", "output": rest})
		}
	}
	body, _ := json.Marshal(map[string]any{"input": input, "tools": []map[string]any{{"type": "tool_search"}}})
	return loggedRequest{Phase: phase, Path: "/v1/responses", Body: body}
}

func goodCodexSession() []loggedRequest {
	first := []string{"developer:You are Codex.", "developer:" + sessionCtx, "user:" + ex.Related, "developer:" + relatedCtx}
	called := append(slices.Clone(first), "call:mcp__memsync:search", "output:Wall time: 0.01 seconds\nOutput:\n"+searchResult)
	reminded := append(slices.Clone(called), "assistant:Postgres.", "user:"+reminderText)
	joke := append(slices.Clone(reminded), "assistant:Nothing to journal.", "user:"+ex.Unrelated)
	return []loggedRequest{
		responsesRequest("start", first...),
		responsesRequest("start", called...),
		responsesRequest("start", reminded...),
		responsesRequest("unrelated", joke...),
		responsesRequest("resume", append(slices.Clone(joke), "assistant:Why...", "user:You are performing a CONTEXT CHECKPOINT COMPACTION.")...),
		responsesRequest("resume", "developer:You are Codex.", "user:Summary.", "developer:"+sessionCtx, "user:Thanks"),
	}
}

func readRecorded(t *testing.T, name string) []loggedRequest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "requests", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []loggedRequest
	if err := json.Unmarshal(data, &reqs); err != nil {
		t.Fatal(err)
	}
	return reqs
}

// TestCheckSession runs the checker on synthetic sessions, good and
// broken one way each, and on the requests the real hosts sent with
// memsync's hooks before issue 26 (testdata/requests/).
func TestCheckSession(t *testing.T) {
	good := goodClaudeSession()
	tests := []struct {
		name string
		reqs []loggedRequest
		want []string // a substring of each problem, in order
	}{
		{"claude-code good", good, nil},
		{"codex good", goodCodexSession(), nil},
		{"no packet at start", edit(good, "start", sessionCtx), []string{`session packet: 0 times in the conversation at the end of phase "start"`}},
		{"packet again on resume", edit(good, "unrelated", ex.Unrelated, sessionCtx, ex.Unrelated),
			[]string{`session packet: 2 times in the conversation at the end of phase "unrelated"`}},
		{"no packet after compaction", edit(good, "resume", sessionCtx), []string{`session packet: 0 times in the conversation at the end of phase "resume"`}},
		{"no prompt packet", edit(good, "", relatedCtx), []string{"prompt packet: none with"}},
		{"prompt packet for the unrelated prompt", edit(good, "unrelated", ex.Unrelated, relatedCtx, ex.Unrelated),
			[]string{"prompt packet: given for the unrelated prompt"}},
		{"no reminder", edit(good, "", reminderText), []string{"journaling reminder: reached the model 0 times"}},
		{"reminder twice", edit(good, "unrelated", ex.Unrelated, reminderText, ex.Unrelated), []string{"journaling reminder: reached the model 2 times"}},
		{"reminder replayed in its own message on resume", edit(good, "unrelated", reminderText, reminderReplay, reminderText), nil},
		{"no search result", edit(good, "", searchResult, "no results"), []string{"MCP search: no mcp__memsync__search result"}},
		{"nothing", nil, []string{"no request carried the session's conversation"}},
		{"claude-code before issue 26", readRecorded(t, "claude-code"), []string{
			`session packet: 2 times in the conversation at the end of phase "unrelated"`,
			`session packet: 3 times in the conversation at the end of phase "resume"`,
			"prompt packet: given for the unrelated prompt",
			"journaling reminder: reached the model 0 times",
		}},
		{"codex before issue 26", readRecorded(t, "codex"), []string{
			`session packet: 2 times in the conversation at the end of phase "unrelated"`,
			`session packet: 3 times in the conversation at the end of phase "compact"`,
			`session packet: 2 times in the conversation at the end of phase "resume"`,
			"prompt packet: given for the unrelated prompt",
			"journaling reminder: reached the model 0 times",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := checkSession(tc.reqs, ex)
			ok := len(got) == len(tc.want)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.Contains(got[i], tc.want[i])
			}
			if !ok {
				t.Errorf("problems:\n  %s\nwant (substrings):\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}
