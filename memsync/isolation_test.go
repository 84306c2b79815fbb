package memsync_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// agentDisk fails every write under one agent's directory while on, the
// way a read-only sync/ of that agent does.
type agentDisk struct {
	memsync.Disk
	dir string
	on  atomic.Bool
}

func (d *agentDisk) fail(path string) error {
	if d.on.Load() && strings.HasPrefix(path, d.dir) {
		return fmt.Errorf("write %s: %w", path, syscall.EROFS)
	}
	return nil
}

func (d *agentDisk) WriteAtomic(path string, data []byte) error {
	if err := d.fail(path); err != nil {
		return err
	}
	return d.Disk.WriteAtomic(path, data)
}

func (d *agentDisk) Append(path string, data []byte) error {
	if err := d.fail(path); err != nil {
		return err
	}
	return d.Disk.Append(path, data)
}

func (d *agentDisk) Truncate(path string) error {
	if err := d.fail(path); err != nil {
		return err
	}
	return d.Disk.Truncate(path)
}

// TestOneAgentsSyncFaultStallsNoOther: while alice's sync files cannot be
// written, bob is projected and his cursors move; alice's cursors stay,
// the pass says why, and alice catches up once her files can be written.
// It used to pause every agent.
func TestOneAgentsSyncFaultStallsNoOther(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		layout := memsync.Layout{Root: r.root}
		disk := &agentDisk{Disk: memsync.OSDisk{}, dir: layout.SyncDir("alice")}
		e, err := memsync.New(memsync.Options{Root: r.root, Graph: r.g, Logger: zaptest.NewLogger(t), Disk: disk,
			BatchSize: 50, NewBackOff: func() backoffT { return fastBackOff() }})
		if err != nil {
			t.Fatal(err)
		}
		r.appendN("alice", 5)
		r.appendN("bob", 5)
		r.syncOnce(e)
		aliceState, _ := os.ReadFile(layout.StateFile("alice"))

		disk.on.Store(true)
		r.appendN("alice", 30)
		r.write("alice", "2026-11-20.jsonl", "not json\n")
		r.appendN("bob", 120) // more than two batches
		_, err = e.SyncOnce(context.Background())
		if !errors.Is(err, memsync.ErrPaused) || !strings.Contains(err.Error(), "alice") || strings.Contains(err.Error(), "bob") {
			t.Fatalf("pass with alice's sync files read-only: %v", err)
		}
		if now, _ := os.ReadFile(layout.StateFile("alice")); !bytes.Equal(now, aliceState) {
			t.Fatal("alice's state changed although it cannot be written")
		}
		st, err := memsync.Status(context.Background(), r.root, r.g, "test", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range st.Agents {
			if a.Agent == "bob" && (a.Projected != 125 || a.LagSeconds != 0) {
				t.Fatalf("bob stalled behind alice: %+v", a)
			}
			if a.Agent == "alice" && a.LagSeconds == 0 {
				t.Fatalf("alice's status hides her lag: %+v", a)
			}
		}
		disk.on.Store(false)
		r.syncOnce(e)
		r.mustVerify(160)
		if got := len(r.rejects("alice")); got != 1 {
			t.Fatalf("alice has %d rejects, want 1", got)
		}
	})
}

// TestTwoEnginesCountRejectsOnce: two processes projecting one repository
// (two daemons) may both record a bad line; status counts it once.
func TestTwoEnginesCountRejectsOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 3)
		e1, e2 := r.engine(), r.engine()
		r.syncOnce(e1)
		r.syncOnce(e2)
		r.write("alice", "2026-11-20.jsonl", "not json\n{\"nope\":1}\n"+
			`{"ts":"2026-11-20T10:00:00Z","agent":"mallory","kind":"fact","text":"impostor"}`+"\n")
		r.syncOnce(e1)
		r.syncOnce(e2) // its own cursors: it reads and rejects the same lines
		st, err := memsync.Status(context.Background(), r.root, r.g, "test", time.Now())
		if err != nil || st.Agents[0].Rejects != 3 {
			t.Fatalf("status: %+v, %v; want 3 rejects", st, err)
		}
		live, err := memsync.LiveRejects(memsync.Layout{Root: r.root}, "alice")
		if err != nil || len(live) != 3 {
			t.Fatalf("live rejects %+v, %v", live, err)
		}
	})
}

