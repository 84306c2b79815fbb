package memsync_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// One pass gathers every agent's new lines into as few graph writes as the
// batch size allows, whatever the number of agents and files.
func TestOneGraphWritePerBatchAcrossAgents(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		for i := range 10 {
			r.appendN(fmt.Sprintf("agent%d", i), 3)
		}
		var writes []int
		e, err := memsync.New(memsync.Options{Root: r.root, Graph: r.g, BatchSize: 50,
			Progress: func(n int) { writes = append(writes, n) }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.SyncOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(writes, []int{30}) {
			t.Fatalf("10 agents × 3 new records took writes %v, want one of 30", writes)
		}
		for i := range 10 {
			r.appendN(fmt.Sprintf("agent%d", i), 6)
		}
		writes = nil
		if _, err := e.SyncOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(writes, []int{50, 10}) {
			t.Fatalf("10 agents × 6 new records took writes %v, want 50 then 10", writes)
		}
		r.mustVerify(90)
		// Every cursor moved: a new engine (a restart) has nothing to do.
		if rep := r.syncOnce(r.engine()); rep.Projected != 0 {
			t.Fatalf("after restart a pass projected %d", rep.Projected)
		}
	})
}

// When one write spans agents, what the graph refuses is recorded in the
// rejects of the agent whose journal holds the line.
func TestRejectsOfASharedWriteGoToTheirAgent(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.write("alice", "2026-11-20.jsonl", line("mem_dup", "alice", "alice said this first"))
		r.write("bob", "2026-11-20.jsonl", lineAt("mem_dup", "bob", "bob reuses the uuid", "2026-11-20T11:00:00Z")+line("mem_bob", "bob", "bob's own"))
		rep := r.syncOnce(r.engine())
		if rep.Rejected != 1 {
			t.Fatalf("pass = %+v, want 1 reject", rep)
		}
		if rs := r.rejects("alice"); len(rs) != 0 {
			t.Fatalf("alice's rejects = %+v, want none", rs)
		}
		rs := r.rejects("bob")
		if len(rs) != 1 || rs[0].UUID != "mem_dup" || rs[0].Line != 1 || !strings.Contains(rs[0].Reason, "different content") {
			t.Fatalf("bob's rejects = %+v, want line 1's uuid clash", rs)
		}
		if n := get(t, r.g, "mem_dup"); n.Agent != "alice" {
			t.Fatalf("mem_dup holds %s's record, want alice's (the earlier ts)", n.Agent)
		}
	})
}

// OnChanged names the groups whose recall a pass changed: each projected
// record's group, and the shared group for a superseding record.
func TestOnChangedNamesTheGroupsProjected(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", line("mem_a", "alice", "alice's private note"))
	r.write("bob", "2026-11-20.jsonl", strings.Replace(line("mem_b", "bob", "for everyone"), `"kind"`, `"scope":"shared","kind"`, 1))
	var got [][]string
	e, err := memsync.New(memsync.Options{Root: r.root, Graph: r.g, OnChanged: func(g []string) { got = append(got, g) }})
	if err != nil {
		t.Fatal(err)
	}
	r.syncOnce(e)
	want := []string{journal.PrivateGroup("alice"), journal.SharedGroup}
	if len(got) != 1 || !slices.Equal(got[0], want) {
		t.Fatalf("OnChanged got %v, want one call with %v", got, want)
	}
	r.write("carol", "2026-11-20.jsonl", strings.Replace(line("mem_c", "carol", "replaces alice's"), `"kind"`, `"supersedes":["mem_a"],"kind"`, 1))
	got = nil
	r.syncOnce(e)
	want = []string{journal.PrivateGroup("carol"), journal.SharedGroup}
	if len(got) != 1 || !slices.Equal(got[0], want) {
		t.Fatalf("after a supersession OnChanged got %v, want %v", got, want)
	}
	got = nil
	r.syncOnce(e)
	if len(got) != 0 {
		t.Fatalf("a pass with nothing new called OnChanged with %v", got)
	}
}

// orderGraph records the uuids it is asked to apply, in order.
type orderGraph struct {
	memsync.Graph
	uuids []string
}

// byAgentGraph is an orderGraph that asks for memsync.ByAgent.
type byAgentGraph struct{ *orderGraph }

func (byAgentGraph) ReadOrder() memsync.ReadOrder { return memsync.ByAgent }

func (g *orderGraph) Apply(ctx context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	for _, m := range batch {
		g.uuids = append(g.uuids, m.UUID)
	}
	return g.Graph.Apply(ctx, batch)
}

// A pass reads day by day across agents, each agent's archive before its
// journal for the same day, so that a catch-up or a rebuild offers records
// roughly in time order: uuid-keyed indexes then grow at one end.
func TestPassReadsDayByDayAcrossAgents(t *testing.T) {
	t.Run("by day", func(t *testing.T) {
		g := &orderGraph{Graph: memsynctest.NewGraph()}
		testReadOrder(t, g, g, []string{"b19", "c19-archived", "a20-archived", "a20", "a21", "b21"})
	})
	// A graph that asks for it gets every file of an agent, then the next's.
	t.Run("by agent", func(t *testing.T) {
		g := &orderGraph{Graph: memsynctest.NewGraph()}
		testReadOrder(t, byAgentGraph{g}, g, []string{"a20-archived", "a20", "a21", "b19", "b21", "c19-archived"})
	})
}

