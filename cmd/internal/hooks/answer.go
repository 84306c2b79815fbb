package hooks

// What each host does with a hook's answer, as found in its own code or
// docs (issue 26). The contract memsync keeps is in answer below.
//
// Claude Code (2.1.x; https://code.claude.com/docs/en/hooks):
//   - SessionStart and UserPromptSubmit: hookSpecificOutput.additionalContext
//     is added to the model's context; hook output injected into context is
//     capped at 10,000 characters (beyond that it is saved to a file and
//     only a preview is injected).
//   - SessionStart's matcher is tested against source: startup, resume,
//     clear, compact.
//   - Stop: {"decision":"block","reason":R} keeps Claude working with R as
//     its next instruction; the next Stop of that turn has
//     stop_hook_active true (and the host ends the turn after repeated
//     blocks on its own). R is also kept as a blocking error: from the
//     next turn on (2.1.332: at once) the model gets it a second time, as
//     a "Stop hook blocking error" system reminder, and the terminal shows
//     "Stop hook error". hookSpecificOutput.additionalContext (Stop is in
//     the output schema of 2.1.197 and 2.1.332) continues the turn the
//     same way, with the text once as "Stop hook additional context:"
//     and no error (issue 53; the e2e test checks both versions).
//   - The hooks' environment has CLAUDE_CODE_ENTRYPOINT: sdk-cli for -p
//     (any --output-format), sdk-ts/sdk-py for the Agent SDK, cli in the
//     terminal, claude-vscode in VS Code.
//   - PreCompact: plain stdout goes to the compaction summarizer (which
//     may not call tools); systemMessage is shown to the user only;
//     SessionEnd's output is ignored.
//
// Codex (0.171; github.com/openai/codex, codex-rs/hooks):
//   - src/events/session_start.rs parse_completed: additionalContext (or
//     plain stdout) becomes model context; the matcher is tested against
//     source (matcher_input), and src/events/common.rs
//     matcher_pattern_for_event keeps matchers for SessionStart only
//     among the events memsync uses; "startup|clear|compact" is an exact
//     alternation (is_exact_matcher).
//   - src/events/stop.rs parse_completed: decision "block" with a
//     non-empty reason makes the reason a continuation prompt
//     (HookPromptFragment) the model gets; systemMessage becomes a
//     user-facing warning; continue:false stops the turn. Nothing else a
//     Stop prints reaches the model.
//   - Hooks get no variable or field telling codex exec from the TUI; the
//     rollout at transcript_path begins with a session_meta whose
//     payload.source is "exec" for codex exec (written before SessionStart).
//   - src/events/compact.rs parse_pre_completed: PreCompact's output feeds
//     nothing to the model (only systemMessage warnings and continue).
//   - src/output_spill.rs: hook text over HOOK_OUTPUT_TOKEN_LIMIT (2,500
//     approximate tokens, bytes/4) is spilled to a file and the model gets
//     a head/tail preview: about 10,000 bytes.
//   - Hook trust: Codex runs a hook from hooks.json only once the user
//     trusted it (a hash of the hook per "PATH:event:group:handler" under
//     [hooks.state] in ~/.codex/config.toml, written when the user trusts
//     it in /hooks); untrusted hooks are skipped (codex exec: silently).
//     Hooks are on by default; [features] codex_hooks is a deprecated
//     alias.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memsync/memsync/cmd/internal/cmdline"
)

// Context budgets per host, in characters: under Claude Code's 10,000
// character cap, and for Codex under its 2,500-token preview (counted as
// bytes/4, so at most codexMaxContextBytes).
const (
	claudeContextRunes   = 9000
	codexContextRunes    = 6000
	codexMaxContextBytes = 9600
)

// ContextBudget is how many characters of context host takes whole.
func ContextBudget(host string) int {
	if host == "codex" {
		return codexContextRunes
	}
	return claudeContextRunes
}

// ContextLimits are host's limits on one context: characters, and
// bytes (Codex counts tokens as bytes/4).
func ContextLimits(host string) (maxRunes, maxBytes int) {
	if host == "codex" {
		return codexContextRunes, codexMaxContextBytes
	}
	return claudeContextRunes, 4 * claudeContextRunes
}

// fitContext cuts text to host's limits at a line boundary, leaving room
// for a tail of reserve that follows it.
func fitContext(host, text, reserve string) string {
	maxRunes, maxBytes := ContextLimits(host)
	maxRunes -= utf8.RuneCountInString(reserve)
	maxBytes -= len(reserve)
	if utf8.RuneCountInString(text) <= maxRunes && len(text) <= maxBytes {
		return text
	}
	var b contextBuilder
	b.limit = maxRunes
	n := 0
	for _, line := range splitLines(text) {
		if n+len(line)+1 > maxBytes || !b.line(line) {
			break
		}
		n += len(line) + 1
	}
	return b.String()
}

func splitLines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// ReminderMarker begins the journaling reminder, so that it can be told
// from the journaling hint at session start.
const ReminderMarker = "memsync reminder (once per session):"

