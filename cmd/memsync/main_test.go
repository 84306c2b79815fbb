package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestDelegated(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"append", "--agent", "a"}, false},
		{[]string{"help"}, false},
		{[]string{"--help"}, false},
		{[]string{"help", "append"}, false},
		{[]string{"help", "frob"}, false}, // unknown: answered here
		{[]string{"frob"}, false},
		{[]string{"run"}, true},
		{[]string{"status", "--json"}, true},
		{[]string{"help", "run"}, true},
		{[]string{"-h", "search"}, true},
		{[]string{"init", "--repo", "x"}, true},
	} {
		if got := delegated(tc.args); got != tc.want {
			t.Errorf("delegated(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func writeExecutable(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestFindCore(t *testing.T) {
	binDir, pathDir := t.TempDir(), t.TempDir()
	self := filepath.Join(binDir, "memsync")
	writeExecutable(t, self, "", 0o755)
	onPath := filepath.Join(pathDir, coreName)
	executable := func() (string, error) { return self, nil }
	lookPath := func(name string) (string, error) {
		if _, err := os.Stat(filepath.Join(pathDir, name)); err != nil {
			return "", exec.ErrNotFound
		}
		return filepath.Join(pathDir, name), nil
	}

	_, err := findCore(executable, lookPath)
	if !errors.Is(err, errNoCore) || !strings.Contains(err.Error(), filepath.Join(binDir, coreName)) || !strings.Contains(err.Error(), "$PATH") {
		t.Fatalf("neither place: %v", err)
	}
	writeExecutable(t, onPath, "", 0o755)
	if got, err := findCore(executable, lookPath); err != nil || got != onPath {
		t.Errorf("on PATH: %q %v", got, err)
	}
	beside := filepath.Join(binDir, coreName)
	writeExecutable(t, beside, "", 0o644) // not executable: skipped
	if got, err := findCore(executable, lookPath); err != nil || got != onPath {
		t.Errorf("beside but not executable: %q %v", got, err)
	}
	os.Chmod(beside, 0o755)
	if got, err := findCore(executable, lookPath); err != nil || got != beside {
		t.Errorf("beside wins: %q %v", got, err)
	}
	// A symlink to the front finds the core beside the real file.
	link := filepath.Join(t.TempDir(), "memsync")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	if got, err := findCore(func() (string, error) { return link, nil }, lookPath); err != nil || got != beside {
		t.Errorf("through a symlink: %q %v", got, err)
	}
	if got, err := findCore(func() (string, error) { return "", errors.New("no") }, lookPath); err != nil || got != onPath {
		t.Errorf("unknown executable: %q %v", got, err)
	}
}

// build compiles pkg to dir/name once per test process.
var builds sync.Map // "pkg" -> func() (string, error)

func build(t *testing.T, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain to build the binaries")
	}
	once, _ := builds.LoadOrStore(pkg, sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "memsync-front-test-")
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, "bin")
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
		return bin, nil
	}))
	bin, err := once.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// install copies the built front (and, when core is not empty, that file
// as memsync-core) into a fresh directory and returns the front's path.
func install(t *testing.T, core string) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, build(t, "."), filepath.Join(dir, "memsync"))
	if core != "" {
		copyFile(t, core, filepath.Join(dir, coreName))
	}
	return filepath.Join(dir, "memsync")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, to, string(data), 0o755)
}

// run runs the front with a $PATH that holds no memsync-core.
func run(t *testing.T, front, stdin string, args ...string) (stdout, stderr string, code, pid int) {
	t.Helper()
	cmd := exec.Command(front, args...)
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir(), "MEMSYNC_REPO=", "MEMSYNC_FRONT_TEST=through")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode(), cmd.Process.Pid
}

