package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	core "github.com/memsync/memsync/memsync"
)

// statusOf runs `memsync status --json` through the binary.
func statusOf(t *testing.T, repo string, env []string) core.StatusReport {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), "status", "--json", "--repo", repo)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH="), env...)
	out, err := cmd.Output()
	var rep core.StatusReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("memsync status --json: %v, %v\n%s", err, jerr, out)
	}
	return rep
}

func agentStatus(rep core.StatusReport, agent string) core.AgentStatus {
	for _, a := range rep.Agents {
		if a.Agent == agent {
			return a
		}
	}
	return core.AgentStatus{}
}

// waitStatus polls status until ok says so, or fails after a minute.
func waitStatus(t *testing.T, repo string, env []string, d *daemon, what string, ok func(core.StatusReport) bool) core.StatusReport {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		rep := statusOf(t, repo, env)
		if ok(rep) {
			return rep
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status never said so: %+v\nlog tail:\n%s", what, rep, tail(d.stderr.String(), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDaemonSIGHUPWithBrokenConfig: a typo in memsync.yaml at SIGHUP is
// logged and the daemon goes on with the previous configuration (it used to
// exit 2), projecting what agents append meanwhile.
func TestDaemonSIGHUPWithBrokenConfig(t *testing.T) {
	repo := newRepo(t, "ant")
	env := []string{"MEMSYNC_GRAPH=embedded"}
	d := startDaemon(t, repo, env)
	appendRecords(t, repo, "ant", 10, 0)
	waitStatus(t, repo, env, d, "first 10 projected", func(r core.StatusReport) bool { return agentStatus(r, "ant").Projected == 10 })

	if err := os.WriteFile(filepath.Join(repo, "memsync.yaml"), []byte("daemon:\n  batch_sise: 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.stderr.String(), "keeping the previous configuration") {
		select {
		case err := <-d.done:
			t.Fatalf("the daemon exited on a broken memsync.yaml: %v\n%s", err, d.stderr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log of the broken configuration:\n%s", d.stderr)
		}
	}
	if log := d.stderr.String(); !strings.Contains(log, `batch_sise`) {
		t.Errorf("the log does not name the fault:\n%s", log)
	}
	// Agents still journal (append warns) and the daemon still projects.
	cmd := exec.Command(memsyncBinary(t), "append", "--repo", repo, "--agent", "ant", "--kind", "fact", "appended while the yaml is broken")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "warning") {
		t.Fatalf("append with a broken memsync.yaml: %v\n%s", err, out)
	}
	appendRecords(t, repo, "ant", 10, 0)
	// status reads memsync.yaml too (and refuses a broken one): mend the
	// file without telling the daemon, which is still on its old config.
	if err := os.WriteFile(filepath.Join(repo, "memsync.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, repo, env, d, "21 projected after the failed reload", func(r core.StatusReport) bool { return agentStatus(r, "ant").Projected == 21 })
	if took, err := d.stop(t); err != nil || took > 10*time.Second {
		t.Fatalf("SIGTERM: %v after %v", err, took)
	}
}

// TestSyncSweepsOnlyDeadWritersTemps: opening an agent sweeps the temp files
// of ours that a crashed writer left (the old fixed name, or a pid that is
// gone) and leaves a live process's file alone: it is being written (two
// daemons once shared one temp name, and one's sweep or rename broke the
// other's write).
func TestSyncSweepsOnlyDeadWritersTemps(t *testing.T) {
	repo := newRepo(t, "ant")
	appendRecords(t, repo, "ant", 3, 0)
	syncDir := core.Layout{Root: repo}.SyncDir("ant")
	os.MkdirAll(syncDir, 0o755)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{ // name: must survive
		"state.json.memsync-tmp": false, // the old fixed name
		fmt.Sprintf("state.json.%d-123.memsync-tmp", dead.Process.Pid): false,
		fmt.Sprintf("state.json.%d-456.memsync-tmp", os.Getpid()):      true, // this test is alive
		"notes.txt": true,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(syncDir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(memsyncBinary(t), "sync", "--once", "--repo", repo)
	cmd.Env = append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=embedded")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("memsync sync --once: %v\n%s", err, out)
	}
	for name, keep := range files {
		_, err := os.Stat(filepath.Join(syncDir, name))
		if keep != (err == nil) {
			t.Errorf("%s: exists %v, want %v", name, err == nil, keep)
		}
	}
}

// coreCmd runs the binary with args and the daemon tests' environment.
func coreCmd(t *testing.T, env []string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH="), env...)
	return cmd.Output()
}

// makeUnwritable makes dir refuse new entries (creating, renaming,
// removing), the way a read-only sync/ does: chmod for an ordinary user,
// the immutable attribute for root (whom modes do not stop). It returns
// the undo.
func makeUnwritable(t *testing.T, dir string) func() {
	t.Helper()
	if os.Getuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		undo := func() { os.Chmod(dir, 0o755) }
		t.Cleanup(undo)
		return undo
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("running as root and chattr +i is unavailable: %v %s", err, out)
	}
	undo := func() { exec.Command("chattr", "-i", dir).Run() }
	t.Cleanup(undo)
	return undo
}

// TestDaemonOneAgentsReadOnlySyncStallsNoOther: one agent's sync/ that
// cannot be written stops that agent alone (it used to pause every agent:
// the other got 1 of 30 records projected); status names the fault, and the
// agent catches up by itself once its sync/ is writable again.
func TestDaemonOneAgentsReadOnlySyncStallsNoOther(t *testing.T) {
	repo := newRepo(t, "ant", "bee")
	env := []string{"MEMSYNC_GRAPH=embedded"}
	d := startDaemon(t, repo, env)
	appendRecords(t, repo, "ant", 1, 0)
	appendRecords(t, repo, "bee", 1, 0)
	waitStatus(t, repo, env, d, "one record each", func(r core.StatusReport) bool {
		return agentStatus(r, "ant").Projected == 1 && agentStatus(r, "bee").Projected == 1
	})
	undo := makeUnwritable(t, core.Layout{Root: repo}.SyncDir("ant"))
	appendRecords(t, repo, "ant", 5, 0)
	appendRecords(t, repo, "bee", 30, 0)
	rep := waitStatus(t, repo, env, d, "bee caught up beside a stuck ant", func(r core.StatusReport) bool {
		b := agentStatus(r, "bee")
		return b.Projected == 31 && b.LagSeconds == 0 && agentStatus(r, "ant").Problem != ""
	})
	if a := agentStatus(rep, "ant"); !strings.Contains(a.Problem, "sync") || a.LagSeconds == 0 || agentStatus(rep, "bee").Problem != "" {
		t.Errorf("status while ant's sync/ is read-only: %+v", rep)
	}
	if log := d.stderr.String(); !strings.Contains(log, `"agent":"ant"`) || !strings.Contains(log, "cannot write sync files") {
		t.Errorf("the log does not say what is wrong for ant:\n%s", tail(log, 3000))
	}
	undo()
	waitStatus(t, repo, env, d, "ant caught up once its sync/ is writable", func(r core.StatusReport) bool {
		a := agentStatus(r, "ant")
		return a.Projected == 6 && a.LagSeconds == 0 && a.Problem == ""
	})
	if took, err := d.stop(t); err != nil || took > 10*time.Second {
		t.Fatalf("SIGTERM: %v after %v", err, took)
	}
}

// TestDaemonRebuildsADeletedStore: `rm -rf .memsync` under a running daemon
// is noticed and the journals are projected again without a restart (search
// found nothing and status said "projected 0, lag 0" until one); status
// never says caught up on the empty graph meanwhile.
func TestDaemonRebuildsADeletedStore(t *testing.T) {
	repo := newRepo(t, "ant")
	env := []string{"MEMSYNC_GRAPH=embedded"}
	d := startDaemon(t, repo, env)
	appendRecords(t, repo, "ant", 20, 0)
	waitStatus(t, repo, env, d, "20 projected", func(r core.StatusReport) bool { return agentStatus(r, "ant").Projected == 20 })
	if err := os.RemoveAll(filepath.Join(repo, ".memsync")); err != nil {
		t.Fatal(err)
	}
	if a := agentStatus(statusOf(t, repo, env), "ant"); a.Projected != 20 && a.LagSeconds == 0 {
		t.Errorf("status on the deleted store claims a caught-up agent: %+v", a)
	}
	waitStatus(t, repo, env, d, "20 projected again", func(r core.StatusReport) bool {
		a := agentStatus(r, "ant")
		return a.Projected == 20 && a.LagSeconds == 0
	})
	appendRecords(t, repo, "ant", 5, 0)
	waitStatus(t, repo, env, d, "and new records after", func(r core.StatusReport) bool {
		a := agentStatus(r, "ant")
		return a.Projected == 25 && a.LagSeconds == 0
	})
	out, err := coreCmd(t, env, "search", "crash", "--agent", "ant", "--all", "--limit", "100", "--json", "--repo", repo)
	var res searchResult
	if jerr := json.Unmarshal(out, &res); err != nil || jerr != nil || res.Offline || len(res.Results) != 25 {
		t.Fatalf("search after the store was deleted: %v %v offline=%v, %d hits", err, jerr, res.Offline, len(res.Results))
	}
	if !strings.Contains(d.stderr.String(), "store was removed or replaced") {
		t.Errorf("the daemon did not say why it projects again:\n%s", tail(d.stderr.String(), 3000))
	}
	if took, err := d.stop(t); err != nil || took > 10*time.Second {
		t.Fatalf("SIGTERM: %v after %v", err, took)
	}
}

// TestRejectsDescribeTheJournalsNow: rejects count each bad line once
// whatever re-reads it (compaction rewriting the journal, a rebuild: 3 bad
// lines used to count 6, then 7), a reject the graph finds carries its real
// offset (it said 0), and git conflict markers stop counting once the merge
// is resolved.
func TestRejectsDescribeTheJournalsNow(t *testing.T) {
	for _, b := range daemonBackends {
		t.Run(b.name, func(t *testing.T) {
			repo := newRepo(t, "ant")
			env, _ := b.setup(t, repo)
			layout := core.Layout{Root: repo}
			day := filepath.Join(layout.JournalDir("ant"), "2026-01-10.jsonl")
			rec := func(uuid, text string, min int) string {
				return fmt.Sprintf(`{"uuid":%q,"ts":"2026-01-10T10:%02d:00Z","agent":"ant","kind":"fact","text":%q}`+"\n", uuid, min, text)
			}
			good := rec("mem_a1", "first", 1) + rec("mem_a2", "second", 2) + rec("mem_a3", "third", 3)
			bad := "not json\n" +
				`{"ts":"2026-01-10T10:04:00Z","agent":"ant","kind":"fact"}` + "\n" +
				`{"ts":"2026-01-10T10:05:00Z","agent":"bee","kind":"fact","text":"impostor"}` + "\n"
			clash := rec("mem_a2", "second, but different", 6)
			if err := os.WriteFile(day, []byte(good+bad+clash), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(args ...string) {
				t.Helper()
				if out, err := coreCmd(t, env, append(args, "--repo", repo)...); err != nil {
					t.Fatalf("memsync %v: %v\n%s", args, err, out)
				}
			}
			rejects := func(when string, want int) {
				t.Helper()
				if got := agentStatus(statusOf(t, repo, env), "ant").Rejects; got != want {
					data, _ := os.ReadFile(layout.RejectsFile("ant"))
					t.Fatalf("%s: status counts %d rejects, want %d; rejects.jsonl:\n%s", when, got, want, data)
				}
			}
			run("sync", "--once")
			rejects("first pass", 4)
			all, _ := core.ReadRejects(layout.RejectsFile("ant"))
			wantOffset := int64(len(good + bad))
			found := false
			for _, r := range all {
				if r.UUID == "mem_a2" {
					found = true
					if r.Offset != wantOffset || r.Line != 7 || r.Digest == "" {
						t.Errorf("the graph's reject: %+v, want line 7 at offset %d with a digest", r, wantOffset)
					}
				}
			}
			if !found {
				t.Fatalf("no reject for the uuid clash: %+v", all)
			}

			run("compact", "--no-commit")
			if data, _ := os.ReadFile(day); strings.Contains(string(data), "first") {
				t.Fatalf("compaction did not rewrite the journal:\n%s", data)
			}
			run("sync", "--once")
			rejects("after compaction", 4)
			run("rebuild", "--yes")
			rejects("after a rebuild", 4)
			run("sync", "--once")
			rejects("after a rebuild and a pass", 4)
			if all, _ := core.ReadRejects(layout.RejectsFile("ant")); len(all) != 4 {
				t.Errorf("rejects.jsonl holds %d entries, want 4: %+v", len(all), all)
			}

			// A merge conflict leaves markers in a journal; resolving it removes them.
			today := filepath.Join(layout.JournalDir("ant"), "2026-01-11.jsonl")
			mine := `{"uuid":"mem_b1","ts":"2026-01-11T10:00:00Z","agent":"ant","kind":"fact","text":"mine"}` + "\n"
			theirs := `{"uuid":"mem_b2","ts":"2026-01-11T10:01:00Z","agent":"ant","kind":"fact","text":"theirs"}` + "\n"
			os.WriteFile(today, []byte("<<<<<<< HEAD\n"+mine+"=======\n"+theirs+">>>>>>> other\n"), 0o644)
			run("sync", "--once")
			rejects("with conflict markers", 7)
			os.WriteFile(today, []byte(mine+theirs), 0o644)
			rejects("resolved, before a pass", 4)
			run("sync", "--once")
			rejects("resolved, after a pass", 4)
			if all, _ := core.ReadRejects(layout.RejectsFile("ant")); len(all) != 4 {
				t.Errorf("rejects.jsonl holds %d entries after the merge was resolved, want 4: %+v", len(all), all)
			}
		})
	}
}
