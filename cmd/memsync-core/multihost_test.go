package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
)

var multihostDuration = flag.Duration("multihost.duration", 20*time.Second,
	"how long agents append on both hosts in TestManyHostsOneMemory (issue 20 says 30s)")

// person runs git as a person would.
func person(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gitOut(t, dir, append([]string{"-c", "user.name=Person", "-c", "user.email=person@example.com"}, args...)...)
}

// twoHosts makes a memory repository (memsync init, exchanging with origin
// every 300 ms), a bare remote holding it, and a second host cloned from
// the remote and completed with memsync init, as a person sets up a new
// machine.
func twoHosts(t *testing.T, agents ...string) (remote string, hosts [2]string) {
	t.Helper()
	a := newRepo(t, agents...)
	f, err := os.OpenFile(configFile(a), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\nsync:\n  remote: origin\n  interval: 300ms\n")
	f.Close()
	person(t, a, "add", "-A")
	person(t, a, "commit", "-q", "-m", "memory repository")
	remote = filepath.Join(t.TempDir(), "remote.git")
	person(t, a, "clone", "-q", "--bare", a, remote)
	person(t, a, "remote", "add", "origin", remote)
	b := filepath.Join(t.TempDir(), "b")
	person(t, filepath.Dir(b), "clone", "-q", remote, b)
	args := []string{"init", "--repo", b}
	for _, ag := range agents {
		args = append(args, "--agent", ag)
	}
	if out, err := exec.Command(memsyncBinary(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("memsync init on the second host: %v\n%s", err, out)
	}
	return remote, [2]string{a, b}
}

func headOf(t *testing.T, dir, rev string) string {
	t.Helper()
	return strings.TrimSpace(gitOut(t, dir, "rev-parse", rev))
}

// hostJournal is every journal line of a work tree, sorted.
func hostJournal(t *testing.T, repo string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repo, "agents", "*", "memory", "journal", "*.jsonl"))
	arch, _ := filepath.Glob(filepath.Join(repo, "agents", "*", "memory", "journal", "archive", "*.jsonl"))
	var lines []string
	for _, f := range append(files, arch...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	return lines
}

// TestManyHostsOneMemory is SPEC §12 end to end: two hosts, each its own
// daemon (the binary) exchanging through a bare remote every 300 ms, agents
// appending on both at once (agent "s" on both, in the same seconds), host b's daemon killed -9
// at random moments (so during commits, fetches, merges and pushes), host b
// cut off from the remote for a third of the run. After quiescence both
// work trees hold the same journal lines, each record once, no uuid
// collided (no reject), verify is clean on both hosts, the graph holds
// every record exactly once, and every head either host or the remote ever
// had is an ancestor of the final head (nothing rewritten, nothing forced).
func TestManyHostsOneMemory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dur := *multihostDuration
	if testing.Short() {
		dur = 4 * time.Second
	}
	for _, b := range daemonBackends {
		t.Run(b.name, func(t *testing.T) {
			remote, h := twoHosts(t, "h0", "h1", "s")
			envA, openA := b.setup(t, h[0])
			envB, openB := envA, openA // one Neo4j for both hosts
			if b.name == "embedded" {
				envB, openB = b.setup(t, h[1])
			}
			envs := [2][]string{envA, envB}
			dA := startDaemon(t, h[0], envA)
			var (
				mu       sync.Mutex
				appended []string
				heads    = map[string]bool{}
				dB       *daemon
			)
			ctx, cancel := context.WithTimeout(context.Background(), dur)
			defer cancel()
			var wg sync.WaitGroup
			for i, repo := range h {
				for _, agent := range []string{[]string{"h0", "h1"}[i], "s"} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						layout := core.Layout{Root: repo}
						host, err := journal.HostID(repo)
						if err != nil {
							t.Error(err)
							return
						}
						// As memsync append does: the host's id in every uuid,
						// so agent s on both hosts in the same second never
						// collides.
						opts := journal.AppendOptions{NoSync: true, Host: host, SequenceFile: layout.SequenceFile(agent), Root: repo}
						for ctx.Err() == nil {
							rec := journal.Record{Agent: agent, Kind: journal.KindObservation, Scope: journal.ScopeShared,
								Text: "seen on host " + []string{"a", "b"}[i]}
							if _, err := journal.Append(layout.JournalDir(agent), &rec, opts); err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							appended = append(appended, rec.UUID)
							mu.Unlock()
							time.Sleep(15 * time.Millisecond)
						}
					}()
				}
			}
			// Every head either host or the remote ever had.
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					for _, dir := range []string{h[0], h[1], remote} {
						if out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output(); err == nil {
							mu.Lock()
							heads[strings.TrimSpace(string(out))] = true
							mu.Unlock()
						}
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
			// Host b: kill -9 at random moments; cut off from the remote
			// for the middle third of the run.
			rng := rand.New(rand.NewSource(20))
			start := time.Now()
			away := remote + ".away"
			cutOff, reported, bDown := false, false, true
			for ctx.Err() == nil {
				dB, bDown = startDaemon(t, h[1], envB), false
				time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
				elapsed := time.Since(start)
				switch {
				case !cutOff && elapsed > dur/3 && elapsed < 2*dur/3:
					if err := os.Rename(remote, away); err != nil {
						t.Fatal(err)
					}
					cutOff = true
				case cutOff && elapsed >= 2*dur/3:
					if !reported {
						st := hostStatus(t, h[1], envB)
						reported = st.Remote != nil && st.Remote.LastError != ""
					}
					reconnect(t, away, remote)
					cutOff = false
				}
				if ctx.Err() == nil {
					dB.kill(t)
					bDown = true
				}
			}
			if bDown {
				// The run ended right after a kill: host b needs its daemon
				// to commit and exchange its last lines.
				dB = startDaemon(t, h[1], envB)
			}
			wg.Wait()
			if cutOff {
				reconnect(t, away, remote)
			}
			if !reported && !testing.Short() {
				t.Errorf("status on the cut-off host never reported the failing exchange")
			}
			// Quiescence: both hosts hold what the remote holds, committed.
			deadline := time.Now().Add(90 * time.Second)
			for {
				la, lb := hostJournal(t, h[0]), hostJournal(t, h[1])
				top := headOf(t, remote, "HEAD")
				if strings.Join(la, "\n") == strings.Join(lb, "\n") && headOf(t, h[0], "HEAD") == top && headOf(t, h[1], "HEAD") == top &&
					gitOut(t, h[0], "status", "--porcelain", "--untracked-files=no", "--", "agents") == "" && gitOut(t, h[1], "status", "--porcelain", "--untracked-files=no", "--", "agents") == "" {
					break
				}
				if time.Now().After(deadline) {
					ls, _ := exec.Command("sh", "-c", "ls -la \"$0/.git\" \"$1/.git\"; cat \"$0/.memsync/exchange.json\" \"$1/.memsync/exchange.json\"; ps -ef | grep -e git -e memsync-core | grep -v grep", h[0], h[1]).CombinedOutput()
					t.Fatalf("no quiescence after 90 s: %d and %d lines\nlog of a:\n%s\nlog of b:\n%s\n%s",
						len(la), len(lb), tail(dA.stderr.String(), 3000), tail(dB.stderr.String(), 3000), ls)
				}
				time.Sleep(300 * time.Millisecond)
			}
			lines := hostJournal(t, h[0])
			seen := map[string]int{}
			for _, l := range lines {
				rec, err := journal.Parse([]byte(l))
				if err != nil {
					t.Fatalf("bad journal line %q: %v", l, err)
				}
				seen[rec.UUID]++
			}
			doubled := false
			for _, u := range appended {
				if seen[u] != 1 {
					t.Errorf("record %s is in the journals %d times, want once%s", u, seen[u], whereIs(t, h, u))
					doubled = true
				}
			}
			if doubled {
				keepHosts(t, remote, h)
			}
			graphs := [2]core.Graph{openA(), openB()}
			daemons := [2]*daemon{dA, dB}
			for i, repo := range h {
				waitClean(t, repo, graphs[i], len(seen), daemons[i])
				st, err := graphs[i].Stats(context.Background())
				if err != nil || st.Memories != len(seen) {
					t.Errorf("host %d: graph holds %d memories (%v), want each of the %d records once", i, st.Memories, err, len(seen))
				}
			}
			for i, d := range daemons {
				if _, err := d.stop(t); err != nil {
					t.Errorf("daemon %d: %v", i, err)
				}
			}
			for i, repo := range h {
				cmd := exec.Command(memsyncBinary(t), "verify", "--json", "--repo", repo)
				cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO="), envs[i]...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("verify on host %d: %v\n%s", i, err, out)
				}
				st := hostStatus(t, repo, envs[i])
				for _, a := range st.Agents {
					if a.Rejects != 0 {
						t.Errorf("host %d: agent %s has %d rejects (a uuid collided?)", i, a.Agent, a.Rejects)
					}
				}
				if st.Remote == nil || st.Remote.Ahead != 0 || st.Remote.Behind != 0 || len(st.Remote.Conflicts) != 0 {
					t.Errorf("host %d: status remote = %+v, want in step", i, st.Remote)
				}
			}
			final := headOf(t, remote, "HEAD")
			for hd := range heads {
				if _, err := exec.Command("git", "-C", remote, "merge-base", "--is-ancestor", hd, final).CombinedOutput(); err != nil {
					t.Errorf("head %s is not an ancestor of the final head %s: history rewritten", hd, final)
				}
			}
			t.Logf("%d records appended on two hosts; %d heads seen, all ancestors of the final one", len(appended), len(heads))
		})
	}
}