func TestFrontAppendsWithoutCore(t *testing.T) {
	front := install(t, "")
	// Outside a memory repository, append refuses and writes nothing.
	plain := t.TempDir()
	_, errOut, code, _ := run(t, front, "", "append", "--repo", plain, "--agent", "a", "--kind", "fact", "x")
	if code != 2 || !strings.HasPrefix(errOut, "memsync append: "+plain+" is not a memory repository") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("outside a repository: exit %d stderr %q", code, errOut)
	}
	if entries, _ := os.ReadDir(plain); len(entries) != 0 {
		t.Errorf("a refused append wrote %v", entries)
	}
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "agents", "a", "memory"), 0o755); err != nil { // what init makes for agent a
		t.Fatal(err)
	}
	// An agent init never made is refused, unless --new-agent.
	if _, errOut, code, _ := run(t, front, "", "append", "--repo", repo, "--agent", "b", "--kind", "fact", "x"); code != 2 || !strings.Contains(errOut, `unknown agent "b"`) {
		t.Errorf("unknown agent: exit %d stderr %q", code, errOut)
	}
	if _, errOut, code, _ := run(t, front, "", "append", "--repo", repo, "--agent", "b", "--new-agent", "--kind", "fact", "x"); code != 0 {
		t.Errorf("--new-agent: exit %d stderr %q", code, errOut)
	}
	// --version, and version as git and go take it, are answered here too.
	for _, arg := range []string{"--version", "version"} {
		if out, errOut, code, _ := run(t, front, "", arg); code != 0 || errOut != "" || !strings.HasPrefix(out, "memsync ") || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: exit %d stdout %q stderr %q", arg, code, out, errOut)
		}
	}
	// A global flag before the command, as git and kubectl take it.
	if _, errOut, code, _ := run(t, front, "", "--repo", repo, "append", "--agent", "a", "--kind", "fact", "hoisted"); code != 0 {
		t.Errorf("--repo DIR append: exit %d stderr %q", code, errOut)
	}
	out, errOut, code, _ := run(t, front, "from stdin\n", "append", "--repo", repo, "--agent", "a", "--kind", "fact", "--json", "-")
	if code != 0 || errOut != "" || !strings.Contains(out, `"uuid":"mem_`) || !strings.Contains(out, `"path":"agents/a/memory/journal/`) {
		t.Fatalf("append: exit %d stdout %q stderr %q", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(repo, "agents", "a", "memory", "journal", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("journal files %q", files)
	}
	if data, _ := os.ReadFile(files[0]); !strings.Contains(string(data), `"text":"from stdin"`) {
		t.Errorf("journal %s", data)
	}
	// memsync.yaml is read here as in the core: a bad one is named, and the
	// record is still written (with the defaults).
	writeExecutable(t, filepath.Join(repo, "memsync.yaml"), "append:\n  fsync: maybe\n", 0o644)
	if out, errOut, code, _ := run(t, front, "", "append", "--repo", repo, "--agent", "a", "--kind", "fact", "x"); code != 0 ||
		!strings.Contains(errOut, "memsync.yaml") || !strings.Contains(errOut, "warning") || !strings.HasPrefix(out, "mem_") {
		t.Errorf("bad config: exit %d stdout %q stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{{"help"}, {"help", "append"}, {"append", "--help"}} {
		if out, errOut, code, _ := run(t, front, "", args...); code != 0 || errOut != "" || !strings.Contains(out, "usage: memsync") {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, code, out, errOut)
		}
	}
	if _, errOut, code, _ := run(t, front, "", "append", "--agent", "a"); code != 2 || !strings.HasPrefix(errOut, "memsync append: --kind") {
		t.Errorf("bad usage: exit %d stderr %q", code, errOut)
	}
	if _, errOut, code, _ := run(t, front, "", "frob"); code != 2 || !strings.Contains(errOut, `unknown command "frob"`) {
		t.Errorf("unknown command: exit %d stderr %q", code, errOut)
	}
	// Slips get the core's did-you-mean, answered here without the core.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serach", "x"}, "memsync: unknown command \"serach\"; did you mean search?\n"},
		{[]string{"apend"}, "memsync: unknown command \"apend\"; did you mean append?\n"},
		{[]string{"append", "--repo", repo, "--agnet", "a", "--kind", "fact", "x"},
			"memsync append: unknown flag --agnet; did you mean --agent? (see memsync append --help)\n"},
	} {
		if out, errOut, code, _ := run(t, front, "", tc.args...); code != 2 || out != "" || !strings.HasPrefix(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d stdout %q stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestFrontMissingCore(t *testing.T) {
	front := install(t, "")
	for _, args := range [][]string{{"status"}, {"help", "run"}, {"run", "--repo", t.TempDir()}} {
		out, errOut, code, _ := run(t, front, "", args...)
		if code != 2 || out != "" {
			t.Errorf("%q: exit %d stdout %q", args, code, out)
		}
		beside := filepath.Join(filepath.Dir(front), coreName)
		if !strings.HasPrefix(errOut, "memsync: memsync-core not found next to this binary ("+beside+") nor on $PATH") ||
			strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: stderr %q", args, errOut)
		}
	}
}

// TestFrontExecsCore: the core replaces the front (same pid) and gets the
// arguments, environment and stdin unchanged; its output and exit code are
// the command's.
func TestFrontExecsCore(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "fake-core")
	writeExecutable(t, fake, `#!/bin/sh
echo "pid $$"
echo "argv0 $0"
for a in "$@"; do echo "arg [$a]"; done
echo "env $MEMSYNC_FRONT_TEST"
IFS= read -r line
echo "stdin [$line]"
echo "to stderr" >&2
exit 7
`, 0o755)
	front := install(t, fake)
	out, errOut, code, pid := run(t, front, "piped in", "search", "two words", "", "--agent", "a b", "--json")
	want := fmt.Sprintf("pid %d\nargv0 %s\narg [search]\narg [two words]\narg []\narg [--agent]\narg [a b]\narg [--json]\nenv through\nstdin [piped in]\n",
		pid, filepath.Join(filepath.Dir(front), coreName))
	if out != want || errOut != "to stderr\n" || code != 7 {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errOut)
	}
	out, _, code, _ = run(t, front, "", "help", "status")
	if code != 7 || !strings.Contains(out, "arg [help]\narg [status]\n") {
		t.Errorf("help status: exit %d %q", code, out)
	}
}

