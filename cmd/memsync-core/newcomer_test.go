package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
)

// binResult is what one run of the built binary produced.
type binResult struct {
	code           int
	stdout, stderr string
}

// runBin runs the installed front (memsyncBinary) with args in dir, with
// no $MEMSYNC_REPO and the embedded store, plus env.
func runBin(t *testing.T, dir string, env []string, args ...string) binResult {
	t.Helper()
	return runExe(t, memsyncBinary(t), dir, env, args...)
}

func runExe(t *testing.T, exe, dir string, env []string, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=embedded", "MEMSYNC_NEO4J_URI="), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return binResult{cmd.ProcessState.ExitCode(), out.String(), errOut.String()}
}

// TestOutsideARepository: in a directory that is not a memory repository,
// every command but init refuses in one line that names the directory and
// says how to fix it, exit 2, and writes nothing there.
func TestOutsideARepository(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"status"},
		{"append", "--agent", "a", "--kind", "fact", "x"},
		{"run"},
		{"sync", "--once"},
		{"verify"},
		{"compact"},
		{"rebuild", "--yes"},
		{"search", "anything", "--agent", "a"},
		{"cache"},
		{"show", "mem_20261121T091500Z_a_0001", "--agent", "a"},
		{"rejects"},
		{"consolidate"},
		{"flag", "mem_20261121T091500Z_a_0001", "--important", "--agent", "a"},
		{"explain", "mem_20261121T091500Z_a_0001", "--agent", "a"},
		{"packet", "--role", "planner", "--agent", "a", "--goal", "plan"},
		{"mcp", "--agent", "a"},
	} {
		r := runBin(t, dir, nil, args...)
		want := "memsync " + args[0] + ": " + dir + ` is not a memory repository (no memsync.yaml or agents/ in it): ` +
			`create one with "memsync init --repo ` + dir + `"`
		if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("refused commands wrote %v", entries)
	}
	// A repository of an older memsync (agents/ and journals, no
	// memsync.yaml) is still one.
	old := t.TempDir()
	rec := journal.Record{Agent: "a", Kind: journal.KindFact, Text: "from an older memsync"}
	if _, err := journal.Append(journalDir(old, "a"), &rec, journal.AppendOptions{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, old, nil, "status"); r.code != exitOK || !strings.Contains(r.stdout, "daemon: not running") {
		t.Fatalf("status of an older repository: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// waitLocked waits until a daemon holds repo's lock and returns its pid.
func waitLocked(t *testing.T, repo string, d *daemon) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if h, held, err := core.RepoLockHolder(layout(repo)); err == nil && held && h.PID > 0 {
			return h.PID
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never took its lock; log:\n%s", d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOneDaemonPerRepository: a second run exits 2 naming the daemon's pid;
// rebuild, compact and sync refuse while it runs (so a rebuild can no
// longer leave the daemon indexing a store of another generation at every
// write: its searches stay on an index that is current); status says it
// runs; once it is killed, even with SIGKILL, the lock is free again.
func TestOneDaemonPerRepository(t *testing.T) {
	repo := newRepo(t, "ant")
	d := startDaemon(t, repo, []string{"MEMSYNC_GRAPH=embedded"})
	pid := waitLocked(t, repo, d)
	if pid != d.cmd.Process.Pid {
		t.Fatalf("lock held by pid %d, the daemon is %d", pid, d.cmd.Process.Pid)
	}
	holder := "a daemon (pid " + strconv.Itoa(pid) + ", since "
	for _, tc := range []struct {
		args   []string
		advice string
	}{
		{[]string{"run", "--repo", repo}, "stop it first (one daemon per repository)"},
		{[]string{"rebuild", "--yes", "--repo", repo}, "stop it first, rebuild, then start it again"},
		{[]string{"compact", "--repo", repo}, "stop it first, or let it compact"},
		{[]string{"consolidate", "--repo", repo}, "stop it first, or let it consolidate"},
		{[]string{"sync", "--once", "--repo", repo}, "it projects every record already"},
	} {
		r := runBin(t, repo, nil, tc.args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, "memsync "+tc.args[0]+": "+holder) ||
			!strings.Contains(r.stderr, "is running on "+repo+"; "+tc.advice) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q under a daemon: exit %d stderr %q", tc.args, r.code, r.stderr)
		}
	}
	r := runBin(t, repo, nil, "status", "--repo", repo)
	if r.code != exitOK || !strings.Contains(r.stdout, "\ndaemon: running (pid "+strconv.Itoa(pid)+", since ") {
		t.Fatalf("status under a daemon: %d %q %q", r.code, r.stdout, r.stderr)
	}
	var st core.StatusReport
	r = runBin(t, repo, nil, "status", "--json", "--repo", repo)
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || !st.Daemon.Running || st.Daemon.PID != pid || st.Daemon.Command != "run" || st.Daemon.Since.IsZero() {
		t.Fatalf("status --json under a daemon: %v %+v", err, st.Daemon)
	}

	// The refused rebuild left the daemon's store alone: what is appended
	// now is projected and found, and the daemon never builds its search
	// index again.
	for i := range 20 {
		if r := runBin(t, repo, nil, "append", "--repo", repo, "--agent", "ant", "--kind", "fact", "zebra crossing "+strconv.Itoa(i)); r.code != 0 {
			t.Fatalf("append: %d %q", r.code, r.stderr)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		r := runBin(t, repo, nil, "search", "zebra", "--limit", "50", "--json", "--repo", repo, "--agent", "ant")
		var res searchResult
		if err := json.Unmarshal([]byte(r.stdout), &res); err == nil && !res.Offline && len(res.Results) == 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search never found the 20 records: %q %q; daemon log:\n%s", r.stdout, r.stderr, d.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	log := d.stderr.String()
	if strings.Contains(log, "another generation") {
		t.Fatalf("the daemon rebuilt its search index:\n%s", log)
	}
	// One start line (backend, repo, agents; no configuration dump) and a
	// line for each pass that projected something.
	if !strings.Contains(log, `"msg":"memsync starting","graph":"embedded","repo":"`+repo+`","agents":["ant"]}`) ||
		strings.Contains(log, "neo4j") || !strings.Contains(log, `"msg":"pass","projected":`) {
		t.Errorf("daemon log:\n%s", log)
	}

	d.kill(t) // SIGKILL: the kernel releases the lock
	r = runBin(t, repo, nil, "status", "--repo", repo)
	if r.code != exitOK || !strings.Contains(r.stdout, "\ndaemon: not running\n") {
		t.Fatalf("status after the daemon died: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, repo, nil, "rebuild", "--yes", "--repo", repo); r.code != exitOK {
		t.Fatalf("rebuild with no daemon: %d %q %q", r.code, r.stdout, r.stderr)
	}
	d2 := startDaemon(t, repo, []string{"MEMSYNC_GRAPH=embedded"})
	if waitLocked(t, repo, d2) != d2.cmd.Process.Pid {
		t.Fatal("a new daemon could not take the lock")
	}
	if _, err := d2.stop(t); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
}

// showRepo is a repository with a shared decision of alice's that a later
// one supersedes, a private memory of alice's, one of bob's, and a line of
// bob's that is rejected; all synced.
func showRepo(t *testing.T, env []string) (repo string, ids map[string]string) {
	t.Helper()
	repo = newRepo(t, "alice", "bob")
	ids = map[string]string{}
	add := func(name string, args ...string) {
		r := runBin(t, repo, nil, append([]string{"append", "--repo", repo, "--ts", "2026-11-21T09:00:0" + strconv.Itoa(len(ids)) + "Z"}, args...)...)
		if r.code != 0 {
			t.Fatalf("append %s: %d %q", name, r.code, r.stderr)
		}
		ids[name] = strings.TrimSpace(r.stdout)
	}
	add("old", "--agent", "alice", "--kind", "decision", "--scope", "shared", "Use MySQL for billing")
	add("shared", "--agent", "alice", "--kind", "decision", "--scope", "shared", "--why", "cheaper at our size",
		"--tag", "db", "--entity", "Acme Corp", "--source-type", "told", "--source-actor", "@Shaun",
		"--supersedes", ids["old"], "Use #postgres for @Mira's billing service")
	add("alice-private", "--agent", "alice", "--kind", "fact", "alice's own secret")
	add("bob-private", "--agent", "bob", "--kind", "fact", "bob's own note")
	f, err := os.OpenFile(filepath.Join(journalDir(repo, "bob"), "2026-11-21.jsonl"), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"ts":"2026-11-21T10:00:00Z","agent":"bob","kind":"bogus","text":"a bad line"}` + "\n")
	f.Close()
	if r := runBin(t, repo, env, "sync", "--once", "--repo", repo); r.code != 0 {
		t.Fatalf("sync: %d %q %q", r.code, r.stdout, r.stderr)
	}
	return repo, ids
}

// TestShowCommand: show prints everything a record carries, where it
// lives, its edges and its status, to an agent that may see it; another
// agent's private memory is "not found", exactly like an unknown uuid. On
// both backends.
func TestShowCommand(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { testShow(t, nil) })
	t.Run("neo4j", func(t *testing.T) {
		neo4jtest.Open(t) // holds the server for this test, empty
		testShow(t, []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=" + os.Getenv("MEMSYNC_NEO4J_URI")})
	})
}

func testShow(t *testing.T, env []string) {
	repo, ids := showRepo(t, env)
	r := runBin(t, repo, env, "show", ids["shared"], "--agent", "bob", "--repo", repo)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("show: %d %q %q", r.code, r.stdout, r.stderr)
	}
	out := squash(r.stdout)
	for _, want := range []string{"uuid " + ids["shared"], "text Use #postgres for @Mira's billing service",
		"why cheaper at our size", "tags db", "entities Acme Corp", "source told, from @Shaun",
		"scope shared (group CONSTELLATION)", "file agents/alice/memory/journal/2026-11-21.jsonl:2",
		"projection projected", "status active (as of", "supersedes " + ids["old"], "mentions #postgres, @Mira, Acme Corp"} {
		if !strings.Contains(out, "\n"+want) && !strings.HasPrefix(out, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runBin(t, repo, env, "show", ids["old"], "--agent", "alice", "--json", "--repo", repo)
	var doc showJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("show --json: %d %v %q", r.code, err, r.stderr)
	}
	var rec map[string]any
	json.Unmarshal(doc.Record, &rec)
	if doc.Status != "superseded" || doc.Projection != showProjected || doc.ReplacedBy != ids["shared"] || doc.InvalidAt != "2026-11-21T09:00:01Z" ||
		doc.Path != "agents/alice/memory/journal/2026-11-21.jsonl" || doc.Line != 1 || rec["text"] != "Use MySQL for billing" {
		t.Fatalf("show --json: %+v %v", doc, rec)
	}

	// Another agent's private memory and a uuid nobody wrote: the same answer.
	hidden := runBin(t, repo, env, "show", ids["alice-private"], "--agent", "bob", "--repo", repo)
	missing := runBin(t, repo, env, "show", "mem_20261121T090009Z_alice_0009", "--agent", "bob", "--repo", repo)
	want := func(id string) string { return "memsync show: no memory " + id + " visible to agent bob\n" }
	if hidden.code != exitNotFound || hidden.stdout != "" || hidden.stderr != want(ids["alice-private"]) {
		t.Errorf("another agent's private memory: %d %q %q", hidden.code, hidden.stdout, hidden.stderr)
	}
	if missing.code != exitNotFound || missing.stdout != "" || missing.stderr != want("mem_20261121T090009Z_alice_0009") {
		t.Errorf("unknown uuid: %d %q %q", missing.code, missing.stdout, missing.stderr)
	}
	if r := runBin(t, repo, env, "show", ids["alice-private"], "--agent", "alice", "--repo", repo); r.code != 0 || !strings.Contains(r.stdout, "alice's own secret") {
		t.Errorf("alice's own private memory: %d %q %q", r.code, r.stdout, r.stderr)
	}

	// Appended, not yet projected: read from the journal.
	r = runBin(t, repo, nil, "append", "--repo", repo, "--agent", "bob", "--kind", "fact", "fresh")
	fresh := strings.TrimSpace(r.stdout)
	r = runBin(t, repo, env, "show", fresh, "--agent", "bob", "--repo", repo)
	if r.code != 0 || !strings.Contains(squash(r.stdout), "\nprojection not projected\n") || !strings.Contains(squash(r.stdout), "\nstatus active") {
		t.Errorf("unprojected record: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, repo, nil, "show", "--agent", "bob", "--repo", repo); r.code != exitUsage || !strings.Contains(r.stderr, "one UUID expected") {
		t.Errorf("no uuid: %d %q", r.code, r.stderr)
	}
}

// TestRejectsCommand: rejects lists each rejected line with its file, line
// and reason; status and verify point at it.
func TestRejectsCommand(t *testing.T) {
	repo, _ := showRepo(t, nil)
	r := runBin(t, repo, nil, "rejects", "--repo", repo)
	want := "agents/bob/memory/journal/2026-11-21.jsonl:2: field \"kind\": unknown kind \"bogus\"\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("rejects: %d %q %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	if r := runBin(t, repo, nil, "rejects", "--agent", "alice", "--repo", repo); r.code != 0 || r.stdout != "no rejected lines\n" {
		t.Errorf("rejects --agent alice: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, repo, nil, "rejects", "--agent", "bob", "--json", "--repo", repo)
	var doc struct{ Rejects []rejectJSON }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Rejects) != 1 {
		t.Fatalf("rejects --json: %v %q", err, r.stdout)
	}
	if got := doc.Rejects[0]; got.Agent != "bob" || got.File != "agents/bob/memory/journal/2026-11-21.jsonl" || got.Line != 2 || !strings.Contains(got.Reason, "bogus") {
		t.Errorf("rejects --json: %+v", got)
	}
	if r := runBin(t, repo, nil, "rejects", "--agent", "carol", "--repo", repo); r.code != exitUsage || !strings.Contains(r.stderr, `unknown agent "carol"`) {
		t.Errorf("rejects --agent carol: %d %q", r.code, r.stderr)
	}
	if r := runBin(t, repo, nil, "verify", "--repo", repo); !strings.Contains(r.stdout, "\n  rejects: 1 journal lines can never be projected (memsync rejects lists them)\n") {
		t.Errorf("verify does not mention the reject: %d %q", r.code, r.stdout)
	}
	if r := runBin(t, repo, nil, "status", "--repo", repo); !strings.Contains(r.stdout, "\n1 rejected lines: memsync rejects lists them\n") {
		t.Errorf("status does not point at rejects: %q", r.stdout)
	}
}

// TestVersionAndSmallThings: --version from both binaries; sync
// --once=false refused; help shows defaults unquoted and the Neo4j flags
// apart; an unknown --kind lists the valid ones.
func TestVersionAndSmallThings(t *testing.T) {
	front := memsyncBinary(t)
	coreBin := filepath.Join(filepath.Dir(front), "memsync-core")
	dir := t.TempDir()
	for _, exe := range []string{front, coreBin} {
		r := runExe(t, exe, dir, nil, "--version")
		if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "memsync ") || strings.Count(r.stdout, "\n") != 1 || strings.Contains(r.stdout, "memsync  ") {
			t.Errorf("%s --version: %d %q %q", filepath.Base(exe), r.code, r.stdout, r.stderr)
		}
	}
	repo := newRepo(t, "a")
	if r := runBin(t, dir, nil, "sync", "--once=false", "--repo", repo); r.code != exitUsage || !strings.Contains(r.stderr, "--once=false: sync only makes one pass; run the daemon with memsync run") {
		t.Errorf("sync --once=false: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r := runBin(t, dir, nil, "sync", "--help")
	if !strings.Contains(r.stdout, "(default true)") || strings.Contains(r.stdout, `(default "`) {
		t.Errorf("help quotes its defaults:\n%s", r.stdout)
	}
	flags, neo, ok := strings.Cut(r.stdout, "\nNeo4j flags (only with --graph neo4j):\n")
	if !ok || strings.Contains(flags, "--neo4j-") || !strings.Contains(neo, "--neo4j-uri URI") {
		t.Errorf("the Neo4j flags are not apart:\n%s", r.stdout)
	}
	r = runBin(t, dir, nil, "append", "--repo", repo, "--agent", "a", "--kind", "idea", "x")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown kind "idea" (one of decision, preference, observation`) {
		t.Errorf("unknown kind: %d %q", r.code, r.stderr)
	}
}

// squash collapses the runs of spaces tabwriter aligns columns with.
func squash(s string) string { return regexp.MustCompile(` {2,}`).ReplaceAllString(s, " ") }
