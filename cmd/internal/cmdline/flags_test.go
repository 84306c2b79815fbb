package cmdline

import (
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
			got, err := RepoDir(env, tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want, _ = filepath.Abs(tc.flag)
			}
			if got != want {
				t.Errorf("RepoDir = %s, want %s", got, want)
			}
		})
	}
	env := &Env{Getenv: func(string) string { return "" }}
	if _, err := ExistingRepo(env, filepath.Join(cwd, "missing")); err == nil || !strings.Contains(err.Error(), "does not exist") {
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
		fs := NewFlags(&Env{}, "test", "test", "a test")
		var tags StringList
		fs.Var(&tags, "tag", "")
		pos, code, done := fs.ParseArgs(tc.args)
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
