package memsync_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// rig is a memory repository in a temp dir, a graph that can be cut off,
// and a disk that can fill up. Each engine() is a fresh process's view.
type rig struct {
	t    *testing.T
	root string
	g    *memsynctest.Switch
	disk *memsynctest.FullDisk
}

func newRig(t *testing.T, g memsync.Graph) *rig {
	return &rig{t: t, root: t.TempDir(), g: &memsynctest.Switch{Graph: g}, disk: &memsynctest.FullDisk{Real: memsync.OSDisk{}}}
}

func (r *rig) engine() *memsync.Engine { return r.engineOn(r.g) }

// engineOn is engine with g for the graph (one that wraps r.g, say).
func (r *rig) engineOn(g memsync.Graph) *memsync.Engine {
	e, err := memsync.New(memsync.Options{
		Root: r.root, Graph: g, Logger: zaptest.NewLogger(r.t), Disk: r.disk, BatchSize: 50,
		PollInterval: 50 * time.Millisecond, BatchWindow: 5 * time.Millisecond,
		NewBackOff: func() backoffT { return fastBackOff() },
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return e
}

func (r *rig) path(agent, name string) string {
	return filepath.Join(memsync.Layout{Root: r.root}.JournalDir(agent), name)
}

// write appends raw bytes to a journal file, as a tool writing lines directly would.
func (r *rig) write(agent, name, data string) {
	r.t.Helper()
	p := r.path(agent, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		r.t.Fatal(err)
	}
}

func line(uuid, agent, text string) string { return lineAt(uuid, agent, text, "2026-11-20T10:00:00Z") }

// lineAt is line with another ts.
func lineAt(uuid, agent, text, ts string) string {
	return fmt.Sprintf(`{"uuid":%q,"ts":%q,"agent":%q,"kind":"fact","text":%q}`+"\n", uuid, ts, agent, text)
}

// appendN appends n records through journal.Append and returns their uuids.
func (r *rig) appendN(agent string, n int) []string {
	r.t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		rec := journal.Record{Agent: agent, Kind: journal.KindObservation, Text: fmt.Sprintf("%s observed thing %d", agent, i)}
		if _, err := journal.Append(memsync.Layout{Root: r.root}.JournalDir(agent), &rec, journal.AppendOptions{NoSync: true}); err != nil {
			r.t.Fatal(err)
		}
		ids = append(ids, rec.UUID)
	}
	return ids
}

func (r *rig) syncOnce(e *memsync.Engine) memsync.PassReport {
	r.t.Helper()
	rep, err := e.SyncOnce(context.Background())
	if err != nil {
		r.t.Fatalf("SyncOnce: %v", err)
	}
	return rep
}

func (r *rig) verify() memsync.VerifyReport {
	r.t.Helper()
	rep, err := memsync.Verify(context.Background(), r.root, r.g)
	if err != nil {
		r.t.Fatalf("Verify: %v", err)
	}
	return rep
}

func (r *rig) mustVerify(wantRecords int) {
	r.t.Helper()
	rep := r.verify()
	if !rep.OK || rep.JournalRecords != wantRecords || rep.GraphRecords != wantRecords {
		r.t.Fatalf("verify = %+v, want ok with %d records", rep, wantRecords)
	}
}

func (r *rig) rejects(agent string) []memsync.Reject {
	r.t.Helper()
	rs, err := memsync.ReadRejects(memsync.Layout{Root: r.root}.RejectsFile(agent))
	if err != nil {
		r.t.Fatal(err)
	}
	return rs
}

// eachBackend runs fn against every backend the engine is tested on.
func eachBackend(t *testing.T, fn func(t *testing.T, r *rig)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { fn(t, newRig(t, b.open(t))) })
	}
}

type backend struct {
	name string
	open func(t *testing.T) memsync.Graph
}

var backends = []backend{
	{"fake", func(*testing.T) memsync.Graph { return memsynctest.NewGraph() }},
	{"embedded", func(t *testing.T) memsync.Graph {
		g, err := embedded.Open(t.TempDir(), zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}},
	{"neo4j", func(t *testing.T) memsync.Graph { return neo4jtest.Open(t) }},
}

func TestSyncOnceIsIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 120)
		r.appendN("bob", 30)
		e := r.engine()
		if rep := r.syncOnce(e); rep.Projected != 150 {
			t.Fatalf("first pass projected %d, want 150", rep.Projected)
		}
		if rep := r.syncOnce(e); rep.Projected != 0 {
			t.Fatalf("second pass projected %d, want 0", rep.Projected)
		}
		// A restarted engine resumes from its cursors.
		if rep := r.syncOnce(r.engine()); rep.Projected != 0 {
			t.Fatalf("restart projected %d, want 0", rep.Projected)
		}
		r.mustVerify(150)
	})
}

