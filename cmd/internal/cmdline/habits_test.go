package cmdline

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestFlagErrorsSpeakMemsync: a bad flag is refused in memsync's words,
// never the flag package's (-limit, "flag provided but not defined").
func TestFlagErrorsSpeakMemsync(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--limit", "abc"}, `memsync test: --limit: invalid value "abc": want a whole number (see memsync test --help)`},
		{[]string{"--wait", "soon"}, `memsync test: --wait: invalid value "soon": want a duration (90s, 5m, 1h)`},
		{[]string{"--json=maybe"}, `memsync test: --json: invalid value "maybe": want true or false`},
		{[]string{"--agent"}, `memsync test: --agent needs a value`},
		{[]string{"--agnet", "x"}, `memsync test: unknown flag --agnet; did you mean --agent?`},
		{[]string{"--commit-interval", "1s"}, `memsync test: unknown flag --commit-interval (see`},
	} {
		var stderr bytes.Buffer
		fs := NewFlags(&Env{Stderr: &stderr}, "test", "test", "a test")
		fs.Int("limit", 10, "")
		fs.Duration("wait", time.Second, "")
		fs.Bool("json", false, "")
		fs.String("agent", "", "")
		_, code, done := fs.ParseArgs(tc.args)
		if !done || code != ExitUsage {
			t.Errorf("%q: done %v code %d, want bad usage", tc.args, done, code)
		}
		got := stderr.String()
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: stderr %q, want it to start %q", tc.args, got, tc.want)
		}
		for _, leak := range []string{"flag provided", " -limit", " -agent", "parse error", "for flag"} {
			if strings.Contains(got, leak) {
				t.Errorf("%q: stderr %q leaks the flag package's %q", tc.args, got, leak)
			}
		}
	}
}

// TestHoist: global flags before the command's name move after it, as
// git and kubectl take them; nothing else moves.
func TestHoist(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--repo", "/r", "status"}, []string{"status", "--repo", "/r"}},
		{[]string{"--repo=/r", "search", "x", "--agent", "a"}, []string{"search", "--repo=/r", "x", "--agent", "a"}},
		{[]string{"-repo", "/r", "status", "--json"}, []string{"status", "--repo", "/r", "--json"}},
		{[]string{"status", "--repo", "/r"}, []string{"status", "--repo", "/r"}},
		{[]string{"--repo", "/r"}, []string{"--repo", "/r"}},
		{[]string{"--repo"}, []string{"--repo"}},
		{[]string{"--agent", "a", "status"}, []string{"--agent", "a", "status"}},
		{[]string{"--json", "--graph", "embedded", "status"}, []string{"status", "--json", "--graph", "embedded"}},
		{[]string{"--json=true", "agents"}, []string{"agents", "--json=true"}},
		{[]string{"--help"}, []string{"--help"}},
		{nil, nil},
	} {
		if got := Hoist(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Hoist(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMainTakesHabits: `memsync version` and `memsync --repo DIR CMD`
// run as a git or kubectl user types them.
func TestMainTakesHabits(t *testing.T) {
	var gotArgs []string
	runner := func(name string) (RunFunc, bool) {
		return func(_ context.Context, _ *Env, args []string) int {
			gotArgs = append([]string{name}, args...)
			return 0
		}, true
	}
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out}
	if code := Main(context.Background(), env, []string{"version"}, runner); code != ExitOK || !strings.HasPrefix(out.String(), "memsync ") {
		t.Errorf("version: exit %d, %q", code, out.String())
	}
	if code := Main(context.Background(), env, []string{"--repo", "/r", "status"}, runner); code != ExitOK {
		t.Fatalf("--repo /r status: exit %d: %s", code, out.String())
	}
	if want := []string{"status", "--repo", "/r"}; !reflect.DeepEqual(gotArgs, want) {
		t.Errorf("--repo /r status ran %q, want %q", gotArgs, want)
	}
}
