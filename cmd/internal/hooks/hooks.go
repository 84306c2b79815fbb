package hooks

import (
	"cmp"
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
	"github.com/memsync/memsync/memsync/read"
)

// Hosts are the hosts memsync hooks into, as the hook command names them.
func Hosts() []string { return []string{"claude-code", "codex"} }

// Events are the events a hook answers, in the order hook install writes
// them.
func Events() []string {
	return []string{"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"}
}

// Deps is what a hook takes from the program that runs it: its streams,
// its clock and environment, and the memory it answers from. Every field
// must be set.
type Deps struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Now is the clock: session state, boundaries and packets are stamped
	// and read at it.
	Now func() time.Time
	// Getenv reads the host's environment for its hooks
	// (CLAUDE_CODE_ENTRYPOINT).
	Getenv func(string) string
	// Resolve finds the repository and the agent the hook answers for. It
	// is called once the host's JSON is read and checked, within the
	// hook's budget; its error is the hook's (said on Stderr, fail-open).
	Resolve func() (Target, error)
}

// Target is the memory a hook answers from: the repository, the agent the
// session is, and the read path to its memories.
type Target struct {
	Layout memsync.Layout
	Agent  string
	// Open opens the one read path of every door (the graph, else the
	// journals; see read.Reader), writing its notes on the hook's stderr.
	// The caller closes the Reader.
	Open func(ctx context.Context) *read.Reader
}

// answerBudget is how long a hook may take before it gives up (fail-open):
// hosts wait for their hooks, and the issue asks for an answer within 1 s.
const answerBudget = 700 * time.Millisecond

// maxInput bounds what is read of stdin.
const maxInput = 4 << 20

// Input is the JSON a host writes on a hook's stdin; each event sets
// its own fields. Unknown fields are ignored, and so is a null where a
// string is expected (Codex's transcript_path, Claude Code's
// custom_instructions): the shapes the real hosts send differ by event and
// version (no permission_mode on PreCompact, Claude Code's prompt_id,
// Codex's turn_id and model, Stop's last_assistant_message, SessionEnd's
// reason "other").
type Input struct {
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

// output is what a hook prints on stdout. Context for the model goes
// under hookSpecificOutput.additionalContext (SessionStart,
// UserPromptSubmit: both hosts hand it to the model; a bare
// additionalContext is dropped); the journaling reminder is Stop's
// additionalContext for Claude Code and its block-with-reason for Codex
// (both continue the turn with it; see stopReminder). plain, when
// set, is printed as it is instead of JSON (Claude Code's PreCompact: its
// stdout goes to the compaction summarizer). memsync never prints
// systemMessage: both hosts show it to the user only.
type output struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput,omitempty"`
	plain              string
}

type specificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// Run answers one hook: args are the positional arguments of
// `memsync hook` (HOST EVENT), the host's JSON is read from d.Stdin and the
// answer, once whole, is written on d.Stdout in the host's envelope. It is
// fail-open: whatever goes wrong (bad arguments, bad input, no repository,
// no graph, the budget spent) it prints nothing on d.Stdout, says why on
// d.Stderr and returns; it never blocks the host.
func Run(ctx context.Context, d Deps, args []string) {
	fail := func(format string, a ...any) {
		fmt.Fprintf(d.Stderr, "memsync hook: %s (fail-open: the session goes on without memsync)\n", fmt.Sprintf(format, a...))
	}
	hosts, events := Hosts(), Events()
	if len(args) != 2 {
		fail("want HOST EVENT (%s; %s), got %q", strings.Join(hosts, "|"), strings.Join(events, "|"), args)
		return
	}
	host, event := args[0], args[1]
	if !slices.Contains(hosts, host) {
		fail("unknown host %q (want %s)", host, strings.Join(hosts, " or "))
		return
	}
	if !slices.Contains(events, event) {
		fail("event %q is not one memsync answers (%s)", event, strings.Join(events, ", "))
		return
	}

	// Everything that may block (stdin, the disk, the graph) runs against
	// the budget; the answer is written only once it is whole.
	hctx, cancel := context.WithTimeout(ctx, answerBudget)
	defer cancel()
	type result struct {
		out  *output
		note string
		err  error
	}
	answered := make(chan result, 1)
	go func() {
		out, note, err := respond(hctx, d, host, event)
		answered <- result{out, note, err}
	}()
	var a result
	select {
	case a = <-answered:
	case <-hctx.Done():
		fail("gave up after %v", answerBudget)
		return
	}
	if a.err != nil {
		fail("%s %s: %v", host, event, a.err)
		return
	}
	if a.note != "" {
		fmt.Fprintf(d.Stderr, "memsync hook: %s\n", a.note)
	}
	if a.out == nil {
		return
	}
	if a.out.plain != "" {
		fmt.Fprintf(d.Stdout, "%s\n", strings.TrimRight(a.out.plain, "\n"))
		return
	}
	data, err := json.Marshal(a.out)
	if err != nil {
		fail("encode answer: %v", err)
		return
	}
	fmt.Fprintf(d.Stdout, "%s\n", data)
}

