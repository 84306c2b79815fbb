package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/packet"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

// Deps is what the server takes from the program that runs it: its
// streams and clock, the agent it is bound to, the read path to the
// agent's memories, and the commands it runs in-process. Every field must
// be set.
type Deps struct {
	// Stdin and Stdout carry the client's messages (MCP stdio framing);
	// Stderr gets the server's notes (a malformed message refused, a read
	// answered offline).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Now is the clock: an age or a default as_of is read at it.
	Now func() time.Time
	// Layout is the repository the server serves.
	Layout memsync.Layout
	// Agent is the agent every tool is bound to: it reads the shared
	// memories and Agent's own, and writes only Agent's journal.
	Agent string
	// Backend names the configured graph backend, as status reports it.
	Backend string
	// Open opens the one read path of every door (the graph, else the
	// journals; see read.Reader), writing its notes on Stderr. The caller
	// closes the Reader.
	Open func(ctx context.Context) *read.Reader
	// OpenGraph opens the configured graph for status: when it cannot be
	// opened, a stand-in whose every call fails with why. The caller
	// closes it.
	OpenGraph func(ctx context.Context) memsync.Graph
	// SessionContext is what a session of Agent starts with, scoped to
	// session when it is set (hooks.SessionContext, as the SessionStart
	// hook injects it).
	SessionContext func(ctx context.Context, session string) (string, error)
	// Append, Explain and Flag are `memsync append`, `memsync explain` and
	// `memsync flag`, run in-process in the repository with the graph
	// flags the server was given.
	Append, Explain, Flag Command
}

// Command runs one memsync command in-process: args are its arguments
// (after the repository and graph flags the program adds), stdin its
// input; it writes its --json answer on stdout, its refusal on stderr,
// and returns the command's exit code.
type Command func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// server is what every tool of one server is bound to.
type server struct {
	d     Deps
	rules map[string]toolRules // each tool's input rules, checked on every call
}

// tools registers each tool; adding a tool is one function and one line
// here.
func tools() []func(*mcp.Server, *server) {
	return []func(*mcp.Server, *server){
		addSearchTool,
		addRememberTool,
		addContextTool,
		addPacketTool,
		addExplainTool,
		addFlagTool,
		addStatusTool,
		addOutcomeTool,
		addSupportTool,
	}
}

// Run serves d.Agent's memory to one MCP client over d.Stdin and d.Stdout
// until the input ends or ctx is done, which are not errors; a malformed
// message is answered with a JSON-RPC error and a failed call is a tool
// error, and neither ends the session. The error is the transport's.
func Run(ctx context.Context, d Deps) error {
	b := &server{d: d, rules: map[string]toolRules{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "memsync", Version: "1"}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("memsync is the long-term memory of agent %s. Search it before deciding; remember "+
			"decisions (with why), preferences, procedures, outcomes and corrections as they happen; record how a decision "+
			"turned out (record_outcome).", d.Agent),
	})
	for _, add := range tools() {
		add(s, b)
	}
	s.AddReceivingMiddleware(b.checkCalls)
	// The filter answers a malformed frame itself (the SDK would end the
	// session on it) and bounds each frame, so the SDK's own bound is off.
	out := &messageWriter{w: d.Stdout}
	t := &mcp.IOTransport{Reader: newFrameFilter(d.Stdin, out, d.Stderr, maxFrame), Writer: out, MaxLineLength: -1}
	if err := s.Run(ctx, t); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// groups are the only groups a bound server reads.
func (b *server) groups() []string {
	return journal.ReaderGroups(b.d.Agent)
}

func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)}
}

// searchIn is the search tool's input.
type searchIn struct {
	Query string   `json:"query" jsonschema:"plain words to look for (never query syntax)"`
	Limit int      `json:"limit,omitempty" jsonschema:"at most this many results (default 10)"`
	Kinds []string `json:"kinds,omitempty" jsonschema:"only memories of these kinds"`
	Since string   `json:"since,omitempty" jsonschema:"only memories at or after this: RFC 3339 time, a date (2026-11-20) or an age (36h, 7d)"`
	All   bool     `json:"all,omitempty" jsonschema:"include retired memories: superseded ones and ones flagged wrong (archived ones are always found, ranked lower)"`
}

func addSearchTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "search", Title: "Search memory", Annotations: readOnly(),
		Description: "Ranked recall within the memories this agent may see: shared ones and its own private ones. " +
			"One line per memory: score, kind, status when not active, uuid, text. " +
			"Answers from the journals when the graph is down (offline: true)."},
		toolRules{"query": textRule(mcpMaxQuery), "limit": {min: 1, max: mcpMaxLimit}, "kinds": enumListRule(allKinds...)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, mcpSearchOut, error) {
			q := memsync.SearchQuery{Text: in.Query, Limit: in.Limit, All: in.All, Groups: b.groups()}
			if strings.TrimSpace(q.Text) == "" {
				return nil, mcpSearchOut{}, errors.New("query: required")
			}
			if q.Limit == 0 {
				q.Limit = offline.DefaultLimit
			}
			if q.Limit < 1 || q.Limit > mcpMaxLimit {
				return nil, mcpSearchOut{}, fmt.Errorf("limit: must be 1 to %d, not %d", mcpMaxLimit, in.Limit)
			}
			for _, k := range in.Kinds {
				if !journal.Kind(k).Valid() {
					return nil, mcpSearchOut{}, fmt.Errorf("kinds: unknown kind %q (one of %s)", k, cmdline.KindList())
				}
				q.Kinds = append(q.Kinds, journal.Kind(k))
			}
			if in.Since != "" {
				t, err := memsync.ParseSince(in.Since, b.d.Now())
				if err != nil {
					return nil, mcpSearchOut{}, fmt.Errorf("since: %w", err)
				}
				q.Since = t
			}
			hits, isOffline, reason, err := b.recall(ctx, q)
			if err != nil {
				return nil, mcpSearchOut{}, err
			}
			res := mcpSearchOut{Offline: isOffline, Reason: reason, Results: []mcpHit{}}
			for _, h := range hits {
				if !journal.Sees(b.d.Agent, h.Record.GroupID()) {
					continue // never, whatever a backend answers
				}
				res.Results = append(res.Results, newMCPHit(h))
			}
			return textResult(searchText(res)), res, nil
		})
}

// rememberIn is the remember tool's input: append's flags, less the agent.
type rememberIn struct {
	Text          string   `json:"text" jsonschema:"the memory itself"`
	Kind          string   `json:"kind" jsonschema:"what the memory is (to record how a decision turned out, use record_outcome)"`
	Scope         string   `json:"scope,omitempty" jsonschema:"private (default: only this agent sees it) or shared (every agent does)"`
	Why           string   `json:"why,omitempty" jsonschema:"why this matters (decisions)"`
	Entities      []string `json:"entities,omitempty" jsonschema:"entities the memory is about, e.g. @Shaun, #moonshot"`
	Tags          []string `json:"tags,omitempty" jsonschema:"free topic tags"`
	Links         []string `json:"links,omitempty" jsonschema:"uuids of memories this one builds on"`
	Supersedes    []string `json:"supersedes,omitempty" jsonschema:"uuids of memories this one replaces"`
	ConflictsWith []string `json:"conflicts_with,omitempty" jsonschema:"uuids of memories this one contradicts"`
	SourceType    string   `json:"source_type,omitempty" jsonschema:"how the agent knows it"`
	SourceActor   string   `json:"source_actor,omitempty" jsonschema:"who it came from"`
	SourceContext string   `json:"source_context,omitempty" jsonschema:"where it came from"`
	Confidence    string   `json:"confidence,omitempty" jsonschema:"declared confidence"`
	MaxAge        string   `json:"max_age,omitempty" jsonschema:"how long it stays relevant"`
	Tier          string   `json:"tier,omitempty" jsonschema:"core (never decays), working, or learning (passes the surprise gate: a memory too like recent ones is skipped)"`
	Session       string   `json:"session,omitempty" jsonschema:"session id, for session-scoped recall"`
	Task          string   `json:"task,omitempty" jsonschema:"task id, for task-scoped recall"`
	RefGit        string   `json:"ref_git,omitempty" jsonschema:"evidence: a git commit sha"`
	RefPath       string   `json:"ref_path,omitempty" jsonschema:"evidence: a file path"`
}

