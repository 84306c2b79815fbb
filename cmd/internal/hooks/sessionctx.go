package hooks

import (
	"bytes"
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
	"unicode/utf8"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/packet"
)

// maxInjectRunes caps what the session context holds when no host asks
// for less (the MCP tool session_context); hooks fit it to their host's
// budget (ContextBudget).
const maxInjectRunes = 9500

// maxItemRunes cuts one memory's text in injected context.
const maxItemRunes = 400

// contextCaps bound the sections of a session's starting context.
const (
	maxFollowUps = 10
	maxRecent    = 10
)

// sessionPacketBudget is how long a hook's packet may take before the
// hook answers without it (the hook's whole budget is answerBudget).
const sessionPacketBudget = 450 * time.Millisecond

// packetMargin is what a hook keeps of its budget after a packet gives up,
// to answer without it.
const packetMargin = 100 * time.Millisecond

// packetContext bounds a hook's packet: sessionPacketBudget, and never so
// late that the hook's own deadline leaves no packetMargin to answer
// without it.
func packetContext(ctx context.Context) (context.Context, context.CancelFunc) {
	budget := sessionPacketBudget
	if d, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(d)-packetMargin)
	}
	return context.WithTimeout(ctx, budget)
}

// The parts of a session's goal (sessionGoal).
const (
	goalRecent    = 3   // the agent's newest records
	goalOpen      = 3   // its open follow-ups, and its decisions with no outcome yet
	goalPartRunes = 160 // each part's text
)

// sessionGoal is what a session's planner packet looks for: what the
// session is about, in words memories hold. That is the project it runs
// in (projectName of cwd), the agent's open follow-ups and decisions that
// no outcome judged yet, and its newest episodes (what it did and found:
// its preferences and procedures are offered on their own, and a goal of
// them would find only their like), each cut short. It never
// holds words of its own ("start of session ... in ..."): every memory
// about sessions would match those. The session's id scopes the packet
// (Request.Session) instead of being a goal word. With none of these (an
// agent with no records, no directory), the goal is the agent's name.
func sessionGoal(agent, cwd string, tasks, recent []memsync.Memory) string {
	var parts []string
	add := func(text string) {
		text = oneLineText(text)
		if text != "" && !slices.Contains(parts, text) {
			parts = append(parts, cutRunes(text, goalPartRunes))
		}
	}
	add(projectName(cwd))
	for _, m := range tasks[:min(len(tasks), goalOpen)] {
		add(m.Text)
	}
	for _, m := range openDecisions(recent, goalOpen) {
		add(m.Text)
	}
	n := 0
	for _, m := range recent {
		if n == goalRecent {
			break
		}
		if c, ok := packet.ClassOf(m.Kind); ok && c == packet.Episode {
			add(m.Text)
			n++
		}
	}
	if len(parts) == 0 {
		return agent
	}
	return strings.Join(parts, " · ")
}

// openDecisions are the decisions of recent (newest first) that no
// outcome among recent links to: at most n, newest first.
func openDecisions(recent []memsync.Memory, n int) []memsync.Memory {
	judged := map[string]bool{}
	for _, m := range recent {
		if m.Kind == journal.KindOutcome {
			for _, id := range m.Links {
				judged[id] = true
			}
		}
	}
	var out []memsync.Memory
	for _, m := range recent {
		if len(out) < n && m.Kind == journal.KindDecision && !judged[m.UUID] {
			out = append(out, m)
		}
	}
	return out
}

// projectName is the name of the project a session in cwd works on: the
// base name of the git work tree holding cwd (the nearest directory up
// from it with a .git entry), else of cwd itself; "" for no directory or
// the root. Only the file system is asked (no git process: a hook has
// 700 ms), and a cwd this host does not have is named as it is given.
func projectName(cwd string) string {
	if cwd == "" {
		return ""
	}
	dir := filepath.Clean(cwd)
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			dir = d
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	if name := filepath.Base(dir); name != "/" && name != "." && name != string(filepath.Separator) {
		return name
	}
	return ""
}

// oneLineText folds whitespace runs into single spaces.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes keeps s to n runes, ending a longer one with "…".
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// SessionContext is what agent starts session (in directory cwd) with, in
// at most maxInjectRunes characters: a planner packet for the session
// (SPEC §8, built as the packet command builds it: the graph, else the
// journals; it carries the first of the core tier), then the rest of the
// agent's core tier (`tier: core` records, never left out while they fit)
// and its open follow-ups (tasks nothing superseded), each without what
// the packet already holds. It holds nothing but CONSTELLATION and
// AGENT:<agent> memories. When no packet can be built in time
// (packetContext; the reason goes to stderr), the context is the core
// tier, the follow-ups and the most recent memories from agent's own
// journals, so a session never starts without its core.
//
// This is the one place that decides what a session starts with: the
// SessionStart hook and the MCP tool session_context both call it.
func SessionContext(ctx context.Context, t Target, session, cwd string, stderr io.Writer, now time.Time) (string, error) {
	text, _, err := sessionContextWithin(ctx, t, session, cwd, stderr, now, maxInjectRunes)
	return text, err
}

