package graphtest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// ListOracle is memsync.ListQuery's meaning over memories in hand
// (memsync.ListFrom), as uuids in order.
func ListOracle(all []memsync.Memory, q memsync.ListQuery) []string {
	byGroup := map[string][]memsync.Node{}
	for _, m := range all {
		byGroup[m.Record.GroupID()] = append(byGroup[m.Record.GroupID()], memsync.Node{Memory: m})
	}
	for _, nodes := range byGroup {
		slices.SortFunc(nodes, memsync.NewerFirst)
	}
	ids := []string{}
	for _, n := range memsync.ListFrom(byGroup, q) {
		ids = append(ids, n.UUID)
	}
	return ids
}

// testList: a Lister's answer is the oracle's, uuid for uuid, also when
// many memories share a second, so that the limit falls inside a run of
// equal timestamps (a backend that reads only `limit` rows per group
// would return the wrong ones of the run).
func testList(t *testing.T, g memsync.Graph) {
	l, ok := g.(memsync.Lister)
	if !ok {
		t.Skip("not a memsync.Lister")
	}
	kinds := []journal.Kind{journal.KindPreference, journal.KindProcedure, journal.KindDecision, journal.KindFact}
	var all []memsync.Memory
	for i := 0; i < memsync.ScopeWindow+700; i++ {
		agent := []string{"alice", "bob"}[i%2]
		// Runs of 1, 7 and 100 memories in one second, uuids not in
		// arrival order within a second.
		sec := i / 2
		switch {
		case i >= 600 && i < 1000:
			sec = 300 + (i-600)/100
		case i >= 1000:
			sec = 400 + (i-1000)/7
		}
		m := mem(fmt.Sprintf("mem_%05d_%d", (i*7919)%100000, i), agent, sec, fmt.Sprintf("record %d", i), func(r *journal.Record) {
			r.Kind = kinds[i%len(kinds)]
			if i%3 != 0 {
				r.Scope = journal.ScopeShared
			}
			if i%10 == 0 {
				r.Task = "T1" // old ones fall out of the window
			}
			if i%25 == 0 {
				r.Session = "S1"
			}
			if i%97 == 0 || i%5 == 1 && i > 1000 {
				r.Tier = "core"
			}
		})
		all = append(all, m)
	}
	for i := 0; i < len(all); i += 500 {
		apply(t, g, all[i:min(i+500, len(all))]...)
	}
	alice := groups("alice")
	mid := clock.Add(320 * time.Second)
	run := clock.Add(302 * time.Second) // inside the runs of 100
	for _, q := range []memsync.ListQuery{
		{Groups: alice, Limit: 15},
		{Groups: alice, Limit: 3},
		{Groups: alice, Limit: 1},
		{Groups: alice, Limit: 40, Kinds: []journal.Kind{journal.KindPreference, journal.KindProcedure}},
		{Groups: alice, Limit: 20, Kinds: []journal.Kind{journal.KindDecision}, Until: mid},
		{Groups: alice, Limit: 7, Until: mid},
		{Groups: alice, Limit: 1, Until: run},
		{Groups: alice, Limit: 90, Until: run},
		{Groups: alice, Limit: 2, Kinds: []journal.Kind{journal.KindFact}, Until: run},
		{Groups: alice, Limit: 20, Core: true},
		{Groups: alice, Limit: 5, Core: true, Until: mid},
		{Groups: []string{journal.PrivateGroup("bob")}, Limit: 20, Core: true},
		{Groups: alice, Limit: 500, Task: "T1"},
		{Groups: alice, Limit: 4, Task: "T1"},
		{Groups: alice, Limit: 500, Session: "S1", Until: mid},
		{Groups: alice, Limit: 500, Task: "T1", Session: "S1", Kinds: []journal.Kind{journal.KindPreference}},
		{Groups: alice, Limit: 500, Task: "T1", Core: true},
		{Groups: alice, Limit: 10, Core: true, Task: "T1", Until: mid},
		{Groups: nil, Limit: 10},
	} {
		checkList(t, l, all, q)
	}
}

// testListWindowEdge: a task is matched among the group's newest
// memsync.ScopeWindow memories, and when the window's edge falls inside a
// run of memories of one second, the window takes the run's largest uuids
// (ts, then uuid, as everywhere), not whichever the store meets first.
func testListWindowEdge(t *testing.T, g memsync.Graph) {
	l, ok := g.(memsync.Lister)
	if !ok {
		t.Skip("not a memsync.Lister")
	}
	var all []memsync.Memory
	add := func(sec int, task string) {
		i := len(all)
		all = append(all, mem(fmt.Sprintf("mem_%05d_%d", (i*7919)%100000, i), "alice", sec, fmt.Sprintf("record %d", i),
			shared, func(r *journal.Record) { r.Task = task }))
	}
	for i := range 50 {
		add(i, "T0")
	}
	for range 200 { // the run the window's edge falls in
		add(100, "T1")
	}
	for i := range memsync.ScopeWindow - 150 {
		add(200+i, "T0")
	}
	for i := 0; i < len(all); i += 500 {
		apply(t, g, all[i:min(i+500, len(all))]...)
	}
	for _, q := range []memsync.ListQuery{
		{Groups: groups("alice"), Limit: 500, Task: "T1"},
		{Groups: groups("alice"), Limit: 20, Task: "T1"},
		{Groups: groups("alice"), Limit: 500, Task: "T0"},
	} {
		checkList(t, l, all, q)
	}
}

// checkList holds l's answer to q to ListOracle's over all, uuid for uuid,
// and every memory to q's groups.
func checkList(t *testing.T, l memsync.Lister, all []memsync.Memory, q memsync.ListQuery) {
	t.Helper()
	got, err := l.List(ctx(t), q)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, n := range got {
		ids = append(ids, n.UUID)
		if !slices.Contains(q.Groups, n.GroupID) {
			t.Fatalf("%+v: %s of group %s", q, n.UUID, n.GroupID)
		}
	}
	if want := ListOracle(all, q); !slices.Equal(ids, want) {
		t.Errorf("List(%+v) = %d %v\nwant %d %v", q, len(ids), ids, len(want), want)
	}
}