// TestStatusDistrustsCursorsOfAnEmptiedGraph: the graph emptied under
// cursors that say everything was projected (wiped, store deleted) is not
// "caught up": every record waits until it is projected again.
func TestStatusDistrustsCursorsOfAnEmptiedGraph(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.appendN("alice", 4)
		r.syncOnce(r.engine())
		if err := r.g.Drop(context.Background()); err != nil {
			t.Fatal(err)
		}
		st, err := memsync.Status(context.Background(), r.root, r.g, "test", time.Now().Add(time.Minute))
		if err != nil || st.Agents[0].Projected != 0 || st.Agents[0].LagSeconds < 60 {
			t.Fatalf("status of an emptied graph: %+v, %v", st, err)
		}
	})
}

// FuzzLocateLine: the offset a graph-found reject is given for a line
// number is where the journal reader found that line.
func FuzzLocateLine(f *testing.F) {
	f.Add([]byte("a\n\nb\r\nccc\n"), 3)
	f.Add([]byte("{\"x\":1}\nno newline"), 2)
	f.Fuzz(func(t *testing.T, data []byte, line int) {
		if line < 1 || line > 1000 {
			return
		}
		path := t.TempDir() + "/j.jsonl"
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := journal.NewReader(bytes.NewReader(data), 0, 0)
		for {
			l, err := r.Next()
			if err != nil {
				return
			}
			if l.Number != line {
				continue
			}
			off, digest, err := memsync.LocateLine(path, line)
			f2, _ := os.Open(path)
			defer f2.Close()
			want, _ := memsync.LineDigest(f2, l.Offset)
			if err != nil || off != l.Offset || digest != want {
				t.Fatalf("LocateLine(%d) = %d %s %v; the reader found it at %d (%s)", line, off, digest, err, l.Offset, want)
			}
			return
		}
	})
}

// TestRebuildResetsAndSavesEveryAgent: a rebuild resets and then saves the
// sync files of many agents at once (inParallel); every one ends at the end
// of its journals, so the next pass reads nothing. When one agent's sync
// files cannot be written, the rebuild stops before projecting and names
// that agent's file, and a rebuild once they can be written projects all.
func TestRebuildResetsAndSavesEveryAgent(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		layout := memsync.Layout{Root: r.root}
		const agents = 37 // more than stateWriters, not a multiple of it
		for i := range agents {
			r.appendN(fmt.Sprintf("agent-%02d", i), 3)
		}
		disk := &agentDisk{Disk: memsync.OSDisk{}, dir: layout.SyncDir("agent-29")}
		e, err := memsync.New(memsync.Options{Root: r.root, Graph: r.g, Logger: zaptest.NewLogger(t), Disk: disk,
			BatchSize: 50, NewBackOff: func() backoffT { return fastBackOff() }})
		if err != nil {
			t.Fatal(err)
		}
		disk.on.Store(true)
		if _, err := e.Rebuild(context.Background(), nil); err == nil || !strings.Contains(err.Error(), layout.SyncDir("agent-29")) {
			t.Fatalf("rebuild with agent-29's sync files read-only: %v", err)
		}
		disk.on.Store(false)
		rep, err := e.Rebuild(context.Background(), nil)
		if err != nil || rep.Projected != 3*agents {
			t.Fatalf("rebuild = %+v, %v", rep, err)
		}
		for i := range agents {
			if _, err := os.Stat(layout.StateFile(fmt.Sprintf("agent-%02d", i))); err != nil {
				t.Fatal(err)
			}
		}
		if pass := r.syncOnce(e); pass.Projected != 0 {
			t.Fatalf("the pass after the rebuild projected %d records: some cursors were not saved", pass.Projected)
		}
		r.mustVerify(3 * agents)
	})
}