// JournalReminder is the reminder the model gets once per session: the
// exact command for this agent and session.
func JournalReminder(agent, session string) string {
	s := ""
	if session != "" {
		s = " --session " + cmdline.ShellQuote(session)
	}
	return fmt.Sprintf("%s before you finish, journal what this session decided, learned or corrected that is worth keeping, "+
		"one memory per command: `memsync append --agent %s%s --kind decision|preference|procedure|fact|observation|task "+
		"[--scope shared] [--why WHY] \"TEXT\"` (or the MCP tool remember). If nothing is worth keeping, just finish; "+
		"you will not be asked again.", ReminderMarker, agent, s)
}

// CompactSummaryNote is Claude Code's PreCompact answer: plain text for
// the compaction summarizer.
const CompactSummaryNote = "memsync: keep in the summary every decision (with its reason), preference, procedure, correction " +
	"and outcome of this session that is not journaled yet, so that it can still be journaled after the compaction."

// answer answers one event of a session by the contract of issue 26:
//
//  1. SessionStart (startup, clear, compact, or resume of a session not
//     answered before): the session context, fitted to the host's
//     budget; nothing for the resume of a session already answered (its
//     transcript holds the context). On compact, and in an unattended
//     session (unattendedSession), the journaling reminder too if the
//     session was neither reminded nor journaled.
//  2. UserPromptSubmit: context only with memories over the relevance
//     threshold (promptRelevance) that the session was not given yet;
//     in an unattended session not reminded yet, the reminder too.
//  3. Stop, in an attended session only: the journaling reminder in the
//     host's shape (stopReminder), once per session, never when
//     stop_hook_active, never when the session already journaled
//     (sessionJournaled). Unattended, nothing: the turn's last message is
//     the answer its caller reads.
//  4. PreCompact: records the boundary; for Claude Code, plain text for
//     the summarizer; nothing for Codex.
//  5. SessionEnd: records the boundary, prints nothing.
//
// State is saved before an answer that depends on it is printed; when it
// cannot be saved, the reminder is left out (never risk repeating it).
func answer(ctx context.Context, d Deps, t Target, host, event string, in Input) (*output, string, error) {
	l, agent := t.Layout, t.Agent
	now := d.Now()
	var notes []string
	note := func(s string) {
		if s != "" {
			notes = append(notes, s)
		}
	}
	joined := func() string { return strings.Join(notes, "; ") }
	stateful := in.SessionID != ""
	st, known, err := State{}, false, error(nil)
	if stateful {
		// Held from load to the last save: the session's events change
		// its state one at a time.
		unlock, lerr := lockState(l, agent, in.SessionID)
		if lerr != nil {
			return nil, "", lerr
		}
		defer unlock()
		if st, known, err = LoadState(l, agent, in.SessionID); err != nil {
			return nil, "", err
		}
		if !known {
			st.Host = host
			start, answered := sessionStartedAt(l, agent, in.SessionID)
			st.Started, st.Answered = start, answered
			if st.Started.IsZero() {
				st.Started = now.UTC()
			}
		}
	}
	save := func() bool {
		if !stateful {
			return false
		}
		if err := saveState(l, agent, &st, now); err != nil {
			note(err.Error())
			return false
		}
		return true
	}

	// An unattended session (claude -p, the Agent SDK, codex exec) gets
	// the reminder with its context, never at Stop (unattendedSession).
	unattended := false
	if stateful && (event == "SessionStart" || event == "UserPromptSubmit" || event == "Stop") {
		why := ""
		unattended, why = unattendedSession(d.Getenv, host, in)
		note(why)
	}
	// remind is the reminder to add to the session's context, "" when
	// the session already journaled.
	remind := func() string {
		done, err := sessionJournaled(l, agent, in.SessionID, st.Started)
		if err != nil {
			note("cannot tell whether the session journaled: " + err.Error())
			return ""
		}
		if done {
			return ""
		}
		return "\n" + JournalReminder(agent, in.SessionID) + "\n"
	}

	switch event {
	case "SessionStart":
		if in.Source == "resume" && st.Answered {
			note(recordBoundary(l, agent, host, event, in, now))
			save()
			return nil, joined(), nil
		}
		reminder := ""
		if stateful && (in.Source == "compact" || unattended) && !st.Reminded {
			reminder = remind()
		}
		budget := ContextBudget(host) - utf8.RuneCountInString(reminder)
		text, shown, err := sessionContextWithin(ctx, t, in.SessionID, in.Cwd, d.Stderr, now, budget)
		if err != nil {
			return nil, joined(), err
		}
		text = fitContext(host, text, reminder)
		if in.Source == "compact" || in.Source == "clear" {
			st.Injected = nil // the context that held them is gone
		}
		st.Answered = true
		st.addInjected(slices.DeleteFunc(shown, func(u string) bool { return !strings.Contains(text, u) }))
		if reminder != "" {
			st.Reminded = true
		}
		if !save() {
			reminder = ""
		}
		note(recordBoundary(l, agent, host, event, in, now))
		if stateful {
			pruneStates(l, agent, in.SessionID, now)
		}
		return contextOutput(event, text+reminder), joined(), nil

	case "UserPromptSubmit":
		rel := newPromptRelevance(in.Prompt)
		offer := func(uuid, text string) bool {
			return !st.injected(uuid) && rel.relevant(text)
		}
		text, shown, err := promptContext(ctx, t, in.SessionID, in.Prompt, d.Stderr, now, offer)
		if err != nil {
			return nil, joined(), err
		}
		// Unattended and not reminded yet (a resumed session: its
		// SessionStart is not hooked): the reminder goes with the prompt.
		reminder := ""
		if stateful && unattended && !st.Reminded {
			reminder = remind()
		}
		if text == "" && reminder == "" {
			return nil, joined(), nil
		}
		st.addInjected(shown)
		if reminder != "" {
			st.Reminded = true
		}
		if !save() {
			reminder = ""
		}
		text = strings.TrimLeft(fitContext(host, text, reminder)+reminder, "\n")
		if text == "" {
			return nil, joined(), nil
		}
		return contextOutput(event, text), joined(), nil

	case "Stop":
		if !stateful || in.StopHookActive || st.Reminded || unattended {
			// Unattended, the turn's last message is the answer the caller
			// reads: continuing the turn would replace it (the reminder
			// went with the session's context instead).
			return nil, joined(), nil
		}
		done, err := sessionJournaled(l, agent, in.SessionID, st.Started)
		if err != nil {
			return nil, joined(), fmt.Errorf("cannot tell whether the session journaled: %w", err)
		}
		if done {
			return nil, joined(), nil
		}
		st.Reminded = true
		if !save() {
			return nil, joined(), nil
		}
		in.Reason = "reminded"
		note(recordBoundary(l, agent, host, event, in, now))
		return stopReminder(host, JournalReminder(agent, in.SessionID)), joined(), nil

	case "PreCompact":
		note(recordBoundary(l, agent, host, event, in, now))
		if host == "claude-code" {
			return &output{plain: CompactSummaryNote}, joined(), nil
		}
		return nil, joined(), nil

	default: // SessionEnd
		note(recordBoundary(l, agent, host, event, in, now))
		return nil, joined(), nil
	}
}

