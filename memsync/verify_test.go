package memsync_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
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

// A line in alice's journal under a uuid that names bob, with other
// content than bob's record (issue 25 §7): the engine rejects it as
// squatting, the graph holds bob's record, and verify agrees that graph
// and journals match: ok, no conflict, the line named as rejected with
// its reason. A clash between lines that may be projected stays a conflict.
func TestVerifyReportsASquattingLineAsARejectedLine(t *testing.T) {
	for _, tc := range []struct {
		name          string
		alice         string // alice's journal
		ok            bool
		conflicts     int
		rejected      int
		reasonContain string
	}{
		{"squatting bob's uuid", line("mem_20261120T100000Z_bob_0001", "alice", "alice squats bob's uuid"), true, 0, 1, "names agent bob"},
		{"squatting before and after bob's line", line("mem_20261120T100000Z_bob_0001", "alice", "one") +
			lineAt("mem_20261120T100000Z_bob_0001", "alice", "two", "2026-11-19T10:00:00Z"), true, 0, 2, "names agent bob"},
		{"a clash of alice's own lines", line("mem_a", "alice", "first") + lineAt("mem_a", "alice", "later", "2026-11-21T10:00:00Z"),
			false, 1, 1, "wins the uuid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, memsynctest.NewGraph())
			r.write("bob", "2026-11-20.jsonl", line("mem_20261120T100000Z_bob_0001", "bob", "bob's own record"))
			r.write("alice", "2026-11-20.jsonl", tc.alice)
			r.syncOnce(r.engine())
			rep := r.verify()
			if rep.OK != tc.ok || rep.Conflicts != tc.conflicts || rep.Rejected != tc.rejected || rep.Missing != 0 ||
				rep.Different != 0 || rep.Unaccounted != 0 || len(rep.RejectedLines) != tc.rejected {
				t.Fatalf("verify = %+v", rep)
			}
			for _, l := range rep.RejectedLines {
				if l.File != "agents/alice/memory/journal/2026-11-20.jsonl" || !strings.Contains(l.Reason, tc.reasonContain) || l.UUID == "" {
					t.Errorf("rejected line %+v, want alice's line, reason containing %q", l, tc.reasonContain)
				}
			}
			if n := get(t, r.g, "mem_20261120T100000Z_bob_0001"); n.Text != "bob's own record" {
				t.Errorf("bob's uuid holds %q", n.Text)
			}
		})
	}
}

// TestVerifyInPartsAgrees: verify compares the uuids a part at a time
// (bounded memory); whatever the number of parts, it reports the same
// counts and names the same uuids and lines as in one.
func TestVerifyInPartsAgrees(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", line("mem_a", "alice", "kept")+line("mem_a", "alice", "kept")+
		lineAt("mem_a", "alice", "later ts loses", "2026-11-20T11:00:00Z")+"not json\n"+
		line("mem_20261120T100000Z_bob_0001", "alice", "squatted")+line("mem_b", "alice", "journal version"))
	for i := range 12 {
		r.write("bob", "2026-11-21.jsonl", lineAt(fmt.Sprintf("mem_20261121T10000%dZ_bob_%04d", i%10, i), "bob", "bob's", "2026-11-21T10:00:00Z"))
	}
	r.syncOnce(r.engine())
	r.write("alice", "2026-11-20.jsonl", line("mem_new", "alice", "after the pass")+line("mem_new2", "alice", "after too"))
	mem := func(uuid, agent, text string) memsync.Memory {
		rec, err := journal.Parse([]byte(line(uuid, agent, text)))
		if err != nil {
			t.Fatal(err)
		}
		return memsync.Memory{Record: rec, Path: "x", Line: 1}
	}
	if _, err := r.g.Apply(context.Background(), []memsync.Memory{mem("mem_b", "alice", "graph version"),
		mem("mem_e", "carol", "only in the graph"), mem("mem_f", "carol", "only in the graph too")}); err != nil {
		t.Fatal(err)
	}
	norm := func(rep memsync.VerifyReport) memsync.VerifyReport {
		for _, l := range []*[]string{&rep.MissingUUIDs, &rep.ExtraUUIDs, &rep.DifferentUUIDs, &rep.ConflictUUIDs} {
			slices.Sort(*l)
		}
		slices.SortFunc(rep.RejectedLines, func(a, b memsync.RejectedLine) int { return a.Line - b.Line })
		return rep
	}
	one, err := memsync.VerifyIn(context.Background(), r.root, r.g, 1)
	if err != nil {
		t.Fatal(err)
	}
	one = norm(one)
	if one.OK || one.Missing != 2 || one.Extra != 2 || one.Different != 1 || one.Conflicts != 1 || one.Rejected != 3 || one.Lines != 20 {
		t.Fatalf("one part: %+v", one)
	}
	for parts := 2; parts <= 7; parts++ {
		rep, err := memsync.VerifyIn(context.Background(), r.root, r.g, parts)
		if err != nil {
			t.Fatal(err)
		}
		if rep := norm(rep); !reflect.DeepEqual(rep, one) {
			t.Errorf("%d parts: %+v\nwant one's %+v", parts, rep, one)
		}
	}
}