// whereIs names, for a failure message, every journal file of either host
// holding uuid, with the line numbers and the commits that added it.
func whereIs(t *testing.T, hosts [2]string, uuid string) string {
	t.Helper()
	var b strings.Builder
	for i, repo := range hosts {
		out, _ := exec.Command("grep", "-rn", "--include=*.jsonl", uuid, filepath.Join(repo, "agents")).CombinedOutput()
		b.WriteString("\nhost " + string(rune('a'+i)) + ":\n" + string(out))
		log, _ := exec.Command("git", "-C", repo, "log", "--all", "--format=%h %p %s", "-S", uuid, "--", "agents").CombinedOutput()
		b.WriteString("commits adding or removing it:\n" + string(log))
	}
	return b.String()
}

// keepHosts copies both hosts and the remote out of the test's temporary
// directories so that a failure can be examined after the test.
func keepHosts(t *testing.T, remote string, hosts [2]string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "multihost-fail-")
	if err != nil {
		t.Log(err)
		return
	}
	for i, src := range []string{remote, hosts[0], hosts[1]} {
		if out, err := exec.Command("cp", "-a", src, filepath.Join(dir, []string{"remote.git", "a", "b"}[i])).CombinedOutput(); err != nil {
			t.Logf("keeping %s: %v %s", src, err, out)
		}
	}
	t.Logf("hosts kept in %s", dir)
}

