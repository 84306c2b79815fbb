package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRepoDir(t *testing.T) {
	cwd := t.TempDir()
	for _, tc := range []struct {
		name, flag, env, want string
	}{
		{"flag wins", "/from/flag", "/from/env", "/from/flag"},
		{"env next", "", "/from/env", "/from/env"},
		{"cwd last", "", "", cwd},
		{"relative flag", "rel/dir", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &Env{
				Getenv: func(k string) string { return map[string]string{"MEMSYNC_REPO": tc.env}[k] },
				Getwd:  func() (string, error) { return cwd, nil },
			}
			got, err := repoDir(env, tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want, _ = filepath.Abs(tc.flag)
			}
			if got != want {
				t.Errorf("repoDir = %s, want %s", got, want)
			}
		})
	}
	env := &Env{Getenv: func(string) string { return "" }}
	if _, err := existingRepo(env, filepath.Join(cwd, "missing")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing repo: %v", err)
	}
}

func TestParseMixesFlagsAndArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		tags []string
	}{
		{[]string{"--tag", "a", "text"}, []string{"text"}, []string{"a"}},
		{[]string{"text", "--tag", "a"}, []string{"text"}, []string{"a"}},
		{[]string{"one", "--tag", "a", "two", "--tag=b"}, []string{"one", "two"}, []string{"a", "b"}},
		{[]string{"--tag", "a", "--", "--tag", "-x"}, []string{"--tag", "-x"}, []string{"a"}},
		{[]string{"-"}, []string{"-"}, nil},
	} {
		fs := newFlags(&Env{}, "test", "test", "a test")
		var tags stringList
		fs.Var(&tags, "tag", "")
		pos, code, done := fs.parse(tc.args)
		if done {
			t.Fatalf("%q: stopped with %d", tc.args, code)
		}
		if !reflect.DeepEqual(pos, tc.want) || !reflect.DeepEqual([]string(tags), tc.tags) {
			t.Errorf("%q: positional %q tags %q, want %q %q", tc.args, pos, tags, tc.want, tc.tags)
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("  one two\nthree   four five ", 9)
	if got != "one two\nthree\nfour five" {
		t.Errorf("wrap = %q", got)
	}
}

func TestListAgents(t *testing.T) {
	repo := t.TempDir()
	for _, d := range []string{"alice", "bob_2", "-bad", "has space", ".hidden"} {
		if err := os.MkdirAll(filepath.Join(repo, "agents", d, "memory"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "agents", "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := listAgents(repo)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"alice", "bob_2"}) {
		t.Errorf("agents %q", got)
	}
	if got, err := listAgents(t.TempDir()); err != nil || got != nil {
		t.Errorf("no agents/: %q %v", got, err)
	}
	if p := journalDir("/r", "a"); p != filepath.FromSlash("/r/agents/a/memory/journal") {
		t.Errorf("journalDir %s", p)
	}
	if p := relPath("/r", journalDir("/r", "a")); p != "agents/a/memory/journal" {
		t.Errorf("relPath %s", p)
	}
}
