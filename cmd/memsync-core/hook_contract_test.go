package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/cmd/internal/hooks"
)

// hookPayload is a payload in the shape host sends for event, as captured
// from the real hosts (issue 26): Claude Code leaves permission_mode out of
// PreCompact and SessionEnd, sends prompt_id with a prompt,
// custom_instructions null, last_assistant_message with Stop, model with
// SessionStart; Codex sends turn_id and model, transcript_path null at
// times, and SessionEnd. extra sets or overrides fields.
func hookPayload(host, event, session string, extra map[string]any) []byte {
	p := map[string]any{"session_id": session, "cwd": "/home/dev/billing", "hook_event_name": event}
	switch host {
	case "claude-code":
		p["transcript_path"] = "/home/dev/.claude/projects/-home-dev-billing/" + session + ".jsonl"
		switch event {
		case "SessionStart":
			p["permission_mode"], p["source"], p["model"] = "default", "startup", "claude-sonnet-4-5"
		case "UserPromptSubmit":
			p["permission_mode"], p["prompt_id"] = "default", "4c1f0d2e-prompt"
		case "Stop":
			p["permission_mode"], p["stop_hook_active"], p["last_assistant_message"] = "default", false, "Done."
		case "PreCompact":
			p["trigger"], p["custom_instructions"] = "auto", nil
		case "SessionEnd":
			p["reason"] = "other"
		}
	case "codex":
		p["transcript_path"], p["model"], p["turn_id"] = nil, "gpt-5.5", "0199a1b2-d001-7000-8000-000000000001"
		switch event {
		case "SessionStart":
			p["permission_mode"], p["source"] = "default", "startup"
			delete(p, "turn_id")
		case "UserPromptSubmit":
			p["permission_mode"] = "default"
		case "Stop":
			p["permission_mode"], p["stop_hook_active"], p["last_assistant_message"] = "default", false, nil
		case "PreCompact":
			p["trigger"] = "manual"
		case "SessionEnd":
			p["reason"] = "other"
			delete(p, "turn_id")
		}
	}
	for k, v := range extra {
		p[k] = v
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return b
}

// hookAnswer is what one hook run printed, decoded.
type hookAnswer struct {
	raw      string
	context  string // hookSpecificOutput.additionalContext
	decision string
	reason   string
}

func runHookEvent(t *testing.T, repo, host, event string, payload []byte) hookAnswer {
	t.Helper()
	r := runHookBinary(t, payload, nil, "hook", host, event, "--repo", repo, "--agent", "planner")
	if r.code != 0 || r.took >= time.Second {
		t.Fatalf("%s %s: exit %d after %v; stderr %s", host, event, r.code, r.took, r.stderr)
	}
	a := hookAnswer{raw: r.stdout}
	if strings.Contains(r.stdout, "systemMessage") {
		t.Fatalf("%s %s printed a systemMessage (the user sees it, the model does not): %s", host, event, r.stdout)
	}
	if strings.HasPrefix(r.stdout, "{") {
		var out struct {
			Decision           string        `json:"decision"`
			Reason             string        `json:"reason"`
			HookSpecificOutput *hookSpecific `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || strings.Count(r.stdout, "\n") != 1 {
			t.Fatalf("%s %s: stdout is not one JSON document (%v): %q", host, event, err, r.stdout)
		}
		a.decision, a.reason = out.Decision, out.Reason
		if out.HookSpecificOutput != nil {
			if out.HookSpecificOutput.HookEventName != event {
				t.Fatalf("%s %s: hookEventName %q", host, event, out.HookSpecificOutput.HookEventName)
			}
			a.context = out.HookSpecificOutput.AdditionalContext
		}
	}
	return a
}

// stopReminderIn is the reminder in a Stop answer of host's shape:
// Claude Code's hookSpecificOutput.additionalContext, which continues the
// turn without a "Stop hook error"; Codex's block-with-reason. "" when the
// answer is not that shape.
func stopReminderIn(host string, a hookAnswer) string {
	if host == "claude-code" {
		if a.decision != "" || a.reason != "" {
			return ""
		}
		return a.context
	}
	if a.decision != "block" || a.context != "" {
		return ""
	}
	return a.reason
}

// TestHookContract walks one session per host through the contract of
// issue 26 (hookcontract.md): the context once at start and not again on
// resume; nothing for an unrelated prompt, nor for one the start already
// answered; the journaling reminder once, as Stop's block-with-reason, never
// while stop_hook_active; the context again after a compaction, without a
// second reminder; nothing from SessionEnd, Claude Code's PreCompact a
// note to its summarizer, Codex's nothing. On the code before the
// contract it fails at the first Stop (a systemMessage, no block) and at
// the resume (the context twice).
func TestHookContract(t *testing.T) {
	repo := hookRepo(t)
	for _, host := range hooks.Hosts() {
		t.Run(host, func(t *testing.T) {
			session := "contract-" + host
			command := "memsync append --agent planner --session " + session
			for _, step := range []struct {
				name, event string
				extra       map[string]any
				check       func(t *testing.T, a hookAnswer)
			}{
				{"start", "SessionStart", nil, func(t *testing.T, a hookAnswer) {
					if !strings.Contains(a.context, "Always write the failing test first") || !strings.Contains(a.context, "#billing migration") ||
						!strings.Contains(a.context, "Use #postgres for the billing service database") {
						t.Fatalf("no session context: %q", a.raw)
					}
					if n := utf8.RuneCountInString(a.context); n > hooks.ContextBudget(host) {
						t.Fatalf("context of %d characters, over %s's budget %d", n, host, hooks.ContextBudget(host))
					}
					if strings.Contains(a.context, hooks.ReminderMarker) {
						t.Fatalf("the reminder at startup: %s", a.context)
					}
				}},
				{"resume", "SessionStart", map[string]any{"source": "resume"}, wantNothing},
				{"unrelated prompt", "UserPromptSubmit", map[string]any{"prompt": "Tell me a joke about cats"}, wantNothing},
				// The start of a session in /home/dev/billing gave the
				// billing decision already (TestHookPromptNotRepeated and
				// TestHookPromptSelectedIsShown give a prompt its memories
				// in a fresh session).
				{"prompt the start answered", "UserPromptSubmit", map[string]any{"prompt": "Which database do we use for the billing service?"}, wantNothing},
				{"first stop", "Stop", nil, func(t *testing.T, a hookAnswer) {
					if r := stopReminderIn(host, a); !strings.HasPrefix(r, hooks.ReminderMarker) || !strings.Contains(r, command) {
						t.Fatalf("want the reminder as %s's Stop answer carrying %q, got %q", host, command, a.raw)
					}
				}},
				{"stop while the hook continued the turn", "Stop", map[string]any{"stop_hook_active": true}, wantNothing},
				{"a later stop", "Stop", nil, wantNothing},
				{"precompact", "PreCompact", nil, func(t *testing.T, a hookAnswer) {
					if host == "codex" {
						wantNothing(t, a)
						return
					}
					if a.raw != hooks.CompactSummaryNote+"\n" {
						t.Fatalf("Claude Code's PreCompact: want the summarizer note as plain text, got %q", a.raw)
					}
				}},
				{"after compaction", "SessionStart", map[string]any{"source": "compact"}, func(t *testing.T, a hookAnswer) {
					if !strings.Contains(a.context, "Always write the failing test first") {
						t.Fatalf("no context after the compaction: %q", a.raw)
					}
					if strings.Contains(a.context, hooks.ReminderMarker) {
						t.Fatalf("a second reminder after the compaction: %s", a.context)
					}
				}},
				{"end", "SessionEnd", nil, wantNothing},
			} {
				t.Run(step.name, func(t *testing.T) {
					step.check(t, runHookEvent(t, repo, host, step.event, hookPayload(host, step.event, session, step.extra)))
				})
			}
		})
	}
}

func wantNothing(t *testing.T, a hookAnswer) {
	t.Helper()
	if a.raw != "" {
		t.Fatalf("want nothing on stdout, got %q", a.raw)
	}
}

// TestHookReminderOnce: when the reminder comes, and that it comes at most
// once, per session: not when the session journaled (by its id, or any
// record since its start), once at a compaction that comes before any
// Stop (then not at Stop), on a resume of a session memsync never saw
// (its context too), and never without a session id.
func TestHookReminderOnce(t *testing.T) {
	repo := hookRepo(t)
	appendAs := func(t *testing.T, args ...string) {
		t.Helper()
		args = append([]string{"append", "--repo", repo, "--no-fsync", "--agent", "planner"}, args...)
		if out, err := exec.Command(memsyncBinary(t), args...).CombinedOutput(); err != nil {
			t.Fatalf("append: %v\n%s", err, out)
		}
	}
	for _, host := range hooks.Hosts() {
		for _, tc := range []struct {
			name  string
			steps func(t *testing.T, run func(event string, extra map[string]any) hookAnswer, session string)
		}{
			{"journaled with the session id", func(t *testing.T, run func(string, map[string]any) hookAnswer, session string) {
				run("SessionStart", nil)
				appendAs(t, "--session", session, "--kind", "decision", "Bill in euros from January")
				wantNothing(t, run("Stop", nil))
			}},
			{"journaled since the start, no session id", func(t *testing.T, run func(string, map[string]any) hookAnswer, session string) {
				run("SessionStart", nil)
				appendAs(t, "--kind", "observation", "The staging database is slow on Mondays "+session)
				wantNothing(t, run("Stop", nil))
			}},
			{"compaction before the first stop", func(t *testing.T, run func(string, map[string]any) hookAnswer, session string) {
				run("SessionStart", nil)
				a := run("SessionStart", map[string]any{"source": "compact"})
				if strings.Count(a.context, hooks.ReminderMarker) != 1 || !strings.Contains(a.context, "--session "+session) {
					t.Fatalf("want the reminder once after the compaction: %q", a.raw)
				}
				if n := utf8.RuneCountInString(a.context); n > hooks.ContextBudget(host) {
					t.Fatalf("context and reminder of %d characters, over %d", n, hooks.ContextBudget(host))
				}
				wantNothing(t, run("Stop", nil))
			}},
			{"resume of a session never answered", func(t *testing.T, run func(string, map[string]any) hookAnswer, session string) {
				if a := run("SessionStart", map[string]any{"source": "resume"}); !strings.Contains(a.context, "Always write the failing test first") {
					t.Fatalf("want the context for a session memsync never answered: %q", a.raw)
				}
				wantNothing(t, run("SessionStart", map[string]any{"source": "resume"}))
				if a := run("Stop", nil); stopReminderIn(host, a) == "" {
					t.Fatalf("want the reminder: %q", a.raw)
				}
			}},
			{"stop first, with stop_hook_active", func(t *testing.T, run func(string, map[string]any) hookAnswer, session string) {
				wantNothing(t, run("Stop", map[string]any{"stop_hook_active": true}))
				if a := run("Stop", nil); stopReminderIn(host, a) == "" {
					t.Fatalf("want the reminder: %q", a.raw)
				}
			}},
			{"no session id", func(t *testing.T, run func(string, map[string]any) hookAnswer, session string) {
				wantNothing(t, run("Stop", map[string]any{"session_id": ""}))
			}},
		} {
			t.Run(host+"/"+tc.name, func(t *testing.T) {
				session := strings.ReplaceAll(host+"-"+tc.name, " ", "-")
				run := func(event string, extra map[string]any) hookAnswer {
					return runHookEvent(t, repo, host, event, hookPayload(host, event, session, extra))
				}
				tc.steps(t, run, session)
			})
		}
	}
}

// TestHookSessionStateConcurrent: hooks of two sessions running at once
// each keep their own state whole (the reminder once per session).
func TestHookSessionStateConcurrent(t *testing.T) {
	repo := hookRepo(t)
	const n = 3
	type result struct {
		session string
		a       hookAnswer
	}
	results := make(chan result, 2*n)
	for i := range 2 * n {
		session := []string{"left", "right"}[i%2]
		go func() {
			r := runHookBinary(t, hookPayload("claude-code", "Stop", session, nil), nil, "hook", "claude-code", "Stop", "--repo", repo, "--agent", "planner")
			var out struct{ Decision string }
			json.Unmarshal([]byte(r.stdout), &out)
			results <- result{session, hookAnswer{raw: r.stdout, decision: out.Decision}}
		}()
	}
	blocks := map[string]int{}
	for range 2 * n {
		r := <-results
		if strings.Contains(r.a.raw, hooks.ReminderMarker) {
			blocks[r.session]++
		}
	}
	// Concurrent Stops of one session may each remind before either saves
	// (a host never runs them so: Stop follows a turn); what must hold is
	// that each session's state is whole afterwards, and then says reminded.
	for _, s := range []string{"left", "right"} {
		if blocks[s] == 0 {
			t.Errorf("session %s never reminded", s)
		}
		st, known, err := hooks.LoadState(layout(repo), "planner", s)
		if err != nil || !known || !st.Reminded || st.Session != s {
			t.Errorf("session %s state %+v known %v err %v", s, st, known, err)
		}
		wantNothing(t, runHookEvent(t, repo, "claude-code", "Stop", hookPayload("claude-code", "Stop", s, nil)))
	}
}

// TestHookContextBudgets: however much the agent's core tier holds, the
// context fits the host's budget (Claude Code 9,000 characters; Codex
// 6,000 characters and 9,600 bytes, under its 2,500-token preview of
// bytes/4), in multi-byte text too, and a reminder after a compaction is
// never what is cut.
func TestHookContextBudgets(t *testing.T) {
	repo := newRepo(t, "planner")
	for i := range 40 {
		text := fmt.Sprintf("core rule %d: ", i) + strings.Repeat("über-längliche Größe 東京の設定 ", 12)
		out, err := exec.Command(memsyncBinary(t), "append", "--repo", repo, "--no-fsync", "--agent", "planner",
			"--kind", "fact", "--tier", "core", text).CombinedOutput()
		if err != nil {
			t.Fatalf("append: %v\n%s", err, out)
		}
	}
	for _, host := range hooks.Hosts() {
		maxRunes, maxBytes := hooks.ContextLimits(host)
		for _, source := range []string{"startup", "compact"} {
			t.Run(host+"/"+source, func(t *testing.T) {
				a := runHookEvent(t, repo, host, "SessionStart", hookPayload(host, "SessionStart", "budget-"+host+"-"+source, map[string]any{"source": source}))
				if n := utf8.RuneCountInString(a.context); n > maxRunes || len(a.context) > maxBytes || n < maxRunes/2 {
					t.Fatalf("context of %d characters, %d bytes (limits %d, %d)", n, len(a.context), maxRunes, maxBytes)
				}
				if source == "compact" && !strings.HasSuffix(a.context, hooks.JournalReminder("planner", "budget-"+host+"-"+source)+"\n") {
					t.Fatalf("the reminder is not whole at the end:\n%s", a.context[max(0, len(a.context)-600):])
				}
			})
		}
	}
}

// TestHookPromptNotRepeated: a prompt's context leaves out what the
// session's start gave: the open follow-up a fresh session gets for the
// prompt is not given again to a session whose SessionStart showed it.
func TestHookPromptNotRepeated(t *testing.T) {
	repo := hookRepo(t)
	const prompt = "Where is the follow up on the billing migration with Mira?"
	for _, host := range hooks.Hosts() {
		t.Run(host, func(t *testing.T) {
			fresh := runHookEvent(t, repo, host, "UserPromptSubmit", hookPayload(host, "UserPromptSubmit", "fresh-"+host, map[string]any{"prompt": prompt}))
			if !strings.Contains(fresh.context, "#billing migration") {
				t.Fatalf("a fresh session's prompt lacks the follow-up: %q", fresh.raw)
			}
			started := "started-" + host
			if a := runHookEvent(t, repo, host, "SessionStart", hookPayload(host, "SessionStart", started, nil)); !strings.Contains(a.context, "#billing migration") {
				t.Fatalf("the session's start lacks the follow-up: %q", a.raw)
			}
			if a := runHookEvent(t, repo, host, "UserPromptSubmit", hookPayload(host, "UserPromptSubmit", started, map[string]any{"prompt": prompt})); strings.Contains(a.context, "#billing migration") {
				t.Fatalf("the follow-up given again: %q", a.raw)
			}
		})
	}
}

// selectedNotShown are the uuids a packet's "Selected:" line names that
// no item line of the context shows ("[uuid kind]").
func selectedNotShown(context string) (selected, missing []string) {
	for _, line := range strings.Split(context, "\n") {
		if rest, ok := strings.CutPrefix(line, "Selected: "); ok {
			selected = append(selected, strings.Fields(rest)...)
		}
	}
	for _, id := range selected {
		if !strings.Contains(context, "["+id+" ") {
			missing = append(missing, id)
		}
	}
	return selected, missing
}

// TestHookPromptSelectedIsShown (issue 49 item 3): a prompt's packet
// leaves out the core tier (SessionStart gave it) and what the session
// was already shown; its "Selected:" line names exactly the memories it
// shows, never the core preference nor what was left out. On the code
// before, the line kept the packet's whole selection.
func TestHookPromptSelectedIsShown(t *testing.T) {
	repo := hookRepo(t)
	corePref := uuidOf(t, repo, "planner", "Always write the failing test first")
	const prompt = "Which database do we use for the billing service? Follow up on the billing migration with Mira"
	for _, host := range hooks.Hosts() {
		t.Run(host, func(t *testing.T) {
			for _, session := range []string{"fresh-" + host, "started-" + host} {
				if strings.HasPrefix(session, "started-") {
					runHookEvent(t, repo, host, "SessionStart", hookPayload(host, "SessionStart", session, nil))
				}
				a := runHookEvent(t, repo, host, "UserPromptSubmit", hookPayload(host, "UserPromptSubmit", session, map[string]any{"prompt": prompt}))
				if a.context == "" {
					continue // everything was given at the start
				}
				selected, missing := selectedNotShown(a.context)
				if len(selected) == 0 || len(missing) > 0 || slices.Contains(selected, corePref) {
					t.Fatalf("%s: selected %v, not shown %v (core %s):\n%s", session, selected, missing, corePref, a.context)
				}
			}
		})
	}
}

// hookSpecific is a hook's hookSpecificOutput as the hosts read it.
type hookSpecific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}
