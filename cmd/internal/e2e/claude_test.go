package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// databaseAnswer is the fake model's answer to databasePrompt, once it
// has memsync's search result.
const databaseAnswer = "Memory says the billing service uses Postgres."

// claudeSetup installs memsync's hooks (wrapped for capture) and MCP
// server for the world's project, as a user does.
func claudeSetup(t *testing.T, w *world) {
	t.Helper()
	w.memsync("hook", "install", "claude-code", "--project", w.project, "--agent", agent, "--repo", w.repo, "--prompt")
	w.wrapHooks(filepath.Join(w.project, ".claude", "settings.json"))
	w.run(w.project, "", w.claude, "mcp", "add", "--scope", "user", "memsync", "--", filepath.Join(w.bin, "memsync"), "mcp", "--agent", agent, "--repo", w.repo)
}

// claudeSession runs the first steps (all for 0) of one Claude Code session: a prompt memory bears on, an
// unrelated one on resume, /compact, and a last prompt on resume; each
// step is one `claude -p` run, so each starts (or resumes) the session and
// ends it (Stop, SessionEnd). The first step's answer must be the
// answer to its prompt (print mode keeps it: issue 53).
func claudeSession(t *testing.T, w *world, steps int) {
	t.Helper()
	claudeSetup(t, w)
	const session = "5b0c9e2a-6f1d-4c8e-9a7b-3d2e1f0a9c8b"
	common := []string{"--output-format", "json", "--allowedTools", "mcp__memsync__search"}
	all := []struct {
		phase string
		args  []string
	}{
		{"start", []string{"-p", databasePrompt, "--session-id", session}},
		{"unrelated", []string{"-p", unrelatedPrompt, "--resume", session}},
		{"compact", []string{"-p", "/compact", "--resume", session}},
		{"resume", []string{"-p", "Thanks, that is all.", "--resume", session}},
	}
	if steps == 0 {
		steps = len(all)
	}
	for i, s := range all[:steps] {
		w.api.setPhase(s.phase)
		out := w.run(w.project, "", w.claude, append(s.args, common...)...)
		if i == 0 && !w.dropping() {
			if got := claudeResult(t, out); got != databaseAnswer {
				t.Errorf("claude -p --output-format json printed the result %q, want the answer %q", got, databaseAnswer)
			}
		}
	}
}

// claudeResult is the result of claude -p --output-format json.
func claudeResult(t *testing.T, out string) string {
	t.Helper()
	var r struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("claude -p --output-format json printed no JSON (%v):\n%s", err, out)
	}
	return r.Result
}

// TestClaudeCode runs a Claude Code session against memsync and checks
// what the model received, with the pinned Claude Code and the latest.
func TestClaudeCode(t *testing.T) {
	t.Parallel()
	claudeVersions(t, func(t *testing.T, w *world) {
		defer w.saveArtifacts("claude-code-" + w.label)
		claudeSession(t, w, 0)
		w.finish("claude-code")
	})
}

