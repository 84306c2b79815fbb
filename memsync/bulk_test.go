package memsync_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/memsync/memsync/memsync"
)

// bulkSpy forwards to a real graph and offers memsync.BulkLoader, recording
// the calls in order and what the agents' cursor files held at each end
// of the bulk load; it fails every Apply after failAfter of them (0:
// never), as a graph that goes down in the middle of a rebuild. Its
// BulkBatchFactor is factor (1 when 0), and it keeps the largest batch.
type bulkSpy struct {
	memsync.Graph
	t         *testing.T
	root      string
	agents    []string
	failAfter int
	factor    int
	largest   int

	mu      sync.Mutex
	calls   []string
	applies int
	atEnd   map[string]int // the files each agent's cursors covered at EndBulk
}

func (s *bulkSpy) Apply(ctx context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	s.mu.Lock()
	s.applies++
	n := s.applies
	s.largest = max(s.largest, len(batch))
	s.mu.Unlock()
	if s.failAfter > 0 && n > s.failAfter {
		return memsync.ApplyResult{}, fmt.Errorf("bulk spy: down: %w", memsync.ErrUnavailable)
	}
	s.record("apply")
	return s.Graph.Apply(ctx, batch)
}

func (s *bulkSpy) Drop(ctx context.Context) error {
	s.record("drop")
	return s.Graph.Drop(ctx)
}

func (s *bulkSpy) BeginBulk(ctx context.Context) error {
	s.record("begin")
	if b, ok := s.Graph.(memsync.BulkLoader); ok {
		return b.BeginBulk(ctx)
	}
	return nil
}

func (s *bulkSpy) EndBulk(ctx context.Context) error {
	s.record("end")
	s.atEnd = s.cursors()
	if b, ok := s.Graph.(memsync.BulkLoader); ok {
		return b.EndBulk(ctx)
	}
	return nil
}

func (s *bulkSpy) BulkBatchFactor() int { return max(s.factor, 1) }

func (s *bulkSpy) Flush(ctx context.Context) error {
	if f, ok := s.Graph.(memsync.Flusher); ok {
		return f.Flush(ctx)
	}
	return nil
}

func (s *bulkSpy) record(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.calls); call == "apply" && n > 0 && s.calls[n-1] == "apply" {
		return // one "apply" for a run of them
	}
	s.calls = append(s.calls, call)
}

// cursors reads each agent's state file: how many journal files its
// cursors stand in (0: reset).
func (s *bulkSpy) cursors() map[string]int {
	out := map[string]int{}
	for _, a := range s.agents {
		st, err := memsync.LoadState(memsync.Layout{Root: s.root}.StateFile(a))
		if err != nil {
			s.t.Fatalf("state of %s: %v", a, err)
		}
		out[a] = len(st.Files)
	}
	return out
}

// TestRebuildHoldsCursorsUntilTheLoadIsDurable: a rebuild loads in bulk
// between the drop and EndBulk and writes no cursor before EndBulk has
// returned (a power cut during the load would otherwise leave cursors past
// commits the store had not made durable); afterwards the cursors stand
// at the end of every journal. A rebuild that fails in the middle ends
// the bulk load all the same and leaves the cursors reset, so the next
// pass projects every journal again and nothing is missing or doubled.
func TestRebuildHoldsCursorsUntilTheLoadIsDurable(t *testing.T) {
	for _, b := range backends[:2] { // the fake and the embedded store
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range []struct {
				name      string
				failAfter int
			}{{"completes", 0}, {"graph goes down after two batches", 2}} {
				t.Run(tc.name, func(t *testing.T) {
					r := newRig(t, b.open(t))
					r.appendN("alice", 120)
					r.appendN("bob", 70)
					r.syncOnce(r.engine()) // cursors at the end before the rebuild
					spy := &bulkSpy{Graph: r.g, t: t, root: r.root, agents: []string{"alice", "bob"}, failAfter: tc.failAfter}
					_, err := r.engineOn(spy).Rebuild(context.Background(), nil)
					if want := "drop begin apply end"; fmt.Sprint(spy.calls) != "["+want+"]" {
						t.Errorf("calls %v, want [%s]", spy.calls, want)
					}
					for a, files := range spy.atEnd {
						if files != 0 {
							t.Errorf("at EndBulk %s's cursors stood in %d files: written before the load was durable", a, files)
						}
					}
					after := spy.cursors()
					if tc.failAfter == 0 {
						if err != nil {
							t.Fatal(err)
						}
						if after["alice"] == 0 || after["bob"] == 0 {
							t.Fatalf("cursors after the rebuild %v: not written", after)
						}
						if rep := r.syncOnce(r.engine()); rep.Projected != 0 {
							t.Fatalf("a pass after the rebuild projected %d", rep.Projected)
						}
						r.mustVerify(190)
						return
					}
					if !errors.Is(err, memsync.ErrPaused) {
						t.Fatalf("a rebuild whose graph went down returned %v", err)
					}
					if after["alice"] != 0 || after["bob"] != 0 {
						t.Fatalf("cursors after the failed rebuild %v, want reset", after)
					}
					// Every journal is read again from its start (what the
					// failed rebuild queued in the outboxes is drained too,
					// and skipped as already projected).
					if rep := r.syncOnce(r.engine()); rep.Projected < 190 {
						t.Fatalf("the pass after the failed rebuild projected %d, want all 190 again", rep.Projected)
					}
					r.mustVerify(190)
				})
			}
		})
	}
}

// TestRebuildWritesBulkBatches: a bulk load's passes write BulkBatchFactor
// times Options.BatchSize records per Apply (the rig's batch is 50), and
// the daemon's passes afterwards the usual BatchSize again.
func TestRebuildWritesBulkBatches(t *testing.T) {
	for _, b := range backends[:2] { // the fake and the embedded store
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range []struct {
				factor, wantLargest int
			}{{0, 50}, {1, 50}, {3, 150}, {10, 190}} {
				t.Run(fmt.Sprintf("factor %d", tc.factor), func(t *testing.T) {
					r := newRig(t, b.open(t))
					r.appendN("alice", 120)
					r.appendN("bob", 70)
					spy := &bulkSpy{Graph: r.g, t: t, root: r.root, agents: []string{"alice", "bob"}, factor: tc.factor}
					e := r.engineOn(spy)
					rep, err := e.Rebuild(context.Background(), nil)
					if err != nil {
						t.Fatal(err)
					}
					if rep.Projected != 190 || spy.largest != tc.wantLargest {
						t.Fatalf("rebuild projected %d in batches of up to %d, want 190 in batches of up to %d", rep.Projected, spy.largest, tc.wantLargest)
					}
					r.mustVerify(190)
					r.appendN("alice", 120)
					spy.largest = 0
					if rep := r.syncOnce(e); rep.Projected != 120 || spy.largest != 50 {
						t.Fatalf("the pass after the rebuild projected %d in batches of up to %d, want 120 in batches of 50", rep.Projected, spy.largest)
					}
					r.mustVerify(310)
				})
			}
		})
	}
}