// stopReminder is the Stop answer that gives the model the reminder and
// continues the turn. Claude Code: hookSpecificOutput.additionalContext,
// which both 2.1.197 and 2.1.332 add to the conversation as the hook's
// context and continue the turn with, once, and without the "Stop hook
// error" a block-with-reason shows (a block's reason also comes back in
// the next turns as a "Stop hook blocking error" beside its "Stop hook
// feedback": twice in the model's context). Codex (0.171) has no such
// output: its block-with-reason is the only Stop answer that reaches the
// model, as one continuation prompt.
func stopReminder(host, reminder string) *output {
	if host == "claude-code" {
		return contextOutput("Stop", reminder)
	}
	return &output{Decision: "block", Reason: reminder}
}

// unattendedEntrypoints are the values of CLAUDE_CODE_ENTRYPOINT, which
// Claude Code sets in its hooks' environment, of the sessions whose
// caller reads the last message as the answer: claude -p (sdk-cli, also
// with --output-format json or stream-json) and the Agent SDK for
// TypeScript and Python. Interactive ones are cli, claude-vscode and
// others: there every message is shown.
var unattendedEntrypoints = []string{"sdk-cli", "sdk-ts", "sdk-py"}

// maxSessionMetaBytes bounds the first line of a Codex rollout read for
// its session_meta (it holds the base instructions: some 20 KB).
const maxSessionMetaBytes = 1 << 20

// unattendedSession tells whether the session runs without a person
// reading along, whose caller takes its last message as the answer:
// there a Stop that continues the turn replaces the answer with the reply
// to the reminder. Claude Code says so in the hooks' environment
// (CLAUDE_CODE_ENTRYPOINT, see unattendedEntrypoints); Codex gives its
// hooks neither a variable nor a field for it, but the rollout its
// transcript_path names begins with a session_meta line whose
// payload.source is "exec" for codex exec (originator codex_exec), "cli"
// or "vscode" for its interactive front ends. What cannot be told (no
// variable, no rollout yet) is attended, the host's usual case; why is a
// note for stderr when the rollout could not be read.
func unattendedSession(getenv func(string) string, host string, in Input) (unattended bool, why string) {
	if host == "claude-code" {
		return slices.Contains(unattendedEntrypoints, getenv("CLAUDE_CODE_ENTRYPOINT")), ""
	}
	if in.TranscriptPath == "" {
		return false, ""
	}
	source, err := codexSessionSource(in.TranscriptPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, ""
		}
		return false, "cannot tell whether the session is codex exec: " + err.Error()
	}
	return source == "exec", ""
}

// codexSessionSource is the source in the session_meta that begins a
// Codex rollout file ("" when the first line is not one).
func codexSessionSource(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxSessionMetaBytes), 64<<10).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	var meta struct {
		Type    string `json:"type"`
		Payload struct {
			Source json.RawMessage `json:"source"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &meta) != nil || meta.Type != "session_meta" {
		return "", nil
	}
	var source string
	json.Unmarshal(meta.Payload.Source, &source) // an object (a subagent's) is no front end
	return source, nil
}