// TestClaudeCodePrintKeepsAnswer: claude -p as text and as stream-json
// (json is TestClaudeCode's) prints the answer to the prompt, not the
// model's reply to the journaling reminder; the reminder reached the
// model once, with the session's context (issue 53).
func TestClaudeCodePrintKeepsAnswer(t *testing.T) {
	t.Parallel()
	claudeVersions(t, func(t *testing.T, w *world) {
		defer w.saveArtifacts("claude-code-print-" + w.label)
		claudeSetup(t, w)
		w.api.setPhase("text")
		out := w.run(w.project, "", w.claude, "-p", databasePrompt, "--allowedTools", "mcp__memsync__search")
		if got := strings.TrimSpace(out); got != databaseAnswer {
			t.Errorf("claude -p printed %q, want the answer %q", got, databaseAnswer)
		}
		w.api.setPhase("stream-json")
		out = w.run(w.project, "", w.claude, "-p", databasePrompt, "--output-format", "stream-json", "--verbose", "--allowedTools", "mcp__memsync__search")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var last struct {
			Type   string `json:"type"`
			Result string `json:"result"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "result" || last.Result != databaseAnswer {
			t.Errorf("claude -p --output-format stream-json ended with %s (%v), want a result %q", lines[len(lines)-1], err, databaseAnswer)
		}
		w.checkReminders("claude -p", 1, "text")
		w.checkReminders("claude -p --output-format stream-json", 1, "stream-json")
	})
}

// claudeAttendedSession runs the first steps of an attended Claude Code
// session: CLAUDE_CODE_ENTRYPOINT claude-vscode is the one Claude Code's
// VS Code extension sets, where every message is shown, so memsync gives
// the reminder at Stop. -p keeps it so (Claude Code rewrites only "cli"
// to "sdk-cli"), and its Stop hooks take the same path as the terminal's:
// the hook's additionalContext continues the turn.
func claudeAttendedSession(t *testing.T, w *world, steps int) {
	t.Helper()
	w.env = append(w.env, "CLAUDE_CODE_ENTRYPOINT=claude-vscode")
	claudeSetup(t, w)
	// Outside -p's own entrypoint Claude Code uses ANTHROPIC_API_KEY only
	// once the user approved it (its last 20 characters, in ~/.claude.json).
	w.editJSON(filepath.Join(w.home, ".claude.json"), func(cfg map[string]any) {
		cfg["customApiKeyResponses"] = map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}}
	})
	const session = "7d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a"
	common := []string{"--output-format", "json", "--allowedTools", "mcp__memsync__search"}
	all := []struct {
		phase string
		args  []string
	}{
		{"start", []string{"-p", databasePrompt, "--session-id", session}},
		{"unrelated", []string{"-p", unrelatedPrompt, "--resume", session}},
	}
	for _, s := range all[:steps] {
		w.api.setPhase(s.phase)
		w.run(w.project, "", w.claude, append(s.args, common...)...)
	}
}

// TestClaudeCodeAttendedStop: in an attended session the reminder is
// Stop's additionalContext: it continues the turn, reaches the model once
// (also in the next turns: no "Stop hook blocking error" copy beside it)
// and is no error (issue 53).
func TestClaudeCodeAttendedStop(t *testing.T) {
	t.Parallel()
	claudeVersions(t, func(t *testing.T, w *world) {
		defer w.saveArtifacts("claude-code-attended-" + w.label)
		claudeAttendedSession(t, w, 2)
		w.checkReminders("claude-code attended", 1, "start", "unrelated")
		for _, r := range w.api.requests() {
			for _, bad := range []string{"Stop hook blocking error", "Stop hook feedback", "hook error"} {
				if strings.Contains(string(r.Body), bad) {
					t.Errorf("a request of phase %q carries %q: the reminder reads as an error", r.Phase, bad)
				}
			}
		}
		reminded := false
		for _, c := range w.hookCalls() {
			if c.Event == "Stop" && strings.Contains(string(c.Output), `"additionalContext"`) {
				reminded = true
			}
		}
		if !reminded {
			t.Errorf("no Stop hook answered with the reminder as additionalContext")
		}
	})
}

// TestMCPEverywhereTheUserWorks: after the README's "Connect your agent"
// commands, run in one project, memsync's MCP server is registered for
// the user: the client started in another directory lists it, and
// reaches it (issue 53).
func TestMCPEverywhereTheUserWorks(t *testing.T) {
	t.Parallel()
	claudeVersions(t, func(t *testing.T, w *world) {
		claudeSetup(t, w)
		elsewhere := t.TempDir()
		out := w.run(elsewhere, "", w.claude, "mcp", "list")
		if !strings.Contains(out, "memsync") || !strings.Contains(out, "Connected") {
			t.Errorf("claude mcp list in another directory:\n%s\nwant memsync, connected", out)
		}
	})
}
