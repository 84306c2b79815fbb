package offline

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// NewJournals answers every List, Get and Incoming exactly as the plain
// Journals does, whatever was read first: tasks, sessions, the core
// tier, supersession, a uuid written twice by its owner and a line in
// another agent's journal claiming someone's uuid.
func TestMemoAnswersAsThePlainReader(t *testing.T) {
	var recs []journal.Record
	for i, m := range graphtest.Corpus(7, 3000) {
		r := m.Record
		if i%10 == 0 {
			r.Task = "T1"
		}
		if i%25 == 0 {
			r.Session = "S1"
		}
		if i%97 == 0 {
			r.Tier = "core"
		}
		recs = append(recs, r)
		if i%500 == 499 {
			again := r
			again.Text = "written twice: " + r.Text
			recs = append(recs, again)
			squat := recs[i/2]
			squat.Agent = []string{"alice", "bob"}[i%2]
			if squat.Agent == recs[i/2].Agent {
				squat.Agent = "carol"
			}
			squat.Text = "claims another's uuid"
			recs = append(recs, squat)
		}
	}
	layout := writeJournals(t, t.TempDir(), recs...)
	ctx := context.Background()
	plain := Journals{Layout: layout}
	mid := recs[1500].TS
	var queries []memsync.ListQuery
	for _, agent := range []string{"alice", "bob", "erin"} {
		g := groups(agent)
		queries = append(queries,
			memsync.ListQuery{Groups: g, Limit: 15},
			memsync.ListQuery{Groups: g, Limit: 40, Kinds: []journal.Kind{journal.KindPreference, journal.KindProcedure}},
			memsync.ListQuery{Groups: g, Limit: 20, Kinds: []journal.Kind{journal.KindDecision}, Until: mid},
			memsync.ListQuery{Groups: g, Limit: 20, Core: true},
			memsync.ListQuery{Groups: g, Limit: 500, Task: "T1"},
			memsync.ListQuery{Groups: g, Limit: 500, Session: "S1", Until: mid},
			memsync.ListQuery{Groups: []string{journal.PrivateGroup(agent)}, Limit: 3000},
		)
	}
	ids := []string{"mem_absent"}
	for i := 0; i < len(recs); i += 37 {
		ids = append(ids, recs[i].UUID)
	}
	for _, listFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("list first %v", listFirst), func(t *testing.T) {
			memo := NewJournals(layout)
			if !listFirst {
				// Before any List, Get and Incoming scan as the plain reader does.
				compareSignals(t, ctx, plain, memo, ids)
			}
			for _, q := range queries {
				want, err := plain.List(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := memo.List(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("List(%+v): memo gives %d memories, plain %d (or they differ)", q, len(got), len(want))
				}
			}
			compareSignals(t, ctx, plain, memo, ids)
		})
	}
}

func compareSignals(t *testing.T, ctx context.Context, plain, memo Journals, ids []string) {
	t.Helper()
	wantNodes, err := plain.Get(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	gotNodes, err := memo.Get(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotNodes, wantNodes) {
		for id, n := range wantNodes {
			if !reflect.DeepEqual(gotNodes[id], n) {
				t.Fatalf("Get %s: memo %+v\nplain %+v", id, gotNodes[id].Memory, n.Memory)
			}
		}
		t.Fatalf("Get: memo %d nodes, plain %d", len(gotNodes), len(wantNodes))
	}
	wantRefs, err := plain.Incoming(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	gotRefs, err := memo.Incoming(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	// The one difference: the memo's sources carry their own supersession
	// (as a graph's Incoming does); the plain scan leaves it out.
	for i := range gotRefs {
		gotRefs[i].Source.InvalidAt, gotRefs[i].Source.ReplacedBy = time.Time{}, ""
	}
	if !reflect.DeepEqual(gotRefs, wantRefs) {
		t.Fatalf("Incoming: memo %d references, plain %d (or they differ)", len(gotRefs), len(wantRefs))
	}
}

// A List whose read was cancelled fails, and so does every later List of
// that request: no answer from half the journals.
func TestMemoCancelled(t *testing.T) {
	layout := writeJournals(t, t.TempDir(), journal.Record{UUID: "mem_1", TS: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC),
		Agent: "alice", Kind: journal.KindFact, Scope: journal.ScopeShared, Text: "one"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j := NewJournals(layout)
	for range 2 {
		if _, err := j.List(ctx, memsync.ListQuery{Groups: groups("alice"), Limit: 5}); err == nil {
			t.Fatal("List with a cancelled context answered")
		}
	}
}
