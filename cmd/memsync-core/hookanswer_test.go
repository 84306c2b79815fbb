package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/cmd/internal/hooks"
	"github.com/memsync/memsync/cmd/internal/hooks/hookstest"
)

// runHookEventEnv is runHookEvent with env added to the hook's
// environment (the variables a host sets for its hooks).
func runHookEventEnv(t *testing.T, repo, host, event string, payload []byte, env ...string) hookAnswer {
	t.Helper()
	r := runHookBinary(t, payload, env, "hook", host, event, "--repo", repo, "--agent", "planner")
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d; stderr %s", host, event, r.code, r.stderr)
	}
	a := hookAnswer{raw: r.stdout}
	if strings.HasPrefix(r.stdout, "{") {
		var out struct {
			Decision           string        `json:"decision"`
			Reason             string        `json:"reason"`
			HookSpecificOutput *hookSpecific `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("%s %s: stdout is not JSON (%v): %q", host, event, err, r.stdout)
		}
		a.decision, a.reason = out.Decision, out.Reason
		if out.HookSpecificOutput != nil {
			a.context = out.HookSpecificOutput.AdditionalContext
		}
	}
	return a
}

// TestHookUnattendedSession: in a session nobody reads along (claude -p
// and the Agent SDK by CLAUDE_CODE_ENTRYPOINT, codex exec by its
// rollout's session_meta), Stop gives nothing, so that the turn's last
// message stays the answer, and the reminder goes once with the session's
// context instead: SessionStart's, or, for a session whose start memsync
// did not answer (a resume), the first prompt's. An attended session gets
// it at Stop, in the host's shape (stopReminderIn).
func TestHookUnattendedSession(t *testing.T) {
	repo := hookRepo(t)
	exec := hookstest.CodexRollout(t, `"exec"`)
	cli := hookstest.CodexRollout(t, `"cli"`)
	type host struct {
		name   string
		host   string
		extra  map[string]any // payload fields of every event
		env    []string
		attend bool
	}
	hosts := []host{
		{"claude -p", "claude-code", nil, []string{"CLAUDE_CODE_ENTRYPOINT=sdk-cli"}, false},
		{"claude agent sdk", "claude-code", nil, []string{"CLAUDE_CODE_ENTRYPOINT=sdk-ts"}, false},
		{"codex exec", "codex", map[string]any{"transcript_path": exec}, nil, false},
		{"claude interactive", "claude-code", nil, []string{"CLAUDE_CODE_ENTRYPOINT=cli"}, true},
		{"claude in vs code", "claude-code", nil, []string{"CLAUDE_CODE_ENTRYPOINT=claude-vscode"}, true},
		{"codex interactive", "codex", map[string]any{"transcript_path": cli}, nil, true},
		{"codex, rollout not written yet", "codex", map[string]any{"transcript_path": filepath.Join(t.TempDir(), "none.jsonl")}, nil, true},
	}
	for _, h := range hosts {
		for _, start := range []string{"startup", "resume"} {
			t.Run(h.name+"/"+start, func(t *testing.T) {
				session := strings.ReplaceAll(h.name+"-"+start, " ", "-")
				run := func(event string, extra map[string]any) hookAnswer {
					fields := map[string]any{}
					for k, v := range h.extra {
						fields[k] = v
					}
					for k, v := range extra {
						fields[k] = v
					}
					return runHookEventEnv(t, repo, h.host, event, hookPayload(h.host, event, session, fields), h.env...)
				}
				reminders := 0
				if start == "startup" {
					a := run("SessionStart", nil)
					if !strings.Contains(a.context, "Always write the failing test first") {
						t.Fatalf("no session context: %q", a.raw)
					}
					reminders += strings.Count(a.context, hooks.ReminderMarker)
				} else {
					// A resumed session memsync never answered: the host's
					// SessionStart is not hooked for resume.
					a := run("UserPromptSubmit", map[string]any{"prompt": "Tell me a joke about cats"})
					reminders += strings.Count(a.context, hooks.ReminderMarker)
					if reminders == 1 && strings.Contains(a.context, "# Working memory") {
						t.Fatalf("an unrelated prompt got memories with the reminder: %q", a.raw)
					}
				}
				if h.attend && reminders != 0 {
					t.Fatalf("attended, the reminder came with the context before Stop (%d)", reminders)
				}
				if !h.attend && reminders != 1 {
					t.Fatalf("unattended, the reminder came %d times with the context, want 1", reminders)
				}
				a := run("UserPromptSubmit", map[string]any{"prompt": "Which database do we use for the billing service?"})
				if strings.Contains(a.context, hooks.ReminderMarker) {
					t.Fatalf("the reminder again with the next prompt: %q", a.raw)
				}
				stop := run("Stop", nil)
				if !h.attend {
					wantNothing(t, stop)
					return
				}
				if r := stopReminderIn(h.host, stop); !strings.HasPrefix(r, hooks.ReminderMarker) {
					t.Fatalf("attended, no reminder at Stop in %s's shape: %q", h.host, stop.raw)
				}
				wantNothing(t, run("Stop", nil))
			})
		}
	}
}
