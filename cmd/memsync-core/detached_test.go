package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// binAppend appends one record through the built binary.
func binAppend(t *testing.T, repo, agent, text string) {
	t.Helper()
	if out, err := exec.Command(memsyncBinary(t), "append", "--repo", repo, "--agent", agent, "--kind", "observation", text).CombinedOutput(); err != nil {
		t.Fatalf("memsync append: %v\n%s", err, out)
	}
}

// waitFor polls cond until it holds, failing after a minute.
func waitFor(t *testing.T, what string, d *daemon, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute; log tail:\n%s", what, tail(d.stderr.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The daemon's auto-commit never commits onto a detached HEAD (issue 13,
// item 4): someone checks out an older commit, agents keep appending, and
// the records stay in the work tree, uncommitted, so git refuses to check
// out the branch over them; the daemon warns once, status says why, and
// committing resumes once a branch is checked out.
func TestDaemonPausesAutoCommitOnADetachedHEAD(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := newRepo(t, "a")
	if err := os.WriteFile(filepath.Join(repo, "memsync.yaml"), []byte("daemon:\n  commit_interval: 100ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// git runs git as a person would, trying again while the daemon's
	// auto-commit holds the index lock (every 100 ms here).
	git := func(args ...string) (string, error) {
		for {
			cmd := exec.Command("git", args...)
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			out, err := cmd.CombinedOutput()
			if err != nil && strings.Contains(string(out), "index.lock") {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return strings.TrimSpace(string(out)), err
		}
	}
	mustGit := func(args ...string) string {
		t.Helper()
		out, err := git(args...)
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return out
	}
	committed := func() bool {
		out, err := git("status", "--porcelain", "--", "agents")
		return err == nil && out == ""
	}
	binAppend(t, repo, "a", "first record")
	d := startDaemon(t, repo, []string{"MEMSYNC_GRAPH=embedded"})
	waitFor(t, "first auto-commit", d, committed)
	branch := mustGit("symbolic-ref", "--short", "HEAD")
	old := mustGit("rev-parse", "HEAD")
	binAppend(t, repo, "a", "second record")
	waitFor(t, "second auto-commit", d, func() bool { return committed() && mustGit("rev-parse", "HEAD") != old })

	mustGit("checkout", "-q", old)
	for _, text := range []string{"written while detached 1", "written while detached 2"} {
		binAppend(t, repo, "a", text)
	}
	paused := func() bool { return strings.Contains(d.stderr.String(), "auto-commit paused: HEAD is detached") }
	waitFor(t, "pause warning", d, paused)
	time.Sleep(time.Second) // ten more intervals: still one warning, still no commit
	if n := strings.Count(d.stderr.String(), "auto-commit paused"); n != 1 {
		t.Fatalf("%d pause warnings; log tail:\n%s", n, tail(d.stderr.String(), 3000))
	}
	if head := mustGit("rev-parse", "HEAD"); head != old || committed() {
		t.Fatalf("committed on the detached HEAD: HEAD %s (was %s)", head, old)
	}
	status := func() string {
		t.Helper()
		out, err := exec.Command(memsyncBinary(t), "status", "--repo", repo).CombinedOutput()
		if err != nil {
			t.Fatalf("memsync status: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := status(); !strings.Contains(out, "auto-commit paused: HEAD is detached\n") {
		t.Fatalf("status:\n%s", out)
	}
	if out, err := exec.Command(memsyncBinary(t), "status", "--json", "--repo", repo).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), `"auto_commit": "paused: HEAD is detached"`) {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if out, err := git("checkout", "-q", branch); err == nil || !strings.Contains(out, "would be overwritten by checkout") {
		t.Fatalf("git checkout %s should refuse to leave the records written while detached behind: %v %s", branch, err, out)
	}

	mustGit("switch", "-q", "-c", "rescue")
	waitFor(t, "commit after resuming", d, func() bool {
		return committed() && strings.Contains(d.stderr.String(), "auto-commit resumed")
	})
	if log := mustGit("log", "-1", "--format=%an", "rescue"); log != "memsync" {
		t.Fatalf("last commit on rescue by %q", log)
	}
	if out := status(); strings.Contains(out, "auto-commit paused") {
		t.Fatalf("status after resuming:\n%s", out)
	}
	if _, err := d.stop(t); err != nil {
		t.Fatalf("daemon: %v\n%s", err, tail(d.stderr.String(), 3000))
	}
}