func TestTornLineWaitsForItsNewline(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		full := line("torn1", "alice", "a line written in two halves")
		r.write("alice", "2026-11-20.jsonl", line("t0", "alice", "before"))
		r.write("alice", "2026-11-20.jsonl", full[:25])
		if rep := r.syncOnce(r.engine()); rep.Projected != 1 || rep.Rejected != 0 {
			t.Fatalf("with a torn tail: %+v, want 1 projected, 0 rejected", rep)
		}
		// The engine is killed; the writer finishes the line.
		r.write("alice", "2026-11-20.jsonl", full[25:])
		if rep := r.syncOnce(r.engine()); rep.Projected != 1 || rep.Rejected != 0 {
			t.Fatalf("after the rest: %+v, want exactly the one record", rep)
		}
		r.mustVerify(2)
	})
}

func TestRewrittenJournalsAreReadAgain(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		var a, b strings.Builder
		for i := 0; i < 40; i++ {
			a.WriteString(line(fmt.Sprintf("a%02d", i), "alice", fmt.Sprintf("alice fact %d", i)))
			b.WriteString(line(fmt.Sprintf("b%02d", i), "alice", fmt.Sprintf("bob-file fact %d", i)))
		}
		r.write("alice", "2026-11-20.jsonl", a.String())
		r.write("alice", "2026-11-21.jsonl", b.String())
		r.syncOnce(r.engine())
		r.mustVerify(80)

		// While memsync is stopped: one journal is truncated, the other is
		// rewritten with the same first line and a larger size.
		trunc := strings.SplitAfter(a.String(), "\n")[:10]
		if err := os.WriteFile(r.path("alice", "2026-11-20.jsonl"), []byte(strings.Join(trunc, "")+line("a_new", "alice", "after truncation")), 0o644); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(b.String(), "\n")
		var rw strings.Builder
		rw.WriteString(lines[0])
		for i := 0; i < 60; i++ {
			rw.WriteString(line(fmt.Sprintf("r%02d", i), "alice", fmt.Sprintf("rewritten fact %d", i)))
		}
		if err := os.WriteFile(r.path("alice", "2026-11-21.jsonl"), []byte(rw.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		r.syncOnce(r.engine())
		rep := r.verify()
		// The graph keeps what it had (git history has it); every line now in
		// the journals is projected exactly once.
		if rep.Missing != 0 || rep.Different != 0 || rep.JournalRecords != 11+61 {
			t.Fatalf("after rewrite: %+v", rep)
		}
		st, err := r.g.Stats(context.Background())
		if err != nil || st.Memories != 80+1+60 {
			t.Fatalf("graph holds %d, want %d (each record once)", st.Memories, 80+1+60)
		}
	})
}

