package embedded

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// listOracle is memsync.ListQuery's meaning over records in hand: per
// group, newest first, task and session matched within ScopeWindow.
func listOracle(all []memsync.Memory, q memsync.ListQuery) []string {
	byGroup := map[string][]memsync.Node{}
	base := memsync.ListQuery{Groups: q.Groups, Until: q.Until}
	for _, m := range all {
		n := memsync.Node{Memory: m}
		if base.Matches(&n) {
			byGroup[m.Record.GroupID()] = append(byGroup[m.Record.GroupID()], n)
		}
	}
	var out []memsync.Node
	for _, nodes := range byGroup {
		slices.SortFunc(nodes, memsync.NewerFirst)
		if (q.Task != "" || q.Session != "") && len(nodes) > memsync.ScopeWindow {
			nodes = nodes[:memsync.ScopeWindow]
		}
		for i := range nodes {
			if q.Matches(&nodes[i]) {
				out = append(out, nodes[i])
			}
		}
	}
	slices.SortFunc(out, memsync.NewerFirst)
	ids := []string{}
	for _, n := range out[:min(len(out), q.Limit)] {
		ids = append(ids, n.UUID)
	}
	return ids
}

func TestList(t *testing.T) {
	g := openTest(t)
	ctx := context.Background()
	kinds := []journal.Kind{journal.KindPreference, journal.KindProcedure, journal.KindDecision, journal.KindFact}
	var all []memsync.Memory
	for i := 0; i < memsync.ScopeWindow+700; i++ {
		agent, scope := []string{"alice", "bob"}[i%2], journal.ScopeShared
		if i%3 == 0 {
			scope = journal.ScopePrivate
		}
		m := mem(fmt.Sprintf("mem_%05d", i), i/2, fmt.Sprintf("record %d", i), func(r *journal.Record) {
			r.Agent, r.Scope, r.Kind = agent, scope, kinds[i%len(kinds)]
			if i%10 == 0 {
				r.Task = "T1" // old ones fall out of the window
			}
			if i%25 == 0 {
				r.Session = "S1"
			}
			if i%97 == 0 {
				r.Tier = "core"
			}
		})
		all = append(all, m)
	}
	for i := 0; i < len(all); i += 500 {
		apply(t, g, all[i:min(i+500, len(all))]...)
	}
	alice := []string{journal.SharedGroup, journal.PrivateGroup("alice")}
	mid := clock.Add(time.Duration(len(all)/4) * time.Second)
	for _, q := range []memsync.ListQuery{
		{Groups: alice, Limit: 15},
		{Groups: alice, Limit: 40, Kinds: []journal.Kind{journal.KindPreference, journal.KindProcedure}},
		{Groups: alice, Limit: 20, Kinds: []journal.Kind{journal.KindDecision}, Until: mid},
		{Groups: alice, Limit: 20, Core: true},
		{Groups: []string{journal.PrivateGroup("bob")}, Limit: 20, Core: true},
		{Groups: alice, Limit: 500, Task: "T1"},
		{Groups: alice, Limit: 500, Session: "S1", Until: mid},
		{Groups: alice, Limit: 500, Task: "T1", Session: "S1", Kinds: []journal.Kind{journal.KindPreference}},
		{Groups: nil, Limit: 10},
	} {
		got, err := g.List(ctx, q)
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
		if want := listOracle(all, q); !slices.Equal(ids, want) {
			t.Errorf("List(%+v) = %d %v\nwant %d %v", q, len(ids), ids, len(want), want)
		}
	}
}
