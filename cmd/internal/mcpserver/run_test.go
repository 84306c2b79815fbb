package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// call is one in-process command the server ran.
type call struct {
	args  []string
	stdin string
}

// fakeCommand records each call and answers with code, stdout and stderr.
func fakeCommand(calls *[]call, code int, stdout, stderr string) Command {
	return func(_ context.Context, args []string, stdin io.Reader, out, errw io.Writer) int {
		in, _ := io.ReadAll(stdin)
		*calls = append(*calls, call{args: args, stdin: string(in)})
		io.WriteString(out, stdout)
		io.WriteString(errw, stderr)
		return code
	}
}

// testDeps is a server bound to planner whose reads, graph and session
// context fail the test when used; each test sets what it needs.
func testDeps(t *testing.T) Deps {
	t.Helper()
	unused := func(what string) { t.Helper(); t.Errorf("%s used", what) }
	return Deps{
		Stderr: io.Discard,
		Now:    func() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) },
		Layout: memsync.Layout{Root: t.TempDir()}, Agent: "planner", Backend: "embedded",
		Open:           func(context.Context) *read.Reader { unused("Open"); return nil },
		OpenGraph:      func(context.Context) memsync.Graph { unused("OpenGraph"); return nil },
		SessionContext: func(context.Context, string) (string, error) { unused("SessionContext"); return "", nil },
		Append:         func(context.Context, []string, io.Reader, io.Writer, io.Writer) int { unused("Append"); return 1 },
		Explain:        func(context.Context, []string, io.Reader, io.Writer, io.Writer) int { unused("Explain"); return 1 },
		Flag:           func(context.Context, []string, io.Reader, io.Writer, io.Writer) int { unused("Flag"); return 1 },
	}
}

// serve runs the server on d in-process and connects the SDK's client to
// it; the server must end without an error when the client closes.
func serve(t *testing.T, d Deps) *mcp.ClientSession {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	d.Stdin, d.Stdout = serverIn, serverOut
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, d)
		serverOut.Close()
	}()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		clientOut.Close()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		cancel()
	})
	return s
}

