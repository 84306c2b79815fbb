package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	core "github.com/memsync/memsync/memsync"
)

// TestDaemonWaitsForACompactsLock is issue 51 §6: a daemon started while
// a compact holds the repository's lock waits for it, says so in its log,
// and projects once the compact ends; a daemon started beside another
// daemon still exits 2 naming that daemon's pid.
func TestDaemonWaitsForACompactsLock(t *testing.T) {
	repo := newRepo(t, "a")
	appendAs(t, repo, "--agent", "a", "--kind", "fact", "a fact to project")
	held, err := core.LockRepo(core.Layout{Root: repo}, "compact", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemonArgs(t, repo, []string{"MEMSYNC_GRAPH=embedded"})
	waitFor := func(what string, within time.Duration, cond func(log string) bool) {
		t.Helper()
		for deadline := time.Now().Add(within); !cond(d.stderr.String()); {
			select {
			case err := <-d.done:
				t.Fatalf("the daemon exited (%v) while %s; log:\n%s", err, what, d.stderr)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("not %s within %v; log:\n%s", what, within, d.stderr)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("saying it waits for the compact", 30*time.Second, func(log string) bool {
		return strings.Contains(log, "waiting for it to finish") && strings.Contains(log, "memsync compact (pid "+strconv.Itoa(os.Getpid())+",")
	})
	time.Sleep(time.Second) // still waiting, not exited
	waitFor("waiting", 0, func(log string) bool { return !strings.Contains(log, "memsync running") })
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	waitFor("projecting after the compact ended", time.Minute, func(log string) bool {
		return strings.Contains(log, `"msg":"pass","projected":1`)
	})

	// A second daemon: exit 2 at once, naming the first one's pid.
	cmd := exec.Command(memsyncBinary(t), "run", "--repo", repo, "--no-compact")
	cmd.Env = append(cmd.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=embedded")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "a daemon (pid "+strconv.Itoa(d.cmd.Process.Pid)) {
		t.Fatalf("second daemon: %v\n%s", err, out)
	}
	if took, err := d.stop(t); err != nil {
		t.Fatalf("SIGTERM: exit %v after %v", err, took)
	}
}
