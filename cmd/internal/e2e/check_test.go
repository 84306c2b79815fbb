package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
)

// block is one piece of what the model received, in order: a text (from
// the user, the host or a hook), an assistant text, a tool call or a
// tool's result.
type block struct {
	Kind string // text, assistant, tool_call, tool_result
	Text string // the text, the called tool's name, or the result
	Msg  int    // the message (or input item) of the request it is in
}

// conversation is the blocks of one request body, either API's; ok is
// false for a body that is neither.
func conversation(body json.RawMessage) (blocks []block, tools []string, ok bool) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Input []json.RawMessage `json:"input"`
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil, nil, false
	}
	for _, raw := range req.Tools {
		tools = append(tools, responsesToolNames(raw)...)
	}
	switch {
	case req.Messages != nil: // Anthropic Messages
		for i, m := range req.Messages {
			for _, b := range anthropicBlocks(m.Content) {
				switch {
				case b.Type == "text" && m.Role == "assistant":
					blocks = append(blocks, block{"assistant", b.Text, i})
				case b.Type == "text":
					blocks = append(blocks, block{"text", b.Text, i})
				case b.Type == "tool_use":
					blocks = append(blocks, block{"tool_call", b.Name, i})
				case b.Type == "tool_result":
					blocks = append(blocks, block{"tool_result", toolResultText(b.Content), i})
				}
			}
		}
		return blocks, tools, true
	case req.Input != nil: // OpenAI Responses
		for i, raw := range req.Input {
			var it responsesItem
			json.Unmarshal(raw, &it)
			switch it.Type {
			case "message":
				kind := "text"
				if it.Role == "assistant" {
					kind = "assistant"
				}
				blocks = append(blocks, block{kind, strings.TrimSuffix(it.text(), "\n"), i})
			case "function_call":
				name := it.Name
				if it.Namespace != "" {
					name = it.Namespace + "__" + it.Name
				}
				blocks = append(blocks, block{"tool_call", name, i})
			case "function_call_output":
				blocks = append(blocks, block{"tool_result", toolResultText(it.Output), i})
			}
		}
		return blocks, tools, true
	}
	return nil, nil, false
}

// toolResultText is a tool result's text: a string, or its text parts.
func toolResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// expectations say what memsync's output looks like in a session, and
// which prompts the session sent.
type expectations struct {
	// SessionMarker is in the session packet (SessionStart) only.
	SessionMarker string
	// PromptMarker is in a prompt packet (UserPromptSubmit) only.
	PromptMarker string
	// ReminderMarker begins the journaling reminder, wherever it is (a
	// Stop's reason, or the context after a compaction).
	ReminderMarker string
	// Related is the prompt memory bears on; Memory the text of the
	// memory that bears on it, expected in its prompt packet and in the
	// result of the MCP search the model makes.
	Related, Memory string
	// Unrelated is the prompt memory does not bear on.
	Unrelated string
	// SearchTool is the MCP search tool's name as the model calls it.
	SearchTool string
}

// expectFor is what memsync's hooks give agent in these sessions.
func expectFor(agent string) expectations {
	return expectations{
		SessionMarker:  "# Working memory: " + agent + " for " + agent,
		PromptMarker:   "# Working memory: executor for " + agent,
		ReminderMarker: "memsync reminder (once per session)",
		Related:        databasePrompt,
		Memory:         "Use #postgres for the billing service",
		Unrelated:      unrelatedPrompt,
		SearchTool:     "mcp__memsync__search",
	}
}

// turn is one request of the session's main conversation.
type turn struct {
	Phase  string
	Blocks []block
}

// mainConversation is the requests that carry the session's conversation:
// those offering tools, less compaction (summarizer) requests.
func mainConversation(reqs []loggedRequest) []turn {
	var turns []turn
	for _, r := range reqs {
		blocks, tools, ok := conversation(r.Body)
		if !ok || len(tools) == 0 || len(blocks) == 0 {
			continue
		}
		if last := blocks[len(blocks)-1]; last.Kind == "text" && compactRequest.MatchString(last.Text) {
			continue
		}
		turns = append(turns, turn{r.Phase, blocks})
	}
	return turns
}