// sessionContextWithin is SessionContext in at most limit characters; it
// also returns the uuids of the memories the context shows (a hook
// remembers them, so that no prompt of the session repeats them).
func sessionContextWithin(ctx context.Context, t Target, session, cwd string, stderr io.Writer, now time.Time, limit int) (string, []string, error) {
	agent := t.Agent
	core, tasks, recent, retired, err := scanForContext(ctx, t.Layout, agent)
	if err != nil {
		return "", nil, fmt.Errorf("read %s's journals: %w", agent, err)
	}
	var inPacket map[string]bool
	live := func(ms []memsync.Memory, n int) []memsync.Memory {
		seen := map[string]bool{} // a line in both a day's journal and its archive (mid-compaction) counts once
		ms = slices.DeleteFunc(ms, func(m memsync.Memory) bool {
			dup := seen[m.UUID]
			seen[m.UUID] = true
			return retired.has(agent, m) || dup || inPacket[m.UUID]
		})
		slices.SortStableFunc(ms, func(a, b memsync.Memory) int { return b.TS.Compare(a.TS) })
		if n > 0 && len(ms) > n {
			ms = ms[:n]
		}
		return ms
	}

	goal := sessionGoal(agent, cwd, live(slices.Clone(tasks), maxFollowUps), live(slices.Clone(recent), 0))
	pctx, cancel := packetContext(ctx)
	p, perr := buildPacket(pctx, t, packet.Request{Role: packet.Planner, Agent: agent,
		Goal: goal, Session: session, AsOf: now.UTC()})
	cancel()

	var b contextBuilder
	b.limit = limit
	b.line(fmt.Sprintf("# memsync: the memory of agent %s", agent))
	b.line(rememberHint(agent, session))
	if perr != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		fmt.Fprintf(stderr, "memsync hook: no working-memory packet (%v); starting from the journals\n", oneLineErr(perr))
		core, tasks, recent = live(core, 0), live(tasks, maxFollowUps), live(recent, maxRecent)
		b.section("Core (always true for you)", core)
		b.section("Open follow-ups", tasks)
		b.section("Recent", recent)
		return b.String(), b.shown, nil
	}
	inPacket = packetUUIDs(p)
	if b.text("\n" + packet.Markdown(p)) {
		for u := range inPacket {
			b.shown = append(b.shown, u)
		}
		slices.Sort(b.shown)
	}
	core, tasks = live(core, 0), live(tasks, maxFollowUps)
	title := "More core (always true for you)"
	if len(p.Core) == 0 { // a graph not yet projected, say
		title = "Core (always true for you)"
	}
	b.section(title, core)
	b.section("Open follow-ups", tasks)
	return b.String(), b.shown, nil
}

// packetUUIDs are the memories a packet shows.
func packetUUIDs(p packet.Packet) map[string]bool {
	in := map[string]bool{}
	for _, items := range [][]packet.Item{p.Core, p.HardConstraints, p.ProceduresToFollow, p.PitfallsToAvoid, p.RelevantFacts, p.OpenQuestions} {
		for _, it := range items {
			if it.UUID != "" {
				in[it.UUID] = true
			}
		}
	}
	return in
}

