package memsync_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// refLine is a record line of scope naming others through field.
func refLine(uuid, agent, scope, field string, targets ...string) string {
	ids := ""
	for i, t := range targets {
		if i > 0 {
			ids += ","
		}
		ids += fmt.Sprintf("%q", t)
	}
	extra := ""
	if field != "" {
		extra = fmt.Sprintf(",%q:[%s]", field, ids)
	}
	return fmt.Sprintf(`{"uuid":%q,"ts":"2026-11-20T10:00:00Z","agent":%q,"kind":"fact","scope":%q,"text":"t %s"%s}`+"\n",
		uuid, agent, scope, uuid, extra)
}

// TestVerifyAllReferencesInOneRead: the references that change nothing
// (to no record, to another agent's private memory) come out of verify's
// single read counted, by kind, sampled and listed in journal order, the
// same whatever the number of parts; the comparison's report is Verify's.
func TestVerifyAllReferencesInOneRead(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", refLine("mem_a1", "alice", "shared", "links", "mem_nowhere", "mem_bp", "mem_a2")+
		refLine("mem_a2", "alice", "shared", "conflicts_with", "mem_bp", "mem_bs")+
		refLine("mem_a3", "alice", "private", "supersedes", "mem_gone"))
	r.write("alice", "2026-11-21.jsonl", refLine("mem_a4", "alice", "shared", "links", "mem_bp", "mem_bp", "mem_x1", "mem_x2", "mem_x3"))
	r.write("bob", "2026-11-20.jsonl", refLine("mem_bp", "bob", "private", "")+refLine("mem_bs", "bob", "shared", "links", "mem_a3", "mem_a1"))
	r.syncOnce(r.engine())
	want := []string{
		"links to no record: mem_a1 -> mem_nowhere",
		"links to a memory the writer cannot see: mem_a1 -> mem_bp",
		"conflicts_with to a memory the writer cannot see: mem_a2 -> mem_bp",
		"supersedes to no record: mem_a3 -> mem_gone",
		"links to a memory the writer cannot see: mem_a4 -> mem_bp",
		"links to no record: mem_a4 -> mem_x1",
		"links to no record: mem_a4 -> mem_x2",
		"links to no record: mem_a4 -> mem_x3",
		"links to a memory the writer cannot see: mem_bs -> mem_a3",
	}
	plain, err := memsync.Verify(context.Background(), r.root, r.g)
	if err != nil || !plain.OK {
		t.Fatalf("verify: %+v %v", plain, err)
	}
	for parts := 1; parts <= 7; parts++ {
		if parts%2 == 0 {
			memsync.ListInRunsOf(t, parts/2) // sorted in runs of 1 to 3, merged
		}
		var each []string
		rep, refs, err := memsync.VerifyAll(context.Background(), r.root, r.g, memsync.VerifyOptions{Parts: parts, References: true,
			EachReference: func(field, blocked, source, target string) {
				each = append(each, fmt.Sprintf("%s %s: %s -> %s", field, blocked, source, target))
			}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep, plain) {
			t.Errorf("%d parts: verify %+v, want %+v", parts, rep, plain)
		}
		if !slices.Equal(each, want) {
			t.Errorf("%d parts: listed\n%s\nwant\n%s", parts, strings.Join(each, "\n"), strings.Join(want, "\n"))
		}
		wantRefs := memsync.ReferenceReport{Dangling: 5, Crossing: 4,
			Sample: []string{"mem_a1 -> mem_nowhere", "mem_a1 -> mem_bp", "mem_a2 -> mem_bp", "mem_a3 -> mem_gone",
				"mem_a4 -> mem_bp", "mem_a4 -> mem_x1", "mem_a4 -> mem_x2", "mem_a4 -> mem_x3", "mem_bs -> mem_a3"},
			ByKind: []memsync.ReferenceKind{
				{Field: "links", Blocked: memsync.BlockedNoRecord, Count: 4, Sample: []string{"mem_a1 -> mem_nowhere", "mem_a4 -> mem_x1", "mem_a4 -> mem_x2"}},
				{Field: "links", Blocked: memsync.BlockedNotVisible, Count: 3, Sample: []string{"mem_a1 -> mem_bp", "mem_a4 -> mem_bp", "mem_bs -> mem_a3"}},
				{Field: "conflicts_with", Blocked: memsync.BlockedNotVisible, Count: 1, Sample: []string{"mem_a2 -> mem_bp"}},
				{Field: "supersedes", Blocked: memsync.BlockedNoRecord, Count: 1, Sample: []string{"mem_a3 -> mem_gone"}},
			}}
		if !reflect.DeepEqual(refs, wantRefs) {
			t.Errorf("%d parts: references %+v\nwant %+v", parts, refs, wantRefs)
		}
		var listing memsync.ReferenceListing
		_, _, err = memsync.VerifyAll(context.Background(), r.root, r.g, memsync.VerifyOptions{Parts: parts, References: true, Listing: &listing})
		var listed []string
		if err == nil {
			err = listing.Each(func(field, blocked, source, target string) error {
				listed = append(listed, fmt.Sprintf("%s %s: %s -> %s", field, blocked, source, target))
				return nil
			})
		}
		if err != nil || !slices.Equal(listed, want) || listing.Close() != nil {
			t.Errorf("%d parts: Listing.Each %v\n%s", parts, err, strings.Join(listed, "\n"))
		}
		alone, err := memsync.CheckReferencesEach(memsync.Layout{Root: r.root}, parts, nil)
		if err != nil || !reflect.DeepEqual(alone, wantRefs) {
			t.Errorf("%d parts: CheckReferencesEach %+v %v", parts, alone, err)
		}
	}
}

