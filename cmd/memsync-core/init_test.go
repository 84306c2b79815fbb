package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
)

// snapshot describes every file and directory under root: path, mode, and
// a digest of the content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		desc := info.Mode().String()
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInitCreatesLayout(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "mem")
	r := cli(t, "init", "--repo", repo, "--agent", "alice", "--agent", "bob-2")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("init: %d %q", r.code, r.stderr)
	}
	for _, a := range []string{"alice", "bob-2"} {
		for _, dir := range []string{"", "entities", "journal", "journal/archive", "cache", "sync"} {
			p := filepath.Join(repo, "agents", a, "memory", dir)
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				t.Errorf("%s: %v", p, err)
			}
			if !strings.Contains(r.stdout, "created "+strings.TrimSuffix("agents/"+a+"/memory/"+dir, "/")+"/\n") {
				t.Errorf("stdout does not report %s/%s:\n%s", a, dir, r.stdout)
			}
		}
		md, err := os.ReadFile(filepath.Join(repo, "agents", a, "memory", "MEMORY.md"))
		if err != nil || !strings.HasPrefix(string(md), "# "+a+" ") {
			t.Errorf("MEMORY.md of %s: %q %v", a, md, err)
		}
	}
	cfg, err := os.ReadFile(filepath.Join(repo, "memsync.yaml"))
	if err != nil || string(cfg) != defaultConfigYAML {
		t.Errorf("memsync.yaml: %v", err)
	}
	// Every option of Config is in the template.
	for _, key := range []string{"graph:", "uri:", "user:", "database:", "password_file:", "fsync:", "batch_size:",
		"batch_window:", "poll_interval:", "commit_interval:", "max_day_lines:", "weekday:", "summarizer:", "format:", "level:", "remote:", "interval:"} {
		if !strings.Contains(string(cfg), "# "+key) && !strings.Contains(string(cfg), "#   "+key) {
			t.Errorf("memsync.yaml lacks %s", key)
		}
	}
	gi, _ := os.ReadFile(filepath.Join(repo, ".gitignore"))
	for _, l := range []string{".memsync/", "agents/*/memory/sync/"} {
		if !strings.Contains(string(gi), "\n"+l+"\n") {
			t.Errorf(".gitignore lacks %s:\n%s", l, gi)
		}
	}
	if ga, _ := os.ReadFile(filepath.Join(repo, ".gitattributes")); !strings.Contains(string(ga), "\n*.jsonl merge=union\n") {
		t.Errorf(".gitattributes lacks the journals' union merge:\n%s", ga)
	}
	if _, err := git.PlainOpen(repo); err != nil {
		t.Errorf("not a git repository: %v", err)
	}
}

func TestInitTwiceChangesNothing(t *testing.T) {
	repo := t.TempDir()
	args := []string{"init", "--repo", repo, "--agent", "alice", "--agent", "bob"}
	if r := cli(t, args...); r.code != exitOK {
		t.Fatalf("first init: %d %s", r.code, r.stderr)
	}
	before := snapshot(t, repo)
	r := cli(t, args...)
	if r.code != exitOK || r.stdout != "" || r.stderr != "" {
		t.Fatalf("second init: %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if after := snapshot(t, repo); !reflect.DeepEqual(before, after) {
		for p, d := range after {
			if before[p] != d {
				t.Errorf("%s changed: %s -> %s", p, before[p], d)
			}
		}
		t.Fatalf("the tree changed")
	}
	// A new agent later only adds that agent.
	r = cli(t, "init", "--repo", repo, "--agent", "carol")
	if r.code != exitOK || strings.Contains(r.stdout, "alice") || strings.Contains(r.stdout, "memsync.yaml") || !strings.Contains(r.stdout, "agents/carol/memory/") {
		t.Fatalf("adding carol: %q", r.stdout)
	}
}

func TestInitKeepsExistingFiles(t *testing.T) {
	repo := t.TempDir()
	mem := filepath.Join(repo, "agents", "alice", "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(mem, "MEMORY.md"):       "# mine, hand-written\n",
		filepath.Join(repo, "memsync.yaml"):   "graph: embedded\n",
		filepath.Join(repo, ".gitignore"):     "node_modules/\n/.memsync/\n*.log", // no final newline
		filepath.Join(repo, "notes", "x.txt"): "unrelated\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := cli(t, "init", "--repo", repo, "--agent", "alice")
	if r.code != exitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	for p, c := range files {
		got, _ := os.ReadFile(p)
		if filepath.Base(p) == ".gitignore" {
			if want := c + "\nagents/*/memory/sync/\n"; string(got) != want {
				t.Errorf(".gitignore:\n%q\nwant\n%q", got, want)
			}
			continue
		}
		if string(got) != c {
			t.Errorf("%s overwritten: %q", p, got)
		}
	}
	if !strings.Contains(r.stdout, "updated .gitignore") {
		t.Errorf("stdout %q", r.stdout)
	}
}

func TestInitInsideExistingGitRepo(t *testing.T) {
	parent := t.TempDir()
	if _, err := git.PlainInit(parent, false); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(parent, "team", "memory")
	r := invocation{env: map[string]string{"MEMSYNC_REPO": repo}}.run(t, "init", "--agent", "alice")
	if r.code != exitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(repo, ".git")); !os.IsNotExist(err) {
		t.Fatalf("a nested .git was created inside an existing work tree")
	}
	if _, err := os.Stat(filepath.Join(repo, "agents", "alice", "memory", "journal")); err != nil {
		t.Fatal(err)
	}
}

func TestInitUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "bad name"}, `memsync init: --agent: invalid agent name "bad name"`},
		{[]string{"--agent", "ok", "--agent", "../escape"}, `--agent: invalid agent name "../escape"`},
		{[]string{"--agent", strings.Repeat("a", 65)}, "--agent: invalid agent name"},
		{[]string{"--agent", ""}, `--agent: invalid agent name ""`},
		{[]string{"alice"}, `unexpected argument "alice"`},
		{[]string{"--agent"}, "agent"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			repo := filepath.Join(t.TempDir(), "r")
			r := cli(t, append([]string{"init", "--repo", repo}, tc.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
				t.Fatalf("exit %d stderr %q stdout %q", r.code, r.stderr, r.stdout)
			}
			if _, err := os.Stat(repo); !os.IsNotExist(err) {
				t.Fatalf("bad usage created the repository")
			}
		})
	}
	// Init over a file fails (exit 1), naming it.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if r := cli(t, "init", "--repo", file); r.code != exitFail || !strings.HasPrefix(r.stderr, "memsync init: ") {
		t.Fatalf("init over a file: %d %q", r.code, r.stderr)
	}
}
