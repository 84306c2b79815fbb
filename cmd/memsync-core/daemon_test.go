package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/cache"
	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// memsyncBinary is the installed pair (front and core, see buildBinary):
// the daemon runs as memsync-core after the front's exec, as it does under
// a service manager.
func memsyncBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// daemonBackend is a graph the daemon process is pointed at, and an
// in-process handle on the same graph to check what it holds.
type daemonBackend struct {
	name string
	// setup returns the environment for the daemon and a graph handle for
	// the test; the handle for embedded is opened only after the daemon
	// wrote, via open.
	setup func(t *testing.T, repo string) (env []string, open func() core.Graph)
}

var daemonBackends = []daemonBackend{
	{"embedded", func(t *testing.T, repo string) ([]string, func() core.Graph) {
		return []string{"MEMSYNC_GRAPH=embedded"}, func() core.Graph {
			g, err := embedded.Open(filepath.Join(repo, ".memsync"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			return g
		}
	}},
	{"neo4j", func(t *testing.T, repo string) ([]string, func() core.Graph) {
		g := neo4jtest.Open(t) // holds the server for this test, empty
		return []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=" + os.Getenv("MEMSYNC_NEO4J_URI")},
			func() core.Graph { return g }
	}},
}

// daemon is one `memsync run` process.
type daemon struct {
	cmd    *exec.Cmd
	stderr *lockedWriter
	done   chan error
}

func startDaemon(t *testing.T, repo string, env []string) *daemon {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), "run", "--repo", repo, "--no-compact") // compaction has its own tests
	cmd.Env = append(append(os.Environ(), env...), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=")
	cmd.Env = append(cmd.Env, env...) // last one wins
	d := &daemon{cmd: cmd, stderr: &lockedWriter{w: &bytes.Buffer{}}, done: make(chan error, 1)}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

// String is everything written so far.
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (d *daemon) kill(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

// stop sends SIGTERM and returns how long the daemon took and its error.
func (d *daemon) stop(t *testing.T) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		return time.Since(start), err
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		t.Fatalf("daemon ignored SIGTERM for 20s; log:\n%s", d.stderr)
		return 0, nil
	}
}

func newRepo(t *testing.T, agents ...string) string {
	t.Helper()
	repo := t.TempDir()
	args := []string{"init", "--repo", repo}
	for _, a := range agents {
		args = append(args, "--agent", a)
	}
	if out, err := exec.Command(memsyncBinary(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("memsync init: %v\n%s", err, out)
	}
	return repo
}

func appendRecords(t *testing.T, repo, agent string, n int, pace time.Duration) {
	t.Helper()
	dir := core.Layout{Root: repo}.JournalDir(agent)
	for i := 0; i < n; i++ {
		rec := journal.Record{Agent: agent, Kind: journal.KindObservation, Text: fmt.Sprintf("%s saw event %d #crash", agent, i)}
		if i%7 == 0 {
			rec.Scope = journal.ScopeShared
		}
		if _, err := journal.Append(dir, &rec, journal.AppendOptions{NoSync: true}); err != nil {
			t.Error(err)
			return
		}
		if pace > 0 && i%50 == 0 {
			time.Sleep(pace)
		}
	}
}

func verifyGraph(t *testing.T, repo string, g core.Graph) core.VerifyReport {
	t.Helper()
	rep, err := core.Verify(context.Background(), repo, g)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

// waitClean waits until the graph holds exactly the journals' records.
func waitClean(t *testing.T, repo string, g core.Graph, want int, d *daemon) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		rep := verifyGraph(t, repo, g)
		if rep.OK && rep.JournalRecords == want {
			return
		}
		if time.Now().After(deadline) {
			if keep := os.Getenv("MEMSYNC_KEEP_FAILED"); keep != "" {
				exec.Command("cp", "-a", repo, keep).Run()
			}
			t.Fatalf("not clean after 3 minutes: %+v\nlog tail:\n%s", rep, tail(d.stderr.String(), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestDaemonSurvivesKill9 kills the daemon with SIGKILL at 50 random moments
// while several agents append 20,000 records; after a final restart every
// record is in the graph exactly once.
func TestDaemonSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 50 kill -9 restarts")
	}
	for _, b := range daemonBackends {
		t.Run(b.name, func(t *testing.T) {
			agents := []string{"ant", "bee", "cat", "dog"}
			repo := newRepo(t, agents...)
			env, open := b.setup(t, repo)
			const perAgent = 5000
			var wg sync.WaitGroup
			for _, a := range agents {
				wg.Add(1)
				go func() { defer wg.Done(); appendRecords(t, repo, a, perAgent, 2*time.Millisecond) }()
			}
			rng := rand.New(rand.NewSource(42))
			var d *daemon
			for i := 0; i < 50; i++ {
				d = startDaemon(t, repo, env)
				time.Sleep(time.Duration(30+rng.Intn(400)) * time.Millisecond)
				d.kill(t)
			}
			wg.Wait()
			d = startDaemon(t, repo, env)
			g := open()
			waitClean(t, repo, g, len(agents)*perAgent, d)
			if took, err := d.stop(t); err != nil || took > 10*time.Second {
				t.Fatalf("SIGTERM: exit %v after %v", err, took)
			}
			st, err := g.Stats(context.Background())
			if err != nil || st.Memories != len(agents)*perAgent {
				t.Fatalf("graph holds %d memories (%v), want %d exactly once", st.Memories, err, len(agents)*perAgent)
			}
			// And searchable exactly once: every record is tagged #crash
			// (on the embedded store the full-text index is written after
			// the memories, by its own goroutine, and was killed too).
			groups := []string{journal.SharedGroup}
			for _, a := range agents {
				groups = append(groups, journal.PrivateGroup(a))
			}
			hits, err := read.Search(context.Background(), g, core.SearchQuery{Text: "crash", Groups: groups, All: true, Limit: 2 * len(agents) * perAgent})
			seen := map[string]bool{}
			for _, h := range hits {
				seen[h.UUID] = true
			}
			if err != nil || len(hits) != len(agents)*perAgent || len(seen) != len(hits) {
				t.Fatalf("search found %d hits, %d distinct (%v); want each of the %d records once", len(hits), len(seen), err, len(agents)*perAgent)
			}
		})
	}
}

// TestDaemonTornLineAcrossKill writes half a line, kills the daemon, writes
// the rest: exactly one record, no reject.
func TestDaemonTornLineAcrossKill(t *testing.T) {
	for _, b := range daemonBackends {
		t.Run(b.name, func(t *testing.T) {
			repo := newRepo(t, "ant")
			env, open := b.setup(t, repo)
			path := filepath.Join(core.Layout{Root: repo}.JournalDir("ant"), "2026-11-21.jsonl")
			line := `{"uuid":"torn-1","ts":"2026-11-21T10:00:00Z","agent":"ant","kind":"fact","text":"half and half"}` + "\n"
			if err := os.WriteFile(path, []byte(line[:30]), 0o644); err != nil {
				t.Fatal(err)
			}
			d := startDaemon(t, repo, env)
			time.Sleep(700 * time.Millisecond)
			d.kill(t)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(line[30:])
			f.Close()
			d = startDaemon(t, repo, env)
			g := open()
			waitClean(t, repo, g, 1, d)
			d.stop(t)
			rejects, _ := core.ReadRejects(core.Layout{Root: repo}.RejectsFile("ant"))
			if len(rejects) != 0 {
				t.Fatalf("rejects: %+v", rejects)
			}
		})
	}
}

// TestDaemonSignals: SIGHUP reloads and the daemon goes on; SIGTERM exits 0
// within 10 s with cursors persisted.
func TestDaemonSignals(t *testing.T) {
	repo := newRepo(t, "ant")
	env := []string{"MEMSYNC_GRAPH=embedded", "MEMSYNC_NEO4J_PASSWORD=hunter2-never-logged"}
	d := startDaemon(t, repo, env)
	appendRecords(t, repo, "ant", 100, 0)
	time.Sleep(500 * time.Millisecond)
	d.cmd.Process.Signal(syscall.SIGHUP)
	appendRecords(t, repo, "ant", 100, 0)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := core.LoadState(core.Layout{Root: repo}.StateFile("ant"))
		if err == nil {
			total := int64(0)
			for _, c := range st.Files {
				total += c.Offset
			}
			fi, _ := os.Stat(filepath.Join(core.Layout{Root: repo}.JournalDir("ant"), journal.FileName(time.Now())))
			if fi != nil && total == fi.Size() {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cursors never reached the end; log:\n%s", d.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	took, err := d.stop(t)
	if err != nil || took > 10*time.Second {
		t.Fatalf("SIGTERM: %v after %v", err, took)
	}
	log := d.stderr.String()
	if !strings.Contains(log, "reloading configuration") || strings.Count(log, "memsync starting") != 2 {
		t.Errorf("SIGHUP did not reload:\n%s", log)
	}
	facts, err := os.ReadFile(filepath.Join(core.Layout{Root: repo}.CacheDir("ant"), "GRAPHITI_FACTS.md"))
	if err != nil || !bytes.Contains(facts, []byte("#crash")) {
		t.Errorf("the daemon did not write the cache snapshot: %v\n%s", err, facts)
	}
	// The final auto-commit on shutdown recorded the journal, not sync/.
	files, err := exec.Command("git", "-C", repo, "ls-files").CombinedOutput()
	if err != nil || !strings.Contains(string(files), "agents/ant/memory/journal/") || strings.Contains(string(files), "/sync/") {
		t.Errorf("git ls-files after the daemon: %v\n%s", err, files)
	}
	if strings.Contains(log, "hunter2") {
		t.Fatalf("the Neo4j password reached the log:\n%s", log)
	}
	g, err := embedded.Open(filepath.Join(repo, ".memsync"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if rep := verifyGraph(t, repo, g); !rep.OK || rep.GraphRecords != 200 {
		t.Fatalf("verify: %+v", rep)
	}
}

// TestDaemonNeo4jDown stops a real Neo4j while 10,000 records are
// appended: they wait in the outbox, and when Neo4j comes back they drain by
// themselves and verify is clean. The server is the test's own, on a port
// of its own (scripts/neo4j with its own MEMSYNC_NEO4J_HOME, reusing the
// shared server's build): the server other tests and people use is never
// stopped.
func TestDaemonNeo4jDown(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts, stops and restarts a Neo4j of its own")
	}
	neo4jtest.Config(t) // skips (or fails, MEMSYNC_REQUIRE_NEO4J=1) where Neo4j tests do not run
	srv := startOwnNeo4j(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g, err := neo4j.Open(ctx, neo4j.Config{URI: srv.uri}, zap.NewNop())
	if err != nil {
		t.Fatalf("open the test's own neo4j: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	agents := []string{"ant", "bee", "cat", "dog"}
	repo := newRepo(t, agents...)
	d := startDaemon(t, repo, []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=" + srv.uri})
	appendRecords(t, repo, "ant", 100, 0)
	waitClean(t, repo, g, 100, d)

	srv.script(t, "stop")
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() { defer wg.Done(); appendRecords(t, repo, a, 2500, time.Millisecond) }()
	}
	wg.Wait()
	// Until the daemon knows the graph is down, each graph call it makes
	// (the first pass's promotion check, the generation, a snapshot walk)
	// waits out the driver's 30 s retry time, one after another: on a
	// loaded host (CI beside other jobs) the queueing starts 1.5-2 minutes
	// in. What is asserted is that every record is queued, not how fast.
	deadline := time.Now().Add(4 * time.Minute)
	for {
		st, err := core.Status(context.Background(), repo, unreachable{err: core.ErrUnavailable}, "neo4j", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		queued := 0
		for _, a := range st.Agents {
			queued += a.Outbox
		}
		if queued == 10000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox holds %d of 10000 while Neo4j is down; log:\n%s", queued, tail(d.stderr.String(), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(d.stderr.String(), "graph unavailable") {
		t.Errorf("the daemon did not say the graph is unavailable:\n%s", tail(d.stderr.String(), 2000))
	}
	srv.script(t, "start")
	waitClean(t, repo, g, 10100, d)
	if took, err := d.stop(t); err != nil || took > 10*time.Second {
		t.Fatalf("SIGTERM: %v after %v", err, took)
	}
	for _, a := range agents {
		if fi, err := os.Stat(core.Layout{Root: repo}.OutboxFile(a)); err == nil && fi.Size() != 0 {
			t.Errorf("%s: outbox still holds %d bytes", a, fi.Size())
		}
	}
}

// ownNeo4j is a Neo4j server a test started for itself with scripts/neo4j.
type ownNeo4j struct {
	uri string
	env []string // selects this server for scripts/neo4j
}

// startOwnNeo4j starts a small Neo4j on a free port with a home (data, log,
// pid file) under the test's temporary directory and the shared server's
// builds, so it starts without building; it is stopped when the test ends.
func startOwnNeo4j(t *testing.T) *ownNeo4j {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	builds := os.Getenv("MEMSYNC_NEO4J_BUILD_DIR")
	if builds == "" {
		home := os.Getenv("MEMSYNC_NEO4J_HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				t.Fatal(err)
			}
			home = filepath.Join(h, ".cache", "memsync-neo4j")
		}
		builds = filepath.Join(home, "build")
	}
	s := &ownNeo4j{uri: fmt.Sprintf("bolt://127.0.0.1:%d", port), env: []string{
		"MEMSYNC_NEO4J_HOME=" + filepath.Join(t.TempDir(), "neo4j"),
		"MEMSYNC_NEO4J_PORT=" + strconv.Itoa(port),
		"MEMSYNC_NEO4J_BUILD_DIR=" + builds,
		"MEMSYNC_NEO4J_HEAP=512m", "MEMSYNC_NEO4J_PAGECACHE=256m",
	}}
	t.Cleanup(func() { s.script(t, "stop") }) // before the temporary directory goes
	s.script(t, "start")
	return s
}

// script runs scripts/neo4j verb on this server only.
func (s *ownNeo4j) script(t *testing.T, verb string) {
	t.Helper()
	cmd := exec.Command("../../scripts/neo4j", verb)
	cmd.Env = append(os.Environ(), s.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/neo4j %s (own server %s): %v\n%s", verb, s.uri, err, out)
	}
}

// TestDaemonSnapshotRewrittenOnStart: snapshots are written without fsync,
// so a crash may leave one stale, empty or missing; the next daemon
// rewrites it on start even when there is nothing new to project.
func TestDaemonSnapshotRewrittenOnStart(t *testing.T) {
	for _, damage := range []struct {
		name string
		do   func(path string) error
	}{
		{"stale", func(p string) error { return os.WriteFile(p, []byte("# an older snapshot\n"), 0o644) }},
		{"empty", func(p string) error { return os.WriteFile(p, nil, 0o644) }},
		{"missing", os.Remove},
	} {
		t.Run(damage.name, func(t *testing.T) {
			repo := newRepo(t, "ant")
			env := []string{"MEMSYNC_GRAPH=embedded"}
			facts := filepath.Join(core.Layout{Root: repo}.CacheDir("ant"), cache.FactsFile)
			appendRecords(t, repo, "ant", 8, 0)
			d := startDaemon(t, repo, env)
			var want []byte
			waitSnapshot := func() {
				deadline := time.Now().Add(30 * time.Second)
				for {
					data, _ := os.ReadFile(facts)
					if bytes.Contains(data, []byte("Current memories: 8")) && (want == nil || bytes.Equal(data, want)) {
						want = data
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("snapshot not (re)written; holds %q", data)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			waitSnapshot()
			d.stop(t)
			if err := damage.do(facts); err != nil {
				t.Fatal(err)
			}
			d = startDaemon(t, repo, env)
			waitSnapshot()
			d.stop(t)
		})
	}
}