// text is a result's text and whether it is a tool error.
func text(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

// TestRememberRunsAppend: remember runs Deps.Append as the bound agent,
// every value as --flag=value and the text after "--" (and on stdin),
// and says what append's --json answer says.
func TestRememberRunsAppend(t *testing.T) {
	var calls []call
	d := testDeps(t)
	d.Append = fakeCommand(&calls, 0, `{"uuid":"u-1","path":"agents/planner/memory/journal/x.jsonl"}`, "")
	s := serve(t, d)
	got, isErr := text(t, s, "remember", map[string]any{"text": "--agent=critic", "kind": "fact", "tags": []string{"a", "--b"}})
	if isErr || got != "Remembered as u-1 (agents/planner/memory/journal/x.jsonl)." {
		t.Fatalf("remember: %q (error %t)", got, isErr)
	}
	want := []string{"--agent=planner", "--json", "--kind=fact", "--tag=a", "--tag=--b", "--", "--agent=critic"}
	if len(calls) != 1 || !slices.Equal(calls[0].args, want) || calls[0].stdin != "--agent=critic" {
		t.Fatalf("append ran as %+v, want %q", calls, want)
	}
}

// TestCommandRefusalInFieldWords: a command that fails is a tool error in
// the words of the tool's schema, without the command's name or --help
// pointer; a call a rule refuses never reaches the command.
func TestCommandRefusalInFieldWords(t *testing.T) {
	var calls []call
	d := testDeps(t)
	d.Append = fakeCommand(&calls, 2, "", "memsync append: --source-actor: too long (see memsync append --help)\n")
	s := serve(t, d)
	if got, isErr := text(t, s, "remember", map[string]any{"text": "x", "kind": "fact", "source_actor": "y"}); !isErr || got != "source_actor: too long" {
		t.Fatalf("remember: %q (error %t)", got, isErr)
	}
	if got, isErr := text(t, s, "remember", map[string]any{"text": "x", "kind": "fact", "max_age": "forever"}); !isErr ||
		!strings.HasPrefix(got, `max_age: "forever" is not one of`) {
		t.Fatalf("remember: %q (error %t)", got, isErr)
	}
	if len(calls) != 1 {
		t.Fatalf("append ran %d times, want 1 (the refused call must not run it)", len(calls))
	}
}

// TestExplainAndFlagRunTheirCommands: explain and flag run Deps.Explain
// and Deps.Flag as the bound agent, the uuid after "--".
func TestExplainAndFlagRunTheirCommands(t *testing.T) {
	var explained, flagged []call
	d := testDeps(t)
	d.Explain = fakeCommand(&explained, 0, `{"uuid":"u-1","agent":"planner","kind":"fact","text":"x","importance":0.5,"confidence":0.7,"status":"active"}`, "")
	d.Flag = fakeCommand(&flagged, 0, `{"uuid":"f-1","target":"u-1","feedback":"wrong","path":"p"}`, "")
	s := serve(t, d)
	if got, isErr := text(t, s, "explain", map[string]any{"uuid": "u-1", "as_of": "2026-11-20T09:00:00Z"}); isErr ||
		!strings.HasPrefix(got, "u-1 (fact by planner): importance 0.50, confidence 0.70, status active") {
		t.Fatalf("explain: %q (error %t)", got, isErr)
	}
	if got, isErr := text(t, s, "flag", map[string]any{"uuid": "u-1", "feedback": "wrong", "by": "mira"}); isErr ||
		got != "Flagged u-1 wrong (feedback record f-1 in p)." {
		t.Fatalf("flag: %q (error %t)", got, isErr)
	}
	for _, tc := range []struct {
		calls []call
		want  []string
	}{
		{explained, []string{"--agent=planner", "--json", "--as-of=2026-11-20T09:00:00Z", "--", "u-1"}},
		{flagged, []string{"--agent=planner", "--json", "--wrong", "--by=mira", "--", "u-1"}},
	} {
		if len(tc.calls) != 1 || !slices.Equal(tc.calls[0].args, tc.want) {
			t.Errorf("ran as %+v, want %q", tc.calls, tc.want)
		}
	}
}

// TestSessionContextFromDeps: session_context answers with what
// Deps.SessionContext says for the session, or a line when it says
// nothing, as text only.
func TestSessionContextFromDeps(t *testing.T) {
	var sessions []string
	d := testDeps(t)
	d.SessionContext = func(_ context.Context, session string) (string, error) {
		sessions = append(sessions, session)
		if session == "" {
			return " \n", nil
		}
		return "# context of " + session, nil
	}
	s := serve(t, d)
	for session, want := range map[string]string{"s-1": "# context of s-1", "": "No memories for this session yet."} {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "session_context", Arguments: map[string]any{"session": session}})
		if err != nil || res.IsError || res.StructuredContent != nil || len(res.Content) != 1 {
			t.Fatalf("session_context %q: %v %+v", session, err, res)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != want {
			t.Errorf("session_context %q: %q, want %q", session, got, want)
		}
	}
	if !slices.Contains(sessions, "s-1") || !slices.Contains(sessions, "") {
		t.Errorf("asked for %q", sessions)
	}
}

// TestToolsBoundToAgent: the server's instructions name its agent, and no
// tool's input schema has a field that names another.
func TestToolsBoundToAgent(t *testing.T) {
	s := serve(t, testDeps(t))
	if in := s.InitializeResult().Instructions; !strings.Contains(in, "agent planner") {
		t.Errorf("instructions: %q", in)
	}
	res, err := s.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != len(tools()) {
		t.Fatalf("tools/list: %v, %d tools (want %d)", err, len(res.Tools), len(tools()))
	}
	for _, tool := range res.Tools {
		schema, _ := json.Marshal(tool.InputSchema)
		for _, field := range []string{`"agent"`, `"repo"`, `"group_id"`, `"groups"`} {
			if strings.Contains(string(schema), field+":") {
				t.Errorf("%s takes %s: %s", tool.Name, field, schema)
			}
		}
	}
}