// TestFrontWithRealCore runs commands the core answers through the front.
func TestFrontWithRealCore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole program")
	}
	front := install(t, build(t, "../memsync-core"))
	repo := filepath.Join(t.TempDir(), "mem")
	if out, errOut, code, _ := run(t, front, "", "init", "--repo", repo, "--agent", "a"); code != 0 || !strings.Contains(out, "created memsync.yaml") {
		t.Fatalf("init: exit %d %q %q", code, out, errOut)
	}
	if _, errOut, code, _ := run(t, front, "", "append", "--repo", repo, "--agent", "a", "--kind", "fact", "hello #world"); code != 0 {
		t.Fatalf("append: exit %d %q", code, errOut)
	}
	// A hook runs the core as a child: its answer comes through whole
	// (an interactive Claude Code session's Stop: the reminder as context).
	t.Setenv("CLAUDE_CODE_ENTRYPOINT", "")
	if out, errOut, code, _ := run(t, front, `{"session_id":"s","hook_event_name":"Stop"}`, "hook", "claude-code", "Stop", "--agent", "a", "--repo", repo); code != 0 || !strings.HasPrefix(out, `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"memsync reminder`) {
		t.Errorf("hook through the front: exit %d %q %q", code, out, errOut)
	}
	if out, errOut, code, _ := run(t, front, "", "help", "run"); code != 0 || !strings.HasPrefix(out, "usage: memsync run") {
		t.Errorf("help run: exit %d %q %q", code, out, errOut)
	}
	if out, errOut, code, _ := run(t, front, "", "sync", "--once", "--repo", repo, "--graph", "embedded"); code != 0 {
		t.Fatalf("sync: exit %d %q %q", code, out, errOut)
	}
	if out, errOut, code, _ := run(t, front, "", "search", "world", "--repo", repo, "--agent", "a", "--json", "--graph", "embedded"); code != 0 || !strings.Contains(out, "hello #world") {
		t.Errorf("search: exit %d %q %q", code, out, errOut)
	}
	if _, errOut, code, _ := run(t, front, "", "status", "--repo", filepath.Join(repo, "missing")); code != 2 || !strings.HasPrefix(errOut, "memsync status: repository") {
		t.Errorf("status of a missing repo: exit %d %q", code, errOut)
	}
	if _, errOut, code, _ := run(t, front, "", "verify", "--bogus"); code != 2 || !strings.Contains(errOut, "bogus") {
		t.Errorf("bad flag: exit %d %q", code, errOut)
	}
}

// TestImportsStayLight: what the front links decides every append's
// start-up time; none of the heavy packages may creep in.
func TestImportsStayLight(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/memsync/memsync/memsync/surprise" {
			// append's surprise gate: it imports journal and the standard
			// library only (anything heavier would be listed here too).
			continue
		}
		if dep == "github.com/memsync/memsync/memsync/mapped" {
			// the gate reads its index in place: the standard library only.
			continue
		}
		if dep == "github.com/memsync/memsync/memsync/embed" {
			// the gate's model with --embedder (issue 27): the standard
			// library and golang.org/x/text only; its 8 MB are read-only
			// data, paged in by the first Embed, not at start-up.
			continue
		}
		for _, heavy := range []string{"github.com/memsync/memsync/memsync", "github.com/memsync/memsync/graph",
			"github.com/memsync/memsync/ledger", "github.com/memsync/memsync/cache", "github.com/memsync/memsync/compaction",
			"go.uber.org/zap", "github.com/go-git/", "modernc.org/", "github.com/neo4j/", "github.com/fsnotify/", "net/http"} {
			if dep == heavy || strings.HasPrefix(dep, heavy+"/") || (strings.HasSuffix(heavy, "/") && strings.HasPrefix(dep, heavy)) {
				t.Errorf("the front binary links %s", dep)
			}
		}
	}
}

