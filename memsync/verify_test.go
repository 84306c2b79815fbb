package memsync_test

import (
	"context"
	"slices"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// Verify names what the graph lacks, what it holds beyond the journals and
// what it holds with other content.
func TestVerifyFindsEachKindOfDifference(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", line("mem_a", "alice", "same")+line("mem_b", "alice", "journal version")+
		line("mem_c", "alice", "never projected"))
	r.write("bob", "2026-11-20.jsonl", line("mem_d", "bob", "never projected either")+line("mem_a", "bob", "a later clash"))
	mem := func(uuid, agent, text string) memsync.Memory {
		rec, err := journal.Parse([]byte(line(uuid, agent, text)))
		if err != nil {
			t.Fatal(err)
		}
		return memsync.Memory{Record: rec, Path: "x", Line: 1}
	}
	if _, err := r.g.Apply(context.Background(), []memsync.Memory{
		mem("mem_a", "alice", "same"), mem("mem_b", "alice", "graph version"), mem("mem_e", "carol", "only in the graph"),
	}); err != nil {
		t.Fatal(err)
	}
	rep := r.verify()
	want := memsync.VerifyReport{OK: false, JournalRecords: 4, GraphRecords: 3, Missing: 2, Extra: 1, Different: 1,
		MissingUUIDs: []string{"mem_c", "mem_d"}, ExtraUUIDs: []string{"mem_e"}, DifferentUUIDs: []string{"mem_b"}}
	if rep.OK != want.OK || rep.JournalRecords != want.JournalRecords || rep.GraphRecords != want.GraphRecords ||
		rep.Missing != want.Missing || rep.Extra != want.Extra || rep.Different != want.Different ||
		!slices.Equal(rep.MissingUUIDs, want.MissingUUIDs) || !slices.Equal(rep.ExtraUUIDs, want.ExtraUUIDs) ||
		!slices.Equal(rep.DifferentUUIDs, want.DifferentUUIDs) {
		t.Fatalf("verify = %+v\nwant     %+v", rep, want)
	}
	r.syncOnce(r.engine()) // projects c and d; b stays a mismatch (reject)
	if rep := r.verify(); rep.OK || rep.Missing != 0 || rep.Different != 1 || rep.Extra != 1 {
		t.Fatalf("after a pass verify = %+v, want only b different and e extra", rep)
	}
}

// Every line is counted once: projected, a duplicate of a projected record,
// rejected (invalid, another agent's, or a clash loser), or unaccounted.
func TestVerifyAccountsForEveryLine(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", line("mem_a", "alice", "kept")+line("mem_a", "alice", "kept")+
		lineAt("mem_a", "alice", "later ts loses", "2026-11-20T11:00:00Z")+"not json\n"+
		line("mem_20261120T100000Z_bob_0001", "alice", "squatted"))
	r.syncOnce(r.engine())
	r.write("alice", "2026-11-20.jsonl", line("mem_new", "alice", "after the pass"))
	rep := r.verify()
	want := memsync.VerifyReport{JournalRecords: 2, GraphRecords: 1, Missing: 1, Lines: 6, Projected: 1, Duplicates: 1,
		Rejected: 3, Unaccounted: 1, Conflicts: 1}
	if rep.OK || rep.JournalRecords != want.JournalRecords || rep.GraphRecords != want.GraphRecords || rep.Missing != want.Missing ||
		rep.Lines != want.Lines || rep.Projected != want.Projected || rep.Duplicates != want.Duplicates ||
		rep.Rejected != want.Rejected || rep.Unaccounted != want.Unaccounted || rep.Conflicts != want.Conflicts ||
		!slices.Equal(rep.MissingUUIDs, []string{"mem_new"}) || !slices.Equal(rep.ConflictUUIDs, []string{"mem_a"}) ||
		len(rep.RejectedLines) != 3 {
		t.Fatalf("verify = %+v\nwant     %+v", rep, want)
	}
}
