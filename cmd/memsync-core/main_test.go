package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/cmd/internal/cmdline"
)

// result is what an in-process run of memsync produced.
type result struct {
	code           int
	stdout, stderr string
}

// invocation is one in-process run: environment, stdin, clock and args.
type invocation struct {
	env   map[string]string
	stdin string
	now   time.Time
	cwd   string
	// embedder resolves --embedder (env.Embedder); nil: the binary's own.
	embedder func(spec string) (cmdline.Embedder, error)
}

func (iv invocation) run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	now := iv.now
	if now.IsZero() {
		now = time.Date(2026, 11, 21, 9, 15, 0, 0, time.UTC)
	}
	cwd := iv.cwd
	if cwd == "" {
		cwd = t.TempDir() // never the package directory
	}
	env := &Env{
		Stdin:  strings.NewReader(iv.stdin),
		Stdout: &out,
		Stderr: &errOut,
		Getenv: func(k string) string { return iv.env[k] },
		Now:    func() time.Time { return now },
		Getwd:  func() (string, error) { return cwd, nil },
	}
	env.Embedder = iv.embedder
	code := Main(context.Background(), env, args)
	return result{code, out.String(), errOut.String()}
}

// cli runs args in-process with an empty environment.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	return invocation{}.run(t, args...)
}

func TestMainUsage(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		toStdout bool
		want     string
	}{
		{nil, exitUsage, false, "Commands:"},
		{[]string{"help"}, exitOK, true, "Commands:"},
		{[]string{"--help"}, exitOK, true, "Commands:"},
		{[]string{"-h"}, exitOK, true, "Commands:"},
		{[]string{"help", "append"}, exitOK, true, "usage: memsync append"},
		{[]string{"help", "frob"}, exitUsage, false, `memsync: unknown command "frob"`},
		{[]string{"frob"}, exitUsage, false, `memsync: unknown command "frob"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := cli(t, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d", r.code, tc.code)
			}
			out, other := r.stderr, r.stdout
			if tc.toStdout {
				out, other = r.stdout, r.stderr
			}
			if !strings.Contains(out, tc.want) || other != "" {
				t.Errorf("stdout %q\nstderr %q\nwant %q on %s only", r.stdout, r.stderr, tc.want, map[bool]string{true: "stdout", false: "stderr"}[tc.toStdout])
			}
		})
	}
	r := cli(t, "help")
	for _, c := range cmdline.Commands() {
		if !strings.Contains(r.stdout, "  "+c.Name+" ") {
			t.Errorf("help does not list %s", c.Name)
		}
	}
}

// TestEveryCommandRuns: this binary (memsync-core) runs every command the
// front binary may hand it.
func TestEveryCommandRuns(t *testing.T) {
	for _, c := range cmdline.Commands() {
		if _, ok := runner(c.Name); !ok {
			t.Errorf("no runner for %s", c.Name)
		}
	}
}

// TestCommandConventions holds every registered command to the same rules:
// --help prints a synopsis, a description and --flags on stdout and exits
// 0; a bad flag is one line on stderr, prefixed and naming the flag, exit 2.
func TestCommandConventions(t *testing.T) {
	for _, c := range cmdline.Commands() {
		t.Run(c.Name, func(t *testing.T) {
			for _, h := range []string{"--help", "-h", "-help"} {
				r := cli(t, c.Name, h)
				if r.code != exitOK || r.stderr != "" {
					t.Fatalf("%s %s: exit %d stderr %q", c.Name, h, r.code, r.stderr)
				}
				if !strings.HasPrefix(r.stdout, "usage: memsync "+c.Name) || !strings.Contains(r.stdout, "\n  --repo DIR\n") {
					t.Fatalf("%s %s:\n%s", c.Name, h, r.stdout)
				}
				if paras := strings.Split(r.stdout, "\n\n"); len(paras) < 3 || len(paras[1]) < 40 {
					t.Fatalf("%s %s: no description paragraph:\n%s", c.Name, h, r.stdout)
				}
			}
			badUsage := exitUsage
			if c.Name == "hook" {
				badUsage = exitOK // a hook never exits 2: that would block the host
			}
			r := cli(t, c.Name, "--no-such-flag")
			if r.code != badUsage || r.stdout != "" {
				t.Fatalf("bad flag: exit %d stdout %q", r.code, r.stdout)
			}
			if !strings.HasPrefix(r.stderr, "memsync "+c.Name+": ") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "no-such-flag") {
				t.Fatalf("bad flag: stderr %q", r.stderr)
			}
			r = cli(t, c.Name, "--repo")
			if r.code != badUsage || !strings.Contains(r.stderr, "repo") || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("flag without value: exit %d stderr %q", r.code, r.stderr)
			}
		})
	}
}
