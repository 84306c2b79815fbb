package cmdline

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	commands := CommandNames()
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"serach", commands, "search"}, // two letters swapped
		{"seach", commands, "search"},  // one left out
		{"statsu", commands, "status"}, // swapped at the end
		{"agnet", []string{"agent", "all", "as-of"}, "agent"},
		{"critc", []string{"critic", "planner"}, "critic"},
		{"plannr", []string{"critic", "planner"}, "planner"},
		{"Search", commands, "search"}, // case is not a slip worth refusing twice
		{"frob", commands, ""},         // nothing close
		{"x", []string{"y"}, ""},       // one letter of one is not close
		{"ab", []string{"a"}, ""},      // half the name is not a slip
		{"lst", commands, "list"},      // short names: one edit
		{"lsit", commands, "list"},
		{"rn", commands, ""}, // run is one edit, but rn is only two letters
		{"zzzzzz", commands, ""},
		{"search", commands, "search"}, // itself
		{"", commands, ""},
		{"crit", []string{"critic", "planner"}, "critic"}, // the start of exactly one
		{"consol", commands, "consolidate"},
		{"co", commands, ""},                                     // too short to say
		{"agent", []string{"agent-0001", "agent-0002"}, ""},      // the start of two: no guess
		{"plan", []string{"critic", "planner", "planner-2"}, ""}, // the start of two
	} {
		if got := Suggest(tc.name, tc.candidates); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"serach", "search", 1}, {"agnet", "agent", 1}, {"critc", "critic", 1}, {"abc", "cba", 2},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestUnknownCommandSuggests: a mistyped command is one line on stderr
// naming the command it most likely meant, exit 2, not the whole usage;
// a name close to none says where the list is. Both binaries dispatch here.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serach", "x"}, `memsync: unknown command "serach"; did you mean search?` + "\n"},
		{[]string{"apend"}, `memsync: unknown command "apend"; did you mean append?` + "\n"},
		{[]string{"help", "stauts"}, `memsync: unknown command "stauts"; did you mean status?` + "\n"},
		{[]string{"frob"}, `memsync: unknown command "frob" (memsync help lists the commands)` + "\n"},
	} {
		var out, errOut bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
		code := Main(context.Background(), env, tc.args, func(string) (RunFunc, bool) {
			return func(context.Context, *Env, []string) int { t.Fatal("ran a command"); return 0 }, true
		})
		if code != ExitUsage || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("%q: exit %d stdout %q stderr %q; want 2 and %q", tc.args, code, out.String(), errOut.String(), tc.want)
		}
	}
}

// TestUnknownFlagSuggests: a mistyped flag names the flag it most likely
// meant; one close to none keeps the flag package's message. One line,
// exit 2, either way.
func TestUnknownFlagSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agnet", "alice"}, "memsync search: unknown flag --agnet; did you mean --agent? (see memsync search --help)\n"},
		{[]string{"-agnet=alice"}, "memsync search: unknown flag --agnet; did you mean --agent? (see memsync search --help)\n"},
		{[]string{"--limt", "3"}, "memsync search: unknown flag --limt; did you mean --limit? (see memsync search --help)\n"},
		{[]string{"--colour"}, "memsync search: unknown flag --colour (see memsync search --help)\n"},
	} {
		var errOut bytes.Buffer
		env := &Env{Stdout: &bytes.Buffer{}, Stderr: &errOut, Getenv: func(string) string { return "" }}
		fs := NewFlags(env, "search", "search QUERY", "d")
		fs.String("agent", "", "")
		fs.Int("limit", 1, "")
		fs.Bool("all", false, "")
		_, code, done := fs.ParseArgs(tc.args)
		if !done || code != ExitUsage || errOut.String() != tc.want {
			t.Errorf("%q: done %v exit %d stderr %q; want %q", tc.args, done, code, errOut.String(), tc.want)
		}
	}
}

func TestUnknownAgent(t *testing.T) {
	for _, tc := range []struct {
		agent string
		known []string
		want  string
	}{
		{"critc", []string{"critic", "planner"}, `unknown agent "critc" in /r; did you mean critic? (agents: critic, planner)`},
		{"zed", []string{"critic", "planner"}, `unknown agent "zed" in /r (agents: critic, planner): create it with "memsync init --repo /r --agent zed"`},
		{"zed", nil, `unknown agent "zed" in /r (agents: none yet): create it with "memsync init --repo /r --agent zed"`},
	} {
		if got := UnknownAgent("/r", tc.agent, tc.known); got != tc.want {
			t.Errorf("UnknownAgent(%q, %q) =\n %s\nwant\n %s", tc.agent, tc.known, got, tc.want)
		}
		if strings.Contains(UnknownAgent("/r", tc.agent, tc.known), "\n") {
			t.Errorf("not one line")
		}
	}
}