// TestVerifySpillFaults: where verify cannot spill (a directory it cannot
// create files in, a disk that is full), it fails naming why; it never
// reports on what it could not read back.
func TestVerifySpillFaults(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T) string // the spill directory
		errHas  []string
		errIs   error
		parts   int
		withRef bool
	}{
		{"not a directory", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, []string{"verify: spill file in ", "/file"}, syscall.ENOTDIR, 3, true},
		{"missing directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "gone") },
			[]string{"verify: spill file in ", "/gone"}, os.ErrNotExist, 1, false},
		{"full disk", func(t *testing.T) string { memsync.SpillToFullDisk(t); return t.TempDir() },
			[]string{"verify: write spill file in "}, syscall.ENOSPC, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, memsynctest.NewGraph())
			r.write("alice", "2026-11-20.jsonl", refLine("mem_a1", "alice", "shared", "links", "mem_nowhere")+line("mem_a2", "alice", "two"))
			r.syncOnce(r.engine())
			dir := tc.setup(t)
			rep, refs, err := memsync.VerifyAll(context.Background(), r.root, r.g,
				memsync.VerifyOptions{Parts: tc.parts, SpillDir: dir, References: tc.withRef})
			if err == nil || !errors.Is(err, tc.errIs) {
				t.Fatalf("verify = %+v %+v, %v; want an error that is %v", rep, refs, err, tc.errIs)
			}
			for _, s := range tc.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if !reflect.DeepEqual(rep, memsync.VerifyReport{}) || !reflect.DeepEqual(refs, memsync.ReferenceReport{}) {
				t.Errorf("a report from a failed spill: %+v %+v", rep, refs)
			}
		})
	}
}

// TestVerifyListingSpillFault: the listing of every reference that
// changes nothing spills its sorted runs too; a full disk there fails the
// verify, never a listing with a hole in it.
func TestVerifyListingSpillFault(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", refLine("mem_a1", "alice", "shared", "links", "mem_n1", "mem_n2", "mem_n3"))
	r.syncOnce(r.engine())
	memsync.ListInRunsOf(t, 1)
	memsync.SpillToFullDiskAfter(t, 3) // the records', references' and graph's spills are written; the runs are not
	var listing memsync.ReferenceListing
	defer listing.Close()
	_, refs, err := memsync.VerifyAll(context.Background(), r.root, r.g, memsync.VerifyOptions{Parts: 1, References: true, Listing: &listing})
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "verify: list references: write spill file in ") {
		t.Fatalf("verify = %+v, %v; want a full disk's error", refs, err)
	}
}