// mcpSearchOut is the search tool's structured content: search --json
// less what only ranking and the journal files need (lexical, freshness,
// factors, path, line, group). Some hosts hand the model this rather than
// the text (Claude Code sends it JSON.stringify(structuredContent)), so it
// holds what a reader acts on; memsync explain UUID tells the rest.
type mcpSearchOut struct {
	Offline bool     `json:"offline" jsonschema:"true when the graph is down and the journals answered"`
	Reason  string   `json:"offline_reason,omitempty" jsonschema:"why the graph did not answer"`
	Results []mcpHit `json:"results" jsonschema:"best first"`
}

// mcpHit is one search result.
type mcpHit struct {
	UUID       string  `json:"uuid"`
	Agent      string  `json:"agent" jsonschema:"the agent that wrote it"`
	Kind       string  `json:"kind"`
	TS         string  `json:"ts" jsonschema:"when it was written, RFC 3339"`
	Text       string  `json:"text"`
	Score      float64 `json:"score" jsonschema:"relevance refined by importance, freshness and confidence"`
	Status     string  `json:"status" jsonschema:"active, review, archived or superseded"`
	ReplacedBy string  `json:"replaced_by,omitempty" jsonschema:"the memory that superseded it"`
}

// newMCPHit is h as the search tool answers it: the fields and rounding
// of search --json (six decimals), its score then to three and its time
// to the second.
func newMCPHit(h memsync.Ranked) mcpHit {
	out := mcpHit{UUID: h.UUID, Agent: h.Agent, Kind: string(h.Kind), TS: h.TS.UTC().Format(time.RFC3339), Text: h.Text,
		Score: math.Round(roundScore(h.Score)*1000) / 1000, Status: string(h.Result.Status)}
	if h.Result.Status == score.Superseded {
		out.ReplacedBy = h.ReplacedBy
	}
	return out
}

// roundScore keeps six significant decimals, as search --json does.
func roundScore(s float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(s, 'f', 6, 64), 64)
	return v
}

// rememberOut is what remember wrote, or why the surprise gate kept it
// out (append --json's document).
type rememberOut struct {
	UUID     string   `json:"uuid,omitempty" jsonschema:"the new memory's uuid (none when skipped)"`
	Path     string   `json:"path,omitempty" jsonschema:"the journal file it was appended to (none when skipped)"`
	Skipped  bool     `json:"skipped,omitempty" jsonschema:"true when the surprise gate kept a learning-tier memory out: nothing was written"`
	Reason   string   `json:"reason,omitempty" jsonschema:"why the surprise gate skipped it"`
	Surprise *float64 `json:"surprise,omitempty" jsonschema:"the surprise gate's score, 0 to 1 (learning tier only)"`
}

// rememberRules are the enums and bounds of remember's fields (and of
// record_outcome's and support's, which share them).
var rememberRules = toolRules{
	"text": textRule(mcpMaxText), "kind": agentKindRule, "scope": enumRule(scopes...),
	"source_type": enumRule(journal.SourceTypes...), "confidence": enumRule(journal.Confidences...),
	"max_age": enumRule(journal.MaxAges...), "tier": enumRule(journal.Tiers...), "why": textRule(mcpMaxText),
}

func addRememberTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "remember", Title: "Remember",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool), OpenWorldHint: new(bool)},
		Description: "Append one memory to this agent's journal (as memsync append does) and return its uuid. " +
			"A learning-tier memory too like recent ones is skipped by the surprise gate: the result says so, " +
			"with the reason and score, and nothing is written."},
		rememberRules,
		func(ctx context.Context, _ *mcp.CallToolRequest, in rememberIn) (*mcp.CallToolResult, rememberOut, error) {
			if journal.Kind(in.Kind).Memsync() { // the schema says so too; the rule holds whatever the client checks
				return nil, rememberOut{}, fmt.Errorf("kind: %s", agentKindRule.refuse(in.Kind))
			}
			return b.remember(ctx, rememberArgs(b, in), in.Text)
		})
}

// remember runs append with args (text is its stdin, for a text of "-")
// and says what it did: the uuid written, or why the gate skipped it.
func (b *server) remember(ctx context.Context, args []string, text string) (*mcp.CallToolResult, rememberOut, error) {
	var res rememberOut
	if err := b.run(ctx, b.d.Append, args, text, &res); err != nil {
		return nil, rememberOut{}, err
	}
	return textResult(rememberText(res)), res, nil
}

// rememberArgs is the append command line for in, always as b's agent
// into b's repository. Every value goes as --flag=value and the text after
// "--", so no value can be read as another flag.
func rememberArgs(b *server, in rememberIn) []string {
	args := []string{"--agent=" + b.d.Agent, "--json"}
	str := func(flag, v string) {
		if v != "" {
			args = append(args, "--"+flag+"="+v)
		}
	}
	list := func(flag string, vs []string) {
		for _, v := range vs {
			args = append(args, "--"+flag+"="+v)
		}
	}
	str("kind", in.Kind)
	str("scope", in.Scope)
	str("why", in.Why)
	list("entity", in.Entities)
	list("tag", in.Tags)
	list("link", in.Links)
	list("supersedes", in.Supersedes)
	list("conflicts-with", in.ConflictsWith)
	str("source-type", in.SourceType)
	str("source-actor", in.SourceActor)
	str("source-context", in.SourceContext)
	str("confidence", in.Confidence)
	str("max-age", in.MaxAge)
	str("tier", in.Tier)
	str("session", in.Session)
	str("task", in.Task)
	str("ref-git", in.RefGit)
	str("ref-path", in.RefPath)
	return append(args, "--", in.Text)
}

// contextIn is the session_context tool's input.
type contextIn struct {
	Session string `json:"session,omitempty" jsonschema:"the session id: scopes the packet and goes in the remember hint"`
}

func addContextTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "session_context", Title: "Session context", Annotations: readOnly(),
		Description: "What a session of this agent starts with: a planner packet for the session, the rest of its core tier " +
			"and its open follow-ups " +
			"(what the SessionStart hook injects), for hosts without hooks. The text is markdown."},
		nil,
		// Markdown only, no structured content: a host that hands the
		// model structured content when there is some would wrap it in
		// JSON, and there is nothing in it for a program to pick out.
		func(ctx context.Context, _ *mcp.CallToolRequest, in contextIn) (*mcp.CallToolResult, any, error) {
			text, err := b.d.SessionContext(ctx, in.Session)
			if err != nil {
				return nil, nil, err
			}
			if strings.TrimSpace(text) == "" {
				text = "No memories for this session yet."
			}
			return textResult(text), nil, nil
		})
}

// packetIn is the packet tool's input: the packet command's flags, less
// the agent.
type packetIn struct {
	Role        string   `json:"role" jsonschema:"the step's role"`
	Goal        string   `json:"goal" jsonschema:"what the step is for, in words"`
	Task        string   `json:"task,omitempty" jsonschema:"the task id: its memories are task-scoped candidates"`
	Session     string   `json:"session,omitempty" jsonschema:"the session id: its memories are session-scoped candidates"`
	Constraints []string `json:"constraints,omitempty" jsonschema:"constraints of the step"`
	Failures    []string `json:"failures,omitempty" jsonschema:"recent failures"`
	Questions   []string `json:"questions,omitempty" jsonschema:"open questions"`
	AsOf        string   `json:"as_of,omitempty" jsonschema:"build the packet as the memory stood at this RFC 3339 time (default now)"`
}

func addPacketTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "packet", Title: "Working-memory packet", Annotations: readOnly(),
		Description: "The few hard constraints, procedures, pitfalls, facts and open questions that matter for this step of " +
			"this agent in this role (planner, executor, critic or responder), the core tier always in, each with its uuid " +
			"and why it was chosen (as memsync packet builds it). Structured content is the packet; the text is its markdown. " +
			"Built from the journals when the graph is down (offline: true)."},
		toolRules{"role": enumRule(roles...), "goal": textRule(mcpMaxGoal)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in packetIn) (*mcp.CallToolResult, packet.Packet, error) {
			role, err := packet.ParseRole(in.Role)
			if err != nil {
				return nil, packet.Packet{}, fmt.Errorf("role: %w", err)
			}
			if strings.TrimSpace(in.Goal) == "" {
				return nil, packet.Packet{}, errors.New("goal: required, and not blank")
			}
			asOf, err := cmdline.ParseAsOf(in.AsOf, b.d.Now())
			if err != nil {
				return nil, packet.Packet{}, fmt.Errorf("as_of: %w", err)
			}
			req := packet.Request{Role: role, Agent: b.d.Agent, Goal: in.Goal, Task: in.Task, Session: in.Session,
				Constraints: in.Constraints, Failures: in.Failures, Questions: in.Questions, AsOf: asOf, Cutoff: in.AsOf != ""}
			p, err := b.packet(ctx, req)
			if err != nil {
				return nil, packet.Packet{}, err
			}
			return textResult(packet.Markdown(p)), p, nil
		})
}

type statusIn struct{}

type statusOut struct {
	Graph memsync.GraphStatus `json:"graph"`
	Agent memsync.AgentStatus `json:"agent"`
}

func addStatusTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "status", Title: "Sync status", Annotations: readOnly(),
		Description: "Whether the graph is reachable, and this agent's journal records, projected memories, outbox, rejects and lag."},
		nil,
		func(ctx context.Context, _ *mcp.CallToolRequest, _ statusIn) (*mcp.CallToolResult, statusOut, error) {
			g := b.d.OpenGraph(ctx)
			defer g.Close()
			rep, err := memsync.Status(ctx, b.d.Layout.Root, g, b.d.Backend, b.d.Now())
			if err != nil {
				return nil, statusOut{}, err
			}
			out := statusOut{Graph: rep.Graph}
			for _, a := range rep.Agents {
				if a.Agent == b.d.Agent { // other agents' lines are theirs
					out.Agent = a
				}
			}
			out.Agent.Agent = b.d.Agent
			return textResult(statusText(out)), out, nil
		})
}

// run runs cmd in-process as b's agent and decodes its --json answer
// into out. args must already hold --agent (always b's) and --json;
// values go as --flag=value and positional arguments after "--". A
// command that fails is an error with what it said on stderr.
func (b *server) run(ctx context.Context, cmd Command, args []string, stdin string, out any) error {
	var stdout, stderr bytes.Buffer
	if code := cmd(ctx, args, strings.NewReader(stdin), &stdout, &stderr); code != cmdline.ExitOK {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "memsync ") {
			msg = msg[i+2:] // "memsync append: " names a command the client never called
		}
		return errors.New(mcpFieldWords(msg))
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("unexpected answer %q: %w", stdout.String(), err)
	}
	return nil
}

// cliFlag is a command-line flag or argument named in a command's error.
var cliFlag = regexp.MustCompile(`--[a-z][a-z-]*|\bTEXT\b`)

// mcpFieldOf names a command's flags by the tools' input fields where the
// two differ beyond dashes and underscores.
var mcpFieldOf = map[string]string{"TEXT": "text", "--entity": "entities", "--tag": "tags", "--link": "links"}