// installWithCore installs the built front beside a memsync-core holding
// content with mode, and returns the front's path.
func installWithCore(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	front := install(t, "")
	writeExecutable(t, filepath.Join(filepath.Dir(front), coreName), content, mode)
	os.Chmod(filepath.Join(filepath.Dir(front), coreName), mode) // WriteFile keeps an umask'd mode
	return front
}

// TestFrontHookFailsOpen: a session hook exits 0 with nothing on stdout
// and the reason on stderr whatever becomes of memsync-core (exit 2 would
// block the host: Claude Code erases the prompt, or the agent cannot
// stop); the core's answer passes through when it exits 0; a command a
// person runs (hook install, status) still fails loudly.
func TestFrontHookFailsOpen(t *testing.T) {
	const payload = `{"session_id":"s","hook_event_name":"SessionStart","cwd":"/tmp"}`
	for _, tc := range []struct {
		name    string
		core    *string // nil: no memsync-core at all
		mode    os.FileMode
		stderr  string // what stderr must say
		wantOut string // stdout: "" unless the core answered
	}{
		{name: "missing", stderr: "memsync-core not found next to this binary"},
		{name: "not executable", core: ptr("#!/bin/sh\necho '{}'\n"), mode: 0o644, stderr: "memsync-core not found next to this binary"},
		{name: "empty", core: ptr(""), mode: 0o755, stderr: "exec format error"},
		{name: "garbage", core: ptr("\x00\x01\x02 not a program \xff\xfe\n"), mode: 0o755, stderr: "exec format error"},
		{name: "killed by a signal", core: ptr("#!/bin/sh\necho '{\"half'\nkill -KILL $$\n"), mode: 0o755, stderr: "killed by signal killed"},
		{name: "exit 2 as a panic exits", core: ptr("#!/bin/sh\necho '{\"half'\necho 'panic: boom' >&2\nexit 2\n"), mode: 0o755, stderr: "panic: boom\nmemsync hook: "},
		{name: "exit 1", core: ptr("#!/bin/sh\necho '{\"half'\nexit 1\n"), mode: 0o755, stderr: "exited with status 1"},
		{name: "answers", core: ptr("#!/bin/sh\nIFS= read -r line\necho '{\"systemMessage\":\"hi\"}'\n"), mode: 0o755, wantOut: "{\"systemMessage\":\"hi\"}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			front := install(t, "")
			if tc.core != nil {
				front = installWithCore(t, *tc.core, tc.mode)
			}
			for _, event := range []string{"SessionStart", "UserPromptSubmit", "Stop"} {
				out, errOut, code, _ := run(t, front, payload, "hook", "claude-code", event, "--agent", "a")
				if code != 0 || out != tc.wantOut {
					t.Errorf("%s: exit %d stdout %q (want 0 and %q); stderr %q", event, code, out, tc.wantOut, errOut)
				}
				if tc.stderr == "" {
					if errOut != "" {
						t.Errorf("%s: stderr %q", event, errOut)
					}
					continue
				}
				if !strings.Contains(errOut, tc.stderr) || !strings.Contains(errOut, "memsync hook: ") || !strings.HasSuffix(errOut, "(fail-open: the session goes on without memsync)\n") {
					t.Errorf("%s: stderr %q does not say %q", event, errOut, tc.stderr)
				}
			}
		})
	}
	// What a person runs is not a hook: it fails loudly.
	front := installWithCore(t, "", 0o755)
	for _, args := range [][]string{{"hook", "install", "claude-code"}, {"status"}} {
		if out, errOut, code, _ := run(t, front, "", args...); code != 2 || out != "" || !strings.Contains(errOut, "exec format error") {
			t.Errorf("%q: exit %d stdout %q stderr %q (want 2 and the reason)", args, code, out, errOut)
		}
	}
}

func ptr(s string) *string { return &s }

func TestIsHook(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"hook", "claude-code", "SessionStart"}, true},
		{[]string{"hook", "--agent", "a", "codex", "Stop"}, true},
		{[]string{"hook"}, true},
		{[]string{"hook", "install", "codex"}, false},
		{[]string{"help", "hook"}, false},
		{[]string{"status"}, false},
	} {
		if got := isHook(tc.args); got != tc.want {
			t.Errorf("isHook(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
