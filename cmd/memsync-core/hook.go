package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/packet"
)

const hookDescription = `Run as a session hook of Claude Code or Codex: read the host's hook
JSON on stdin and answer in the host's own envelope, through the channels
each host delivers to the model. SessionStart injects a planner packet for
the session (see memsync packet), the rest of the agent's core tier and its
open follow-ups, fitted to the host's budget (Claude Code 9,000 characters,
Codex 6,000), once per session: a resume of a session it already answered
gets nothing, a compaction gets it again. UserPromptSubmit (opt-in) injects
the memories that bear on the prompt (its significant terms) and that the
session was not given yet, else nothing. Stop asks the model, once per
session, to journal what is worth keeping (Claude Code: Stop's
additionalContext; Codex: block-with-reason), unless the session already
journaled; in claude -p, the Agent SDK and codex exec that reminder comes
with the session's context instead, so that the answer stays the last
message. PreCompact and SessionEnd record the
session's boundary in the agent's sync/sessions.jsonl. Per-session state
lives in the agent's sync/hooks/. The agent is --agent, else
$MEMSYNC_AGENT, else hooks.agent in memsync.yaml. Fail-open: whatever goes
wrong (no repository, no graph, bad input, unknown event), it exits 0
within a second, prints nothing on stdout and says why on stderr; it never
exits 2, which would block the host. "memsync hook install" adds these
hooks to the host's settings.`

// hookHosts are the hosts memsync hooks into.
var hookHosts = []string{"claude-code", "codex"}

// hookEvents are the events a hook answers.
var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"}

// hookBudget is how long a hook may take before it gives up (fail-open):
// hosts wait for their hooks, and the issue asks for an answer within 1 s.
const hookBudget = 700 * time.Millisecond

// maxHookInput bounds what is read of stdin.
const maxHookInput = 4 << 20