// remoteStatusJSON is what the tests read of status --json.
type remoteStatusJSON struct {
	Agents []struct {
		Agent   string `json:"agent"`
		Rejects int    `json:"rejects"`
	} `json:"agents"`
	Remote *struct {
		LastError string   `json:"last_error"`
		Ahead     int      `json:"ahead"`
		Behind    int      `json:"behind"`
		Conflicts []string `json:"conflicts"`
	} `json:"remote"`
}

func hostStatus(t *testing.T, repo string, env []string) remoteStatusJSON {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), "status", "--json", "--repo", repo)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO="), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st remoteStatusJSON
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

// A person's conflicting MEMORY.md edits on two hosts: the merge is left for
// the person (both sides kept, markers, nothing chosen), status names the
// file, the daemon keeps projecting what agents append meanwhile, and once
// the person commits the resolution the exchange carries everything.
func TestManyHostsPersonsConflict(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	remote, h := twoHosts(t, "ann")
	memory := filepath.Join("agents", "ann", "memory", "MEMORY.md")
	for i, repo := range h {
		data, err := os.ReadFile(filepath.Join(repo, memory))
		if err != nil {
			t.Fatal(err)
		}
		edit := string(data) + "\nThe deploy day is " + []string{"Tuesday", "Thursday"}[i] + ".\n"
		if err := os.WriteFile(filepath.Join(repo, memory), []byte(edit), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"MEMSYNC_GRAPH=embedded"}
	dA := startDaemon(t, h[0], env)
	waitUntil(t, "host a pushed its edit", func() bool {
		return headOf(t, remote, "HEAD") == headOf(t, h[0], "HEAD") && gitOut(t, h[0], "status", "--porcelain", "--untracked-files=no") == ""
	})
	dB := startDaemon(t, h[1], env)
	waitUntil(t, "status on host b reports the conflict", func() bool {
		st := hostStatus(t, h[1], env)
		return st.Remote != nil && len(st.Remote.Conflicts) == 1 && st.Remote.Conflicts[0] == filepath.ToSlash(memory)
	})
	got, _ := os.ReadFile(filepath.Join(h[1], memory))
	if !strings.Contains(string(got), "Tuesday") || !strings.Contains(string(got), "Thursday") || !strings.Contains(string(got), "<<<<<<<") {
		t.Fatalf("MEMORY.md on host b lost a side or was resolved for the person:\n%s", got)
	}
	text := runCore(t, env, "status", "--repo", h[1])
	if !strings.Contains(text, "MERGE CONFLICT") || !strings.Contains(text, filepath.ToSlash(memory)) {
		t.Errorf("status does not show the conflict:\n%s", text)
	}
	// Journals keep flowing: an append on host b is projected meanwhile.
	uuid := strings.TrimSpace(runCore(t, env, "append", "--repo", h[1], "--agent", "ann", "--kind", "fact", "written during the conflict"))
	waitUntil(t, "the append projected during the conflict", func() bool {
		return strings.Contains(runCore(t, env, "show", uuid, "--repo", h[1], "--agent", "ann"), "written during the conflict") &&
			!strings.Contains(runCore(t, env, "show", uuid, "--repo", h[1], "--agent", "ann"), "not projected")
	})
	// The person resolves; both hosts end with the resolution and the record.
	if err := os.WriteFile(filepath.Join(h[1], memory), []byte("# ann\n\nThe deploy day is Tuesday or Thursday.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	person(t, h[1], "add", memory)
	person(t, h[1], "commit", "-q", "--no-edit")
	waitUntil(t, "host a has the resolution and the record", func() bool {
		data, _ := os.ReadFile(filepath.Join(h[0], memory))
		return strings.Contains(string(data), "Tuesday or Thursday") && strings.Contains(strings.Join(hostJournal(t, h[0]), "\n"), uuid)
	})
	if st := hostStatus(t, h[1], env); st.Remote == nil || len(st.Remote.Conflicts) != 0 {
		t.Errorf("status after the resolution: %+v", st.Remote)
	}
	dA.stop(t)
	dB.stop(t)
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runCore runs the binary and returns its stdout, failing on error.
func runCore(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO="), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("memsync %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// reconnect moves the remote cut off at away back to remote. A push in
// flight when the remote was moved away may have recreated remote: git
// receive-pack makes its quarantine (objects/tmp_objdir-incoming-*) by
// absolute path, after the move. Such a leftover is removed; anything
// else there fails the test (see quarantineOnly).
func reconnect(t *testing.T, away, remote string) {
	t.Helper()
	if _, err := os.Stat(remote); err == nil {
		if err := quarantineOnly(remote); err != nil {
			t.Fatalf("reconnecting the remote: %v", err)
		}
		if err := os.RemoveAll(remote); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(away, remote); err != nil {
		t.Fatal(err)
	}
}

// quarantineOnly says whether dir holds nothing but git receive-pack's
// quarantine directories, the only thing a push in flight writes into a
// remote moved away: nothing of memsync's should write there.
func quarantineOnly(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if rel == "." || (parts[0] == "objects" && (len(parts) == 1 || strings.HasPrefix(parts[1], "tmp_objdir-incoming-"))) {
			return nil
		}
		return fmt.Errorf("%s was written while the remote was away", rel)
	})
}

func TestQuarantineOnly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		ok    bool
	}{
		{"empty", nil, true},
		{"a push's quarantine", []string{"objects/tmp_objdir-incoming-X2AEJL/pack/pack-1.keep"}, true},
		{"a ref", []string{"refs/heads/main"}, false},
		{"an object", []string{"objects/ab/cdef"}, false},
		{"a config", []string{"config"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				path := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := quarantineOnly(dir); (err == nil) != tc.ok {
				t.Errorf("quarantineOnly(%v) = %v, want ok=%v", tc.files, err, tc.ok)
			}
		})
	}
}