// scanForContext reads what SessionContext needs from agent's journals
// without decoding every line, so that a session starts fast however long
// the journals: a cheap byte test picks the lines that may be core, a task
// or a supersession; every possible supersession is decoded (it retires
// others), the rest are decoded newest first only until each section has
// more than it can show. The decoded record decides; the byte test only
// skips lines that cannot qualify.
func scanForContext(ctx context.Context, layout memsync.Layout, agent string) (core, tasks, recent []memsync.Memory, retired retiredSet, err error) {
	files, err := layout.JournalFiles(agent)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var all [][]byte // every complete line, oldest first (files are in date order)
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, nil, err
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // compacted away meanwhile
		}
		if err != nil {
			return nil, nil, nil, nil, err
		}
		i := bytes.LastIndexByte(data, '\n')
		if i < 0 {
			continue // a last line without its newline is not written yet
		}
		all = append(all, bytes.Split(data[:i], []byte("\n"))...)
	}
	parse := func(line []byte) (memsync.Memory, bool) {
		rec, err := journal.Parse(line)
		if err != nil || journal.CheckOwner(&rec, agent) != nil {
			return memsync.Memory{}, false
		}
		return memsync.Memory{Record: rec}, true
	}
	retired = retiredSet{}
	for _, line := range all {
		if !bytes.Contains(line, []byte(`"supersedes"`)) {
			continue
		}
		// Only the supersession matters here: a light decode, not a full
		// validation (an invalid line may retire a memory here that the
		// graph keeps: rare, and it only leaves that memory out of the
		// starting context).
		var r struct {
			Agent      string        `json:"agent"`
			Scope      journal.Scope `json:"scope"`
			Supersedes []string      `json:"supersedes"`
		}
		if json.Unmarshal(line, &r) == nil && r.Agent == agent {
			src := journal.PrivateGroup(agent)
			if r.Scope == journal.ScopeShared {
				src = journal.SharedGroup
			}
			for _, u := range r.Supersedes {
				retired[u] = append(retired[u], src)
			}
		}
	}
	// Newest first; a section stops once it holds more live memories than
	// it can show (the core tier: more than fit in the budget).
	const enough = 3 * maxRecent
	coreEnough := maxInjectRunes / 40
	for i := len(all) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, nil, err
		}
		line := all[i]
		wantCore := len(core) < coreEnough && bytes.Contains(line, []byte(`"core"`))
		wantTask := len(tasks) < enough && bytes.Contains(line, []byte(`"task"`))
		wantRecent := len(recent) < enough
		if !wantCore && !wantTask && !wantRecent {
			if len(core) >= coreEnough && len(tasks) >= enough {
				break
			}
			continue
		}
		m, ok := parse(line)
		if !ok || retired.has(agent, m) {
			continue
		}
		switch {
		case m.Tier == "core":
			if len(core) < coreEnough {
				core = append(core, m)
			}
		case m.Kind == journal.KindTask:
			if len(tasks) < enough {
				tasks = append(tasks, m)
			}
		case wantRecent:
			recent = append(recent, m)
		}
	}
	return core, tasks, recent, retired, nil
}

// rememberHint says how the agent journals what is worth keeping.
func rememberHint(agent, session string) string {
	s := ""
	if session != "" {
		s = " --session " + cmdline.ShellQuote(session)
	}
	return fmt.Sprintf("Journal what is worth keeping (decisions with why, preferences, procedures, outcomes, corrections) with "+
		"`memsync append --agent %s%s --kind K [--scope shared] [--why W] \"TEXT\"` or the MCP tool remember.", agent, s)
}

// contextBuilder writes lines while they fit in limit runes; a section
// whose items do not all fit says how many were left out.
type contextBuilder struct {
	strings.Builder
	limit, used int
	shown       []string // uuids of the memories written by section
}

// line writes s and a newline if they fit in what is left of the limit.
func (b *contextBuilder) line(s string) bool {
	n := utf8.RuneCountInString(s) + 1
	if b.used+n > b.limit {
		return false
	}
	b.WriteString(s)
	b.WriteByte('\n')
	b.used += n
	return true
}

// text writes a block of lines whole if it fits.
func (b *contextBuilder) text(s string) bool { return b.line(strings.TrimRight(s, "\n")) }

func (b *contextBuilder) section(title string, ms []memsync.Memory) {
	if len(ms) == 0 {
		return
	}
	if !b.line("\n## " + title) {
		return
	}
	for i, m := range ms {
		if !b.line(memoryLine(m)) {
			b.line(fmt.Sprintf("- (%d more left out for space)", len(ms)-i))
			return
		}
		b.shown = append(b.shown, m.UUID)
	}
}

// memoryLine is one memory in injected context.
func memoryLine(m memsync.Memory) string {
	text := strings.Join(strings.Fields(m.Text), " ")
	if utf8.RuneCountInString(text) > maxItemRunes {
		r := []rune(text)
		text = string(r[:maxItemRunes]) + "…"
	}
	scope := ""
	if m.Scope == journal.ScopeShared {
		scope = " shared"
	}
	line := fmt.Sprintf("- [%s%s %s] %s (%s)", m.Kind, scope, m.TS.UTC().Format(time.DateOnly), text, m.UUID)
	if m.Why != "" {
		line += " — why: " + strings.Join(strings.Fields(m.Why), " ")
	}
	return line
}

// retiredSet is, per superseded uuid, the groups of the agent's records
// that supersede it; whether one retires a memory is journal.Retires's
// call (a private record retires only its own group's memories), as in
// the graph.
type retiredSet map[string][]string

// has reports whether a record of agent in the set retires m.
func (s retiredSet) has(agent string, m memsync.Memory) bool {
	for _, src := range s[m.UUID] {
		if journal.Retires(agent, src, m.Record.GroupID()) {
			return true
		}
	}
	return false
}