// hookInput is the JSON a host writes on a hook's stdin; each event sets
// its own fields. Unknown fields are ignored, and so is a null where a
// string is expected (Codex's transcript_path, Claude Code's
// custom_instructions): the shapes the real hosts send differ by event and
// version (no permission_mode on PreCompact, Claude Code's prompt_id,
// Codex's turn_id and model, Stop's last_assistant_message, SessionEnd's
// reason "other").
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`
	Source         string `json:"source"`           // SessionStart: startup, resume, clear, compact
	Prompt         string `json:"prompt"`           // UserPromptSubmit
	PromptID       string `json:"prompt_id"`        // UserPromptSubmit (Claude Code)
	Trigger        string `json:"trigger"`          // PreCompact: manual, auto
	Reason         string `json:"reason"`           // SessionEnd: clear, logout, prompt_input_exit, other, ...
	StopHookActive bool   `json:"stop_hook_active"` // Stop: the host already continued the turn for a Stop hook
	LastMessage    string `json:"last_assistant_message"`
	Model          string `json:"model"`   // Codex, Claude Code's SessionStart
	TurnID         string `json:"turn_id"` // Codex
}

// hookOutput is what a hook prints on stdout. Context for the model goes
// under hookSpecificOutput.additionalContext (SessionStart,
// UserPromptSubmit: both hosts hand it to the model; a bare
// additionalContext is dropped); the journaling reminder is Stop's
// additionalContext for Claude Code and its block-with-reason for Codex
// (both continue the turn with it; see stopReminder). plain, when
// set, is printed as it is instead of JSON (Claude Code's PreCompact: its
// stdout goes to the compaction summarizer). memsync never prints
// systemMessage: both hosts show it to the user only.
type hookOutput struct {
	Decision           string        `json:"decision,omitempty"`
	Reason             string        `json:"reason,omitempty"`
	HookSpecificOutput *hookSpecific `json:"hookSpecificOutput,omitempty"`
	plain              string
}

type hookSpecific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

func runHook(ctx context.Context, env *Env, args []string) int {
	if len(args) > 0 && args[0] == "install" {
		return runHookInstall(ctx, env, args[1:])
	}
	fs := newFlags(env, "hook", "hook claude-code|codex EVENT [--agent A] [--repo DIR] (JSON on stdin)", hookDescription)
	repoFlag := addRepoFlag(fs)
	agentFlag := fs.String("agent", "", "the agent `A` the session is (default $MEMSYNC_AGENT, else hooks.agent in memsync.yaml)")
	var cfg Config
	addGraphFlags(fs.FlagSet, &cfg)
	pos, _, done := fs.parse(args)
	if done {
		return exitOK // --help, or a bad flag already explained on stderr: never block the host
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "memsync hook: %s (fail-open: the session goes on without memsync)\n", fmt.Sprintf(format, a...))
		return exitOK
	}
	if len(pos) != 2 {
		return fail("want HOST EVENT (%s; %s), got %q", strings.Join(hookHosts, "|"), strings.Join(hookEvents, "|"), pos)
	}
	host, event := pos[0], pos[1]
	if !contains(hookHosts, host) {
		return fail("unknown host %q (want %s)", host, strings.Join(hookHosts, " or "))
	}
	if !contains(hookEvents, event) {
		return fail("event %q is not one memsync answers (%s)", event, strings.Join(hookEvents, ", "))
	}

	// Everything that may block (stdin, the disk, the graph) runs against
	// the budget; the answer is written only once it is whole.
	hctx, cancel := context.WithTimeout(ctx, hookBudget)
	defer cancel()
	type answer struct {
		out  *hookOutput
		note string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		out, note, err := hook(hctx, env, host, event, *repoFlag, *agentFlag, fs, &cfg)
		answered <- answer{out, note, err}
	}()
	var a answer
	select {
	case a = <-answered:
	case <-hctx.Done():
		return fail("gave up after %v", hookBudget)
	}
	if a.err != nil {
		return fail("%s %s: %v", host, event, a.err)
	}
	if a.note != "" {
		fmt.Fprintf(env.Stderr, "memsync hook: %s\n", a.note)
	}
	if a.out == nil {
		return exitOK
	}
	if a.out.plain != "" {
		fmt.Fprintf(env.Stdout, "%s\n", strings.TrimRight(a.out.plain, "\n"))
		return exitOK
	}
	data, err := json.Marshal(a.out)
	if err != nil {
		return fail("encode answer: %v", err)
	}
	fmt.Fprintf(env.Stdout, "%s\n", data)
	return exitOK
}

// hook answers one event; a nil output prints nothing.
func hook(ctx context.Context, env *Env, host, event, repoFlag, agentFlag string, fs *cmdFlags, cfg *Config) (*hookOutput, string, error) {
	in, err := readHookInput(ctx, env.Stdin)
	if err != nil {
		return nil, "", err
	}
	if in.HookEventName != "" && in.HookEventName != event {
		return nil, "", fmt.Errorf("stdin is a %q event, not %s", in.HookEventName, event)
	}
	repo, err := existingRepo(env, repoFlag)
	if err != nil {
		return nil, "", err
	}
	if err := loadConfig(env, repo, fs.FlagSet, cfg); err != nil {
		return nil, "", err
	}
	agent := hookAgent(env, agentFlag, cfg)
	if agent == "" {
		return nil, "", errors.New("no agent: pass --agent, set MEMSYNC_AGENT, or hooks.agent in memsync.yaml")
	}
	if !validAgent(agent) {
		return nil, "", errors.New(agentNameError(agent))
	}
	l := layout(repo)
	if st, err := os.Stat(l.MemoryDir(agent)); err != nil || !st.IsDir() {
		return nil, "", fmt.Errorf("%s is not a memory repository with agent %s (see memsync init)", repo, agent)
	}
	return answerHook(ctx, env, cfg, repo, agent, host, event, in)
}

// readHookInput reads and decodes the host's JSON; an empty stdin is an
// empty input (hosts always send one, a person testing may not).
func readHookInput(ctx context.Context, r io.Reader) (hookInput, error) {
	var in hookInput
	if r == nil {
		return in, nil
	}
	type read struct {
		data []byte
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
		ch <- read{data, err}
	}()
	var got read
	select {
	case got = <-ch:
	case <-ctx.Done():
		return in, errors.New("stdin did not close in time")
	}
	if got.err != nil {
		return in, fmt.Errorf("read stdin: %w", got.err)
	}
	if len(got.data) > maxHookInput {
		return in, fmt.Errorf("stdin is over %d bytes", maxHookInput)
	}
	if strings.TrimSpace(string(got.data)) == "" {
		return in, nil
	}
	if err := json.Unmarshal(got.data, &in); err != nil {
		return in, fmt.Errorf("stdin is not the host's hook JSON: %w", err)
	}
	return in, nil
}

// hookAgent is the agent a hook speaks for: --agent, $MEMSYNC_AGENT, then
// hooks.agent.
func hookAgent(env *Env, flagValue string, cfg *Config) string {
	for _, a := range []string{flagValue, env.Getenv("MEMSYNC_AGENT"), cfg.Hooks.Agent} {
		if a != "" {
			return a
		}
	}
	return ""
}

func contextOutput(event, text string) *hookOutput {
	return &hookOutput{HookSpecificOutput: &hookSpecific{HookEventName: event, AdditionalContext: text}}
}

// maxPromptHits is how many memories a prompt's compact context holds
// when it falls back to ranked search.
const maxPromptHits = 5

// maxPromptContextRunes bounds a prompt's context from ranked search (a
// packet keeps itself under packet.MarkdownBudget bytes, 4,000): under
// either host's budget, since it comes on every prompt.
const maxPromptContextRunes = 2400

// maxPromptGoalRunes is how much of a prompt becomes its packet's goal.
const maxPromptGoalRunes = 2000

// promptContext is the compact context for one prompt: an executor packet
// (SPEC §8) with the prompt as its goal, in session: the step after a
// prompt is doing what it asks, and the executor reads decisions, facts
// and reflections as well as preferences and procedures. Its core tier is
// left out (SessionStart injected it), and so is every item offer rejects
// (the relevance threshold, what the session was already given), so a
// prompt that bears on no memory gets "" and the host's context nothing.
// When no packet can be built in time (packetContext), the few memories
// ranked search finds (graph, else the journals) stand in, through the
// same offer. It returns the uuids of the memories it shows.
func promptContext(ctx context.Context, cfg *Config, repo, agent, session, prompt string, stderr io.Writer, now time.Time,
	offer func(uuid, text string) bool) (string, []string, error) {
	if strings.TrimSpace(prompt) == "" {
		return "", nil, nil
	}
	goal := prompt
	if r := []rune(goal); len(r) > maxPromptGoalRunes {
		goal = string(r[:maxPromptGoalRunes])
	}
	pctx, cancel := packetContext(ctx)
	p, err := readPacket(pctx, cfg, repo, "hook", stderr, packet.Request{Role: packet.Executor, Agent: agent,
		Goal: goal, Session: session, AsOf: now.UTC()})
	cancel()
	if err == nil {
		p.Core = nil
		// Keep makes "Selected:" again from what is left, so it never
		// names a memory the prompt is not shown.
		p = p.Keep(func(it packet.Item) bool { return it.UUID != "" && offer(it.UUID, it.Text+"\n"+it.Why) })
		shown := packetUUIDs(p)
		if len(shown) == 0 {
			return "", nil, nil
		}
		uuids := make([]string, 0, len(shown))
		for u := range shown {
			uuids = append(uuids, u)
		}
		slices.Sort(uuids)
		return packet.Markdown(p), uuids, nil
	}
	if ctx.Err() != nil {
		return "", nil, ctx.Err()
	}
	fmt.Fprintf(stderr, "memsync hook: no working-memory packet (%v); ranked search instead\n", oneLineErr(err))
	q := memsync.SearchQuery{Text: prompt, Limit: 2 * maxPromptHits,
		Groups: []string{journal.SharedGroup, journal.PrivateGroup(agent)}}
	hits, _, _, err := recall(ctx, cfg, repo, "hook", stderr, q, now)
	if err != nil {
		return "", nil, err
	}
	// What is offered unasked leaves archived memories out (SPEC §7).
	hits = slices.DeleteFunc(hits, func(h memsync.Ranked) bool {
		return h.Result.Status.Hidden() || !offer(h.Memory.UUID, h.Memory.Text+"\n"+h.Memory.Why)
	})
	if len(hits) == 0 {
		return "", nil, nil
	}
	b := contextBuilder{limit: maxPromptContextRunes}
	b.line("memsync: memories that may bear on this prompt")
	var uuids []string
	for i, h := range hits {
		if i == maxPromptHits || !b.line(memoryLine(h.Memory)) {
			break
		}
		uuids = append(uuids, h.Memory.UUID)
	}
	return b.String(), uuids, nil
}

// sessionEvent is one line of an agent's sync/sessions.jsonl: where a
// session of the agent began, was compacted or ended, so that recall can
// be scoped to a session. Host-local, like the rest of sync/.
type sessionEvent struct {
	Time    time.Time `json:"time"`
	Host    string    `json:"host"`
	Event   string    `json:"event"`
	Session string    `json:"session,omitempty"`
	Cwd     string    `json:"cwd,omitempty"`
	Detail  string    `json:"detail,omitempty"` // source, trigger or reason
}

// sessionsFile is where recordBoundary writes.
func sessionsFile(l memsync.Layout, agent string) string {
	return filepath.Join(l.SyncDir(agent), "sessions.jsonl")
}

// recordBoundary appends the event to agent's sessions file, in one write;
// a failure is returned as a note for stderr, never an error: the context
// is worth more than the record.
func recordBoundary(l memsync.Layout, agent, host, event string, in hookInput, now time.Time) string {
	if in.SessionID == "" {
		return ""
	}
	ev := sessionEvent{Time: now.UTC(), Host: host, Event: event, Session: in.SessionID, Cwd: in.Cwd,
		Detail: cmpOr(in.Source, in.Trigger, in.Reason)}
	line, _ := json.Marshal(ev)
	path := sessionsFile(l, agent)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "cannot record the session boundary: " + err.Error()
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return "cannot record the session boundary: " + err.Error()
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return "cannot record the session boundary: " + err.Error()
	}
	return ""
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