// mcpFieldWords says a command's error in the words of the tool's
// schema: the fields a client sent (text, max_age), not the command's
// flags (TEXT, --max-age), and without the command's --help pointer.
func mcpFieldWords(msg string) string {
	if i := strings.Index(msg, " (see memsync "); i >= 0 && strings.HasSuffix(msg, "--help)") {
		msg = msg[:i]
	}
	rename := func(f string) string {
		if name, ok := mcpFieldOf[f]; ok {
			return name
		}
		return strings.ReplaceAll(strings.TrimPrefix(f, "--"), "-", "_")
	}
	// A quoted value is the caller's own text: it is left as it came.
	var b strings.Builder
	last := 0
	for _, q := range quotedValue.FindAllStringIndex(msg, -1) {
		b.WriteString(cliFlag.ReplaceAllStringFunc(msg[last:q[0]], rename))
		b.WriteString(msg[q[0]:q[1]])
		last = q[1]
	}
	b.WriteString(cliFlag.ReplaceAllStringFunc(msg[last:], rename))
	return b.String()
}

// quotedValue is a Go-quoted string in an error (%q).
var quotedValue = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// explainIn is the explain tool's input.
type explainIn struct {
	UUID string `json:"uuid" jsonschema:"the memory to explain"`
	AsOf string `json:"as_of,omitempty" jsonschema:"answer as the memory stood at this RFC 3339 time (default now)"`
}

func addExplainTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "explain", Title: "Explain a memory", Annotations: readOnly(),
		Description: "Why a memory this agent may see ranks where it does: importance, confidence, status, " +
			"max_age, and every event that moved them. A memory it may not see is reported like an unknown uuid."},
		toolRules{"uuid": textRule(200)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in explainIn) (*mcp.CallToolResult, cmdline.ExplainResult, error) {
			args := []string{"--agent=" + b.d.Agent, "--json"}
			if in.AsOf != "" {
				args = append(args, "--as-of="+in.AsOf)
			}
			var res cmdline.ExplainResult
			if err := b.run(ctx, b.d.Explain, append(args, "--", in.UUID), "", &res); err != nil {
				return nil, cmdline.ExplainResult{}, err
			}
			return textResult(explainText(res)), res, nil
		})
}

// flagIn is the flag tool's input.
type flagIn struct {
	UUID     string `json:"uuid" jsonschema:"the memory to flag; this agent must be able to see it"`
	Feedback string `json:"feedback" jsonschema:"the person's judgement of the memory"`
	By       string `json:"by,omitempty" jsonschema:"the person whose feedback this is (default the user running memsync)"`
	Note     string `json:"note,omitempty" jsonschema:"why, kept in the feedback record"`
}

func addFlagTool(s *mcp.Server, b *server) {
	addTool(s, b, &mcp.Tool{Name: "flag", Title: "Flag a memory",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool), OpenWorldHint: new(bool)},
		Description: "Journal a person's feedback on a memory this agent may see (important, wrong, verified, " +
			"unimportant), as a feedback record in this agent's journal."},
		toolRules{"uuid": textRule(200), "feedback": enumRule(journal.Feedbacks...)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in flagIn) (*mcp.CallToolResult, cmdline.FlagResult, error) {
			if !slices.Contains(journal.Feedbacks, in.Feedback) {
				return nil, cmdline.FlagResult{}, fmt.Errorf("feedback: %q is not one of %s", in.Feedback, strings.Join(journal.Feedbacks, ", "))
			}
			args := []string{"--agent=" + b.d.Agent, "--json", "--" + in.Feedback}
			if in.By != "" {
				args = append(args, "--by="+in.By)
			}
			if in.Note != "" {
				args = append(args, "--note="+in.Note)
			}
			var res cmdline.FlagResult
			if err := b.run(ctx, b.d.Flag, append(args, "--", in.UUID), "", &res); err != nil {
				return nil, cmdline.FlagResult{}, err
			}
			return textResult(fmt.Sprintf("Flagged %s %s (feedback record %s in %s).", res.Target, res.Feedback, res.UUID, res.Path)), res, nil
		})
}