// checkSession returns what is wrong, by the expectations, with what the
// model received in one session's requests (all phases, in order); none
// when all is well:
//   - the session packet is in the conversation exactly once at the end
//     of every phase (start, after resume, after compaction);
//   - the related prompt's turn holds a prompt packet with the memory,
//     the unrelated prompt's turn none;
//   - the journaling reminder reached the model exactly once;
//   - the model got the memory in the result of its MCP search call.
func checkSession(reqs []loggedRequest, e expectations) []string {
	turns := mainConversation(reqs)
	if len(turns) == 0 {
		return []string{"no request carried the session's conversation"}
	}
	var problems []string
	// The last request of each phase.
	var phases []string
	last := map[string]turn{}
	for _, t := range turns {
		if _, seen := last[t.Phase]; !seen {
			phases = append(phases, t.Phase)
		}
		last[t.Phase] = t
	}
	for _, p := range phases {
		n := 0
		for _, b := range last[p].Blocks {
			if b.Kind == "text" {
				n += strings.Count(b.Text, e.SessionMarker)
			}
		}
		if n != 1 {
			problems = append(problems, fmt.Sprintf("session packet: %d times in the conversation at the end of phase %q, want 1", n, p))
		}
	}

	related, unrelated := promptTurn(turns, e.Related), promptTurn(turns, e.Unrelated)
	switch {
	case related == nil:
		problems = append(problems, fmt.Sprintf("prompt %q never reached the model", e.Related))
	case !anyBlock(related, func(b block) bool {
		return b.Kind == "text" && strings.Contains(b.Text, e.PromptMarker) && strings.Contains(b.Text, e.Memory)
	}):
		problems = append(problems, fmt.Sprintf("prompt packet: none with %q for the related prompt %q", e.Memory, e.Related))
	}
	switch {
	case unrelated == nil:
		problems = append(problems, fmt.Sprintf("prompt %q never reached the model", e.Unrelated))
	case anyBlock(unrelated, func(b block) bool { return b.Kind == "text" && strings.Contains(b.Text, e.PromptMarker) }):
		problems = append(problems, fmt.Sprintf("prompt packet: given for the unrelated prompt %q", e.Unrelated))
	}

	if n := reminders(turns, e); n != 1 {
		problems = append(problems, fmt.Sprintf("journaling reminder: reached the model %d times, want 1", n))
	}

	found := false
	for _, t := range turns {
		for i, b := range t.Blocks {
			if b.Kind == "tool_call" && b.Text == e.SearchTool {
				for _, r := range t.Blocks[i+1:] {
					if r.Kind == "tool_result" && strings.Contains(r.Text, e.Memory) {
						found = true
					}
				}
			}
		}
	}
	if !found {
		problems = append(problems, fmt.Sprintf("MCP search: no %s result holding %q reached the model", e.SearchTool, e.Memory))
	}
	return problems
}

// promptTurn is the blocks around a prompt the first time the model sees
// it: from after the assistant's last block before it to the assistant's
// next one (hooks' context comes before it in Claude Code, after it in
// Codex); nil when the prompt never reached the model.
func promptTurn(turns []turn, prompt string) []block {
	for _, t := range turns {
		for i, b := range t.Blocks {
			if b.Kind != "text" || strings.TrimSpace(b.Text) != prompt {
				continue
			}
			start, end := i, i+1
			for start > 0 && t.Blocks[start-1].Kind == "text" {
				start--
			}
			for end < len(t.Blocks) && t.Blocks[end].Kind == "text" {
				end++
			}
			return t.Blocks[start:end]
		}
	}
	return nil
}

func anyBlock(bs []block, f func(block) bool) bool {
	for _, b := range bs {
		if f(b) {
			return true
		}
	}
	return false
}

// reminders counts the reminders that reached the model: the messages
// holding a reminder that each request adds to the one before it (a
// multiset difference, so a compaction that drops one does not count, and
// one given twice counts twice). A reminder is known by its own words,
// from its marker to the end of its line, whatever the host wraps it in:
// Claude Code 2.1.197 sends a blocked Stop's reason as "Stop hook
// feedback:", and a resumed transcript carries, in that same message, the
// same reason again as a "Stop hook blocking error" system reminder. That
// is one reminder in one message, and counts once.
func reminders(turns []turn, e expectations) int {
	n := 0
	prev := map[string]int{}
	for _, t := range turns {
		cur := map[string]int{}
		seen := map[string]bool{} // reminder in message
		for _, b := range t.Blocks {
			key, ok := reminderKey(b, e.ReminderMarker)
			if ok && !seen[fmt.Sprint(b.Msg, key)] {
				seen[fmt.Sprint(b.Msg, key)] = true
				cur[key]++
			}
		}
		for key, c := range cur {
			if c > prev[key] {
				n += c - prev[key]
			}
		}
		prev = cur
	}
	return n
}

// reminderKey is the reminder a text block holds: from marker to the end
// of its line, trimmed.
func reminderKey(b block, marker string) (string, bool) {
	if b.Kind != "text" {
		return "", false
	}
	i := strings.Index(b.Text, marker)
	if i < 0 {
		return "", false
	}
	rest := b.Text[i:]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest), true
}