func testReadOrder(t *testing.T, graph memsync.Graph, g *orderGraph, want []string) {
	r := newRig(t, g)
	for _, f := range []struct{ agent, file, uuid string }{
		{"bob", "2026-11-21.jsonl", "b21"},
		{"bob", "2026-11-19.jsonl", "b19"},
		{"alice", "2026-11-21.jsonl", "a21"},
		{"alice", "2026-11-20.jsonl", "a20"},
		{"alice", "archive/2026-11-20.jsonl", "a20-archived"},
		{"carol", "archive/2026-11-19.jsonl", "c19-archived"},
	} {
		r.write(f.agent, f.file, line(f.uuid, f.agent, "said on "+f.file))
	}
	e, err := memsync.New(memsync.Options{Root: r.root, Graph: graph, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep := r.syncOnce(e)
	if rep.Projected != len(want) || !slices.Equal(g.uuids, want) {
		t.Fatalf("pass projected %d in the order %v, want %v", rep.Projected, g.uuids, want)
	}
	r.mustVerify(len(want))
	if rep := r.syncOnce(e); rep.Projected != 0 {
		t.Fatalf("a second pass projected %d", rep.Projected)
	}
}

// The version a uuid stands for does not depend on the read order: the
// same uuid in two agents' journals (a tool that wrote its own ids) is
// bob's (the earlier ts) whether bob's file is read first (day by day) or
// alice's is (agent after agent, where bob's replaces it); verify expects
// that version and reports the conflict.
func TestClashWinnerIgnoresTheReadOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		byAgent bool
	}{{"by day", false}, {"by agent", true}} {
		t.Run(tc.name, func(t *testing.T) {
			og := &orderGraph{Graph: memsynctest.NewGraph()}
			var g memsync.Graph = og
			if tc.byAgent {
				g = byAgentGraph{og}
			}
			r := newRig(t, og)
			r.write("alice", "2026-11-21.jsonl", lineAt("mem_x", "alice", "alice's version", "2026-11-21T10:00:00Z"))
			r.write("bob", "2026-11-20.jsonl", line("mem_x", "bob", "bob's version"))
			e, err := memsync.New(memsync.Options{Root: r.root, Graph: g})
			if err != nil {
				t.Fatal(err)
			}
			r.syncOnce(e)
			if n := get(t, og, "mem_x"); n.Agent != "bob" {
				t.Fatalf("mem_x holds %s's record, want bob's", n.Agent)
			}
			if rs := r.rejects("alice"); len(rs) != 1 || rs[0].UUID != "mem_x" {
				t.Fatalf("alice's rejects = %+v, want her mem_x line", rs)
			}
			rep, err := memsync.Verify(context.Background(), r.root, g)
			if err != nil || rep.OK || rep.JournalRecords != 1 || rep.Different != 0 || rep.Missing != 0 ||
				rep.Conflicts != 1 || rep.Projected != 1 || rep.Rejected != 1 || rep.Unaccounted != 0 {
				t.Fatalf("verify = %+v, %v; want 1 record, 1 conflict, not ok", rep, err)
			}
		})
	}
}

// A back-dated version of a uuid that arrives after the first one was
// projected wins it (journal.ClashWins: the earlier ts), on every backend;
// the line it displaced is the reject, in its agent's rejects.
func TestBackDatedVersionDisplacesTheProjectedOne(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.write("alice", "2026-11-21.jsonl", lineAt("mem_bd", "alice", "written first", "2026-11-21T10:00:00Z"))
		r.syncOnce(r.engine())
		r.write("alice", "2026-11-20.jsonl", lineAt("mem_bd", "alice", "back-dated rewrite", "2026-11-20T10:00:00Z"))
		if rep := r.syncOnce(r.engine()); rep.Rejected != 1 {
			t.Fatalf("pass = %+v, want the displaced line rejected", rep)
		}
		if n := get(t, r.g, "mem_bd"); n.Text != "back-dated rewrite" || n.Path != "agents/alice/memory/journal/2026-11-20.jsonl" {
			t.Fatalf("mem_bd = %q from %s, want the back-dated version", n.Text, n.Path)
		}
		rs := r.rejects("alice")
		if len(rs) != 1 || rs[0].File != "agents/alice/memory/journal/2026-11-21.jsonl" || rs[0].Line != 1 ||
			!strings.Contains(rs[0].Reason, "2026-11-20.jsonl:1") {
			t.Fatalf("rejects = %+v, want the displaced 2026-11-21 line", rs)
		}
		if v := r.verify(); v.Different != 0 || v.Missing != 0 || v.Conflicts != 1 || v.Rejected != 1 || v.Projected != 1 {
			t.Fatalf("verify = %+v", v)
		}
	})
}

// A version from bob's journal that displaces a memory projected from
// alice's (a uuid of no agent, written by a tool in both) leaves the reject
// in alice's rejects, though alice had nothing new to read.
func TestDisplacedLineIsItsOwnAgentsReject(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		r.write("alice", "2026-11-20.jsonl", lineAt("tool-42", "alice", "alice's version", "2026-11-20T10:00:00Z"))
		r.syncOnce(r.engine())
		r.write("bob", "2026-11-20.jsonl", lineAt("tool-42", "bob", "bob's earlier version", "2026-11-20T09:00:00Z"))
		r.syncOnce(r.engine())
		if n := get(t, r.g, "tool-42"); n.Agent != "bob" {
			t.Fatalf("tool-42 holds %s's record, want bob's (the earlier ts)", n.Agent)
		}
		if rs := r.rejects("alice"); len(rs) != 1 || rs[0].UUID != "tool-42" || rs[0].File != "agents/alice/memory/journal/2026-11-20.jsonl" {
			t.Fatalf("alice's rejects = %+v, want her displaced line", rs)
		}
		if rs := r.rejects("bob"); len(rs) != 0 {
			t.Fatalf("bob's rejects = %+v, want none", rs)
		}
	})
}