// respond answers one event; a nil output prints nothing.
func respond(ctx context.Context, d Deps, host, event string) (*output, string, error) {
	in, err := ReadInput(ctx, d.Stdin)
	if err != nil {
		return nil, "", err
	}
	if in.HookEventName != "" && in.HookEventName != event {
		return nil, "", fmt.Errorf("stdin is a %q event, not %s", in.HookEventName, event)
	}
	t, err := d.Resolve()
	if err != nil {
		return nil, "", err
	}
	if st, err := os.Stat(t.Layout.MemoryDir(t.Agent)); err != nil || !st.IsDir() {
		return nil, "", fmt.Errorf("%s is not a memory repository with agent %s (see memsync init)", t.Layout.Root, t.Agent)
	}
	return answer(ctx, d, t, host, event, in)
}

// ReadInput reads and decodes the host's JSON from r, giving up when ctx
// is done; an empty (or nil) r is an empty input (hosts always send one,
// a person testing may not).
func ReadInput(ctx context.Context, r io.Reader) (Input, error) {
	var in Input
	if r == nil {
		return in, nil
	}
	type read struct {
		data []byte
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
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
	if len(got.data) > maxInput {
		return in, fmt.Errorf("stdin is over %d bytes", maxInput)
	}
	if strings.TrimSpace(string(got.data)) == "" {
		return in, nil
	}
	if err := json.Unmarshal(got.data, &in); err != nil {
		return in, fmt.Errorf("stdin is not the host's hook JSON: %w", err)
	}
	return in, nil
}

func contextOutput(event, text string) *output {
	return &output{HookSpecificOutput: &specificOutput{HookEventName: event, AdditionalContext: text}}
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
func promptContext(ctx context.Context, t Target, session, prompt string, stderr io.Writer, now time.Time,
	offer func(uuid, text string) bool) (string, []string, error) {
	agent := t.Agent
	if strings.TrimSpace(prompt) == "" {
		return "", nil, nil
	}
	goal := prompt
	if r := []rune(goal); len(r) > maxPromptGoalRunes {
		goal = string(r[:maxPromptGoalRunes])
	}
	pctx, cancel := packetContext(ctx)
	p, err := buildPacket(pctx, t, packet.Request{Role: packet.Executor, Agent: agent,
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
		Groups: journal.ReaderGroups(agent)}
	hits, err := recall(ctx, t, q, now)
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

// SessionEvent is one line of an agent's sync/sessions.jsonl: where a
// session of the agent began, was compacted or ended, so that recall can
// be scoped to a session. Host-local, like the rest of sync/.
type SessionEvent struct {
	Time    time.Time `json:"time"`
	Host    string    `json:"host"`
	Event   string    `json:"event"`
	Session string    `json:"session,omitempty"`
	Cwd     string    `json:"cwd,omitempty"`
	Detail  string    `json:"detail,omitempty"` // source, trigger or reason
}

// SessionsFile is agent's sync/sessions.jsonl, where the hooks record
// each session's boundaries, one SessionEvent a line.
func SessionsFile(l memsync.Layout, agent string) string {
	return filepath.Join(l.SyncDir(agent), "sessions.jsonl")
}

// recordBoundary appends the event to agent's sessions file, in one write;
// a failure is returned as a note for stderr, never an error: the context
// is worth more than the record.
func recordBoundary(l memsync.Layout, agent, host, event string, in Input, now time.Time) string {
	if in.SessionID == "" {
		return ""
	}
	ev := SessionEvent{Time: now.UTC(), Host: host, Event: event, Session: in.SessionID, Cwd: in.Cwd,
		Detail: cmp.Or(in.Source, in.Trigger, in.Reason)}
	line, _ := json.Marshal(ev)
	path := SessionsFile(l, agent)
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
