package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/memsync/memsync/memsync"
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
			if want := c + "\nagents/*/memory/sync/\nagents/*/memory/cache/\n"; string(got) != want {
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

// realGit runs the real git in dir, isolated from the host's configuration,
// and returns its output.
func realGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.quotepath=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestInitCommitsItsFiles: init commits what it wrote in one commit, so
// that after init, append and the daemon, git status shows nothing but a
// journal the daemon has not committed yet (or nothing once it has); a
// second init commits only what it added, and a third nothing.
func TestInitCommitsItsFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required")
	}
	repo := filepath.Join(t.TempDir(), "mem")
	r := cli(t, "init", "--repo", repo, "--agent", "alice", "--agent", "bob")
	if r.code != exitOK || !strings.Contains(r.stdout, "committed ") {
		t.Fatalf("init: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if got := realGit(t, repo, "log", "--format=%an <%ae> %s"); got != "memsync <memsync@localhost> memsync init: agents alice, bob\n" {
		t.Fatalf("git log: %q", got)
	}
	files := realGit(t, repo, "ls-files")
	for _, f := range []string{".gitattributes", ".gitignore", "memsync.yaml", "agents/alice/memory/MEMORY.md",
		"agents/alice/memory/entities/.gitkeep", "agents/alice/memory/journal/.gitkeep", "agents/alice/memory/journal/archive/.gitkeep",
		"agents/bob/memory/MEMORY.md"} {
		if !strings.Contains("\n"+files, "\n"+f+"\n") {
			t.Errorf("%s is not committed:\n%s", f, files)
		}
	}
	if st := realGit(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status after init:\n%s", st)
	}

	// Append, project, regenerate the snapshots: only the journal shows.
	iv := invocation{now: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)}
	if r := iv.run(t, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--force", "the deploy runs at noon"); r.code != 0 {
		t.Fatalf("append: %d %s", r.code, r.stderr)
	}
	syncRepo(t, repo)
	if r := cli(t, "cache", "--repo", repo); r.code != 0 {
		t.Fatalf("cache: %d %s", r.code, r.stderr)
	}
	if st := realGit(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "?? agents/alice/memory/journal/2026-11-21.jsonl\n" {
		t.Fatalf("git status after append, sync and cache:\n%s", st)
	}
	// The daemon commits the journal (at the latest when it stops): nothing is left.
	d := startDaemon(t, repo, []string{"MEMSYNC_GRAPH=embedded"})
	projected := func() bool {
		var st memsync.StatusReport
		r := cli(t, "status", "--json", "--repo", repo)
		return json.Unmarshal([]byte(r.stdout), &st) == nil && len(st.Agents) == 2 && st.Agents[0].Projected == 1
	}
	deadline := time.Now().Add(time.Minute)
	// The sync before projected the record already: wait for the daemon
	// to run too (signals are handled from "memsync running" on; a SIGTERM
	// before it killed the process, whose commit then never ran).
	for !projected() || !strings.Contains(d.stderr.String(), "memsync running") {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not project: %s\n%s", cli(t, "status", "--repo", repo).stdout, d.stderr)
		}
		time.Sleep(50 * time.Millisecond) // polling the condition, not waiting for it
	}
	if _, err := d.stop(t); err != nil {
		t.Fatalf("daemon: %v\n%s", err, d.stderr)
	}
	if st := realGit(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status after the daemon:\n%s", st)
	}

	// Another agent: one commit of that agent's files alone.
	head := realGit(t, repo, "rev-parse", "HEAD")
	if r := cli(t, "init", "--repo", repo, "--agent", "carol"); r.code != exitOK {
		t.Fatalf("init carol: %d %s", r.code, r.stderr)
	}
	if got := realGit(t, repo, "log", "--format=%s", head[:len(head)-1]+"..HEAD"); got != "memsync init: agents carol\n" {
		t.Fatalf("commits after init carol: %q", got)
	}
	want := "agents/carol/memory/MEMORY.md\nagents/carol/memory/entities/.gitkeep\n" +
		"agents/carol/memory/journal/.gitkeep\nagents/carol/memory/journal/archive/.gitkeep\n"
	if got := realGit(t, repo, "show", "--format=", "--name-only", "HEAD"); got != want {
		t.Fatalf("init carol committed:\n%s\nwant\n%s", got, want)
	}
	// Nothing new: no commit.
	head = realGit(t, repo, "rev-parse", "HEAD")
	if r := cli(t, "init", "--repo", repo, "--agent", "carol", "--agent", "alice"); r.code != exitOK || r.stdout != "" {
		t.Fatalf("init again: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if again := realGit(t, repo, "rev-parse", "HEAD"); again != head {
		t.Fatalf("init with nothing to do committed")
	}
	if st := realGit(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status at the end:\n%s", st)
	}
}