func TestBadInputIsRejectedAndCounted(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		bad := []struct{ text, reason string }{
			{`not json at all` + "\n", "not a JSON object"},
			{`{"ts":"2026-11-20T10:00:00Z","agent":"alice","kind":"fact"}` + "\n", `"text"`},
			{`{"ts":"yesterday","agent":"alice","kind":"fact","text":"x"}` + "\n", `"ts"`},
			{`{"ts":"2026-11-20T10:00:00Z","agent":"alice","kind":"gossip","text":"x"}` + "\n", `"kind"`},
			{`{"ts":"2026-11-20T10:00:00Z","agent":"alice","kind":"fact","scope":"public","text":"x"}` + "\n", `"scope"`},
			{"{\"ts\":\"2026-11-20T10:00:00Z\",\"agent\":\"alice\",\"kind\":\"fact\",\"text\":\"\xff\xfe\"}\n", "UTF-8"},
			{`{"ts":"2026-11-20T10:00:00Z","agent":"mallory","kind":"fact","text":"impostor"}` + "\n", "cannot write in alice's journal"},
			{lineAt("dup", "alice", "second version", "2026-11-20T11:00:00Z"), "different content"}, // later ts: loses
			{`{"ts":"2026-11-20T10:00:00Z","agent":"alice","kind":"fact","text":"` + strings.Repeat("x", journal.MaxLineBytes) + `"}` + "\n", "1 MiB"},
		}
		r.write("alice", "2026-11-20.jsonl", line("ok1", "alice", "fine")+line("dup", "alice", "first version")+"\n\r\n")
		for _, b := range bad {
			r.write("alice", "2026-11-20.jsonl", b.text)
		}
		r.write("alice", "2026-11-20.jsonl", line("ok2", "alice", "still fine after the bad lines"))
		e := r.engine()
		rep := r.syncOnce(e)
		if rep.Rejected != len(bad) {
			t.Fatalf("rejected %d, want %d", rep.Rejected, len(bad))
		}
		byLine := map[int]memsync.Reject{}
		for _, rj := range r.rejects("alice") {
			byLine[rj.Line] = rj
		}
		for i, b := range bad {
			rj, ok := byLine[i+5]
			if !ok || !strings.Contains(rj.Reason, b.reason) || rj.File != "agents/alice/memory/journal/2026-11-20.jsonl" {
				t.Fatalf("line %d: reject %+v, want reason containing %q", i+5, rj, b.reason)
			}
		}
		// Every line is accounted for, and the clash keeps verify from
		// saying ok while the journals hold it.
		if v := r.verify(); v.OK || v.Conflicts != 1 || v.Lines != 3+len(bad) || v.Projected != 3 || v.Rejected != len(bad) ||
			v.Unaccounted != 0 || v.Missing != 0 || v.Different != 0 || v.Extra != 0 || !slices.Equal(v.ConflictUUIDs, []string{"dup"}) {
			t.Fatalf("verify = %+v, want 1 conflict, %d lines: 3 projected, %d rejected", v, 3+len(bad), len(bad))
		}
		if n := get(t, r.g, "dup"); n.Text != "first version" {
			t.Fatalf("dup = %q: the version with the later ts must not win", n.Text)
		}
		// Reading everything again (a lost state file) records no reject twice.
		os.Remove(memsync.Layout{Root: r.root}.StateFile("alice"))
		r.syncOnce(r.engine())
		if got := len(r.rejects("alice")); got != len(bad) {
			t.Fatalf("after re-read: %d rejects, want %d", got, len(bad))
		}
		st, err := memsync.Status(context.Background(), r.root, r.g, "test", time.Now())
		if err != nil || len(st.Agents) != 1 || st.Agents[0].Rejects != len(bad) || st.Agents[0].Projected != 3 ||
			st.Agents[0].JournalRecords != 3+1 || st.Agents[0].LagSeconds != 0 {
			// journal_records counts valid lines the agent owns: ok1, dup, dup(v2), ok2
			t.Fatalf("status = %+v, %v", st, err)
		}
	})
}

func get(t *testing.T, g memsync.Graph, uuid string) memsync.Node {
	t.Helper()
	m, err := g.Get(context.Background(), []string{uuid})
	if err != nil || len(m) != 1 {
		t.Fatalf("Get(%s) = %v, %v", uuid, m, err)
	}
	return m[uuid]
}

func TestGraphDownQueuesToOutboxAndDrains(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 20)
		e := r.engine()
		r.syncOnce(e)
		r.g.SetDown(true)
		r.appendN("alice", 300)
		r.appendN("bob", 100)
		rep, err := e.SyncOnce(context.Background())
		if !errors.Is(err, memsync.ErrPaused) || rep.Queued != 400 || rep.Pending != 400 {
			t.Fatalf("graph down: %+v, %v; want 400 queued and ErrPaused", rep, err)
		}
		st, _ := memsync.Status(context.Background(), r.root, r.g, "test", time.Now())
		if st.Graph.Reachable || st.Agents[0].Outbox != 300 || st.Agents[1].Outbox != 100 {
			t.Fatalf("status while down = %+v", st)
		}
		// A restart while down keeps the outbox and queues nothing twice.
		e = r.engine()
		if rep, _ := e.SyncOnce(context.Background()); rep.Queued != 0 {
			t.Fatalf("restart re-queued %d", rep.Queued)
		}
		r.appendN("alice", 5)
		r.g.SetDown(false)
		rep = r.syncOnce(e)
		if rep.Pending != 0 {
			t.Fatalf("after recovery %+v, want an empty outbox", rep)
		}
		r.mustVerify(425)
		if fi, err := os.Stat(memsync.Layout{Root: r.root}.OutboxFile("alice")); err != nil || fi.Size() != 0 {
			t.Fatalf("outbox not emptied: %v %v", fi, err)
		}
	})
}

func TestDiskFullPausesWithoutCorruption(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 30)
		e := r.engine()
		r.syncOnce(e)
		stateBefore, _ := os.ReadFile(memsync.Layout{Root: r.root}.StateFile("alice"))
		r.disk.SetFull(true)
		r.appendN("alice", 30)
		rep, err := e.SyncOnce(context.Background())
		if !errors.Is(err, memsync.ErrPaused) || !strings.Contains(err.Error(), "cannot write sync files") {
			t.Fatalf("disk full: %+v, %v", rep, err)
		}
		if after, _ := os.ReadFile(memsync.Layout{Root: r.root}.StateFile("alice")); string(after) != string(stateBefore) {
			t.Fatal("a failed state write changed the state file")
		}
		// And with the graph down too, the outbox write fails cleanly.
		r.g.SetDown(true)
		if _, err := e.SyncOnce(context.Background()); !errors.Is(err, memsync.ErrPaused) {
			t.Fatalf("disk full + graph down: %v", err)
		}
		if fi, err := os.Stat(memsync.Layout{Root: r.root}.OutboxFile("alice")); err == nil && fi.Size() != 0 {
			t.Fatalf("outbox has %d bytes from a failed write", fi.Size())
		}
		r.g.SetDown(false)
		r.disk.SetFull(false)
		r.syncOnce(e)
		r.mustVerify(60)
	})
}