// TestInitLeavesStagedWorkAlone: inside a person's repository with work
// staged, init commits nothing (a commit takes the whole index) and says
// so; the staged work stays staged.
func TestInitLeavesStagedWorkAlone(t *testing.T) {
	parent := t.TempDir()
	realGit(t, parent, "init", "-q")
	os.WriteFile(filepath.Join(parent, "notes.txt"), []byte("mine\n"), 0o644)
	realGit(t, parent, "add", "notes.txt")
	r := cli(t, "init", "--repo", filepath.Join(parent, "memory"), "--agent", "alice")
	if r.code != exitOK || !strings.Contains(r.stdout, "not committed: other changes are staged in git (notes.txt); commit the files above yourself\n") {
		t.Fatalf("init: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if st := realGit(t, parent, "status", "--porcelain"); !strings.Contains(st, "A  notes.txt\n") || !strings.Contains(st, "?? memory/") {
		t.Fatalf("git status:\n%s", st)
	}
	// With nothing else staged, it commits its own files, beside the person's.
	realGit(t, parent, "commit", "-q", "-m", "mine")
	r = cli(t, "init", "--repo", filepath.Join(parent, "memory"), "--agent", "bob")
	if r.code != exitOK || !strings.Contains(r.stdout, "committed ") {
		t.Fatalf("init bob: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if got := realGit(t, parent, "show", "--format=", "--name-only", "HEAD"); !strings.HasPrefix(got, "memory/agents/bob/memory/MEMORY.md\n") || strings.Contains(got, "alice") {
		t.Fatalf("init bob committed:\n%s", got)
	}
}

// TestWindowsReservedAgentRefused is issue 51 §9: an agent name Windows
// reserves (git cannot commit agents/CON) is refused up front, with the
// reason, by init and by append --new-agent alike, before anything is
// written.
func TestWindowsReservedAgentRefused(t *testing.T) {
	for _, name := range []string{"CON", "nul", "Com1", "lpt9"} {
		t.Run(name, func(t *testing.T) {
			repo := filepath.Join(t.TempDir(), "mem")
			r := cli(t, "init", "--repo", repo, "--agent", name)
			if r.code != exitUsage || !strings.Contains(r.stderr, "Windows reserves it") {
				t.Fatalf("init --agent %s: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(repo); !os.IsNotExist(err) {
				t.Fatalf("init --agent %s wrote %s before refusing (%v)", name, repo, err)
			}
			repo = initRepo(t, "a")
			r = cli(t, "append", "--repo", repo, "--new-agent", "--agent", name, "--kind", "fact", "x")
			if r.code != exitUsage || !strings.Contains(r.stderr, "Windows reserves it") {
				t.Fatalf("append --new-agent --agent %s: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(repo, "agents", name)); !os.IsNotExist(err) {
				t.Fatalf("append --new-agent made agents/%s (%v)", name, err)
			}
		})
	}
	if r := cli(t, "init", "--repo", filepath.Join(t.TempDir(), "ok"), "--agent", "CONSOLE"); r.code != 0 {
		t.Fatalf("init --agent CONSOLE: exit %d %s", r.code, r.stderr)
	}
}