func TestCorruptStateIsKeptAsideAndJournalsReread(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 10)
		r.syncOnce(r.engine())
		l := memsync.Layout{Root: r.root}
		if err := os.WriteFile(l.StateFile("alice"), []byte(`{"version":1,"files":{"x":{"offset":-5}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		r.appendN("alice", 5)
		r.syncOnce(r.engine())
		r.mustVerify(15)
		aside, _ := filepath.Glob(l.StateFile("alice") + ".corrupt-*")
		if len(aside) != 1 {
			t.Fatalf("corrupt state kept aside as %v", aside)
		}
	})
}

func TestNewGraphTargetReprojectsEverything(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.appendN("alice", 10)
	r.syncOnce(r.engine())
	fresh := memsynctest.NewGraph()
	fresh.ID = "fake:2"
	r.g = &memsynctest.Switch{Graph: fresh}
	if rep := r.syncOnce(r.engine()); rep.Projected != 10 {
		t.Fatalf("new target got %d, want all 10", rep.Projected)
	}
	r.mustVerify(10)
}

func TestRunTailsNewAgentsAndStopsCleanly(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 5)
		e := r.engine()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		waitFor(t, func() bool { return count(r.g) == 5 })
		r.appendN("alice", 7)
		r.appendN("zed", 3) // an agent that appears while running
		waitFor(t, func() bool { return count(r.g) == 15 })
		r.g.SetDown(true)
		r.appendN("zed", 4)
		waitFor(t, func() bool {
			st, _ := memsync.Status(context.Background(), r.root, r.g, "t", time.Now())
			return len(st.Agents) == 2 && st.Agents[1].Outbox == 4
		})
		r.g.SetDown(false)
		waitFor(t, func() bool { return count(r.g) == 19 })
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not stop within 10s")
		}
		r.mustVerify(19)
	})
}

func count(g memsync.Graph) int {
	st, err := g.Stats(context.Background())
	if err != nil {
		return -1
	}
	return st.Memories
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRebuildFromJournalsAndExtraSource(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 40)
		r.appendN("bob", 25)
		r.syncOnce(r.engine())
		if err := r.g.Drop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rep := r.verify(); rep.Missing != 65 {
			t.Fatalf("after wipe: %+v", rep)
		}
		histOnly := memsync.Memory{Record: journal.Record{UUID: "old_only", TS: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Agent: "alice", Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: "only in git history"},
			Path: "agents/alice/memory/journal/2026-01-01.jsonl", Line: 1}
		extra := func(ctx context.Context, yield func(memsync.Memory) error) error {
			if err := yield(histOnly); err != nil {
				return err
			}
			return nil
		}
		e := r.engine()
		rep, err := e.Rebuild(context.Background(), extra)
		if err != nil || rep.Projected != 65 || rep.SourceAdded != 1 {
			t.Fatalf("Rebuild = %+v, %v", rep, err)
		}
		if st, _ := r.g.Stats(context.Background()); st.Memories != 66 {
			t.Fatalf("graph holds %d, want 66", st.Memories)
		}
		// Cursors stand at the end: the next pass has nothing to do.
		if rep := r.syncOnce(r.engine()); rep.Projected != 0 {
			t.Fatalf("after rebuild a pass projected %d", rep.Projected)
		}
	})
}

func TestWipedGraphIsRefilledWithoutRebuild(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 12)
		r.syncOnce(r.engine())
		if err := r.g.Drop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rep := r.syncOnce(r.engine()); rep.Projected != 12 {
			t.Fatalf("after a wipe the next start projected %d, want 12", rep.Projected)
		}
		r.mustVerify(12)
	})
}

// A pass stopped between two batches of a file that no longer grows must
// leave a cursor that the next start does not mistake for "unchanged".
func TestStopBetweenBatchesResumes(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 180)
		ctx, cancel := context.WithCancel(context.Background())
		e, err := memsync.New(memsync.Options{Root: r.root, Graph: r.g, BatchSize: 50,
			Progress: func(int) { cancel() }})
		if err != nil {
			t.Fatal(err)
		}
		e.SyncOnce(ctx)
		if n := count(r.g); n != 50 {
			t.Fatalf("stopped pass projected %d, want one batch of 50", n)
		}
		r.syncOnce(r.engine())
		r.mustVerify(180)
	})
}
