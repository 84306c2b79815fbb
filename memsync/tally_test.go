package memsync_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// rebuildTallied rebuilds r's graph with a tally, in batches of two records
// (so that files are read in several segments), and returns the tally.
func (r *rig) rebuildTallied() *memsync.JournalTally {
	r.t.Helper()
	tally := r.newTally()
	e, err := memsync.New(memsync.Options{Root: r.root, Graph: r.g, Logger: zaptest.NewLogger(r.t), BatchSize: 2, Tally: tally})
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := e.Rebuild(context.Background(), nil); err != nil {
		r.t.Fatal(err)
	}
	return tally
}

// newTally is a tally in a test directory, closed with the test.
func (r *rig) newTally() *memsync.JournalTally {
	r.t.Helper()
	tally, err := memsync.NewJournalTally(r.t.TempDir())
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { tally.Close() })
	return tally
}

// verifyBoth runs VerifyTallied and Verify and fails unless they report the
// same, apart from which read the journals' side came from; it returns
// VerifyTallied's report. A backend that walks its hashes in parts
// (memsync.PartHasher; the rig's switch hides it) is verified both ways.
func (r *rig) verifyBoth(tally *memsync.JournalTally) memsync.VerifyReport {
	r.t.Helper()
	want := r.verify()
	graphs := []memsync.Graph{r.g}
	if _, ok := r.g.Graph.(memsync.PartHasher); ok {
		graphs = append(graphs, r.g.Graph)
	}
	var got memsync.VerifyReport
	for _, g := range graphs {
		var err error
		got, err = memsync.VerifyTallied(context.Background(), r.root, g, tally)
		if err != nil {
			r.t.Fatalf("VerifyTallied: %v", err)
		}
		cmp := got
		cmp.JournalsFromRebuild = false
		if !reflect.DeepEqual(cmp, want) {
			r.t.Fatalf("VerifyTallied (%T) = %+v\nVerify       = %+v", g, got, want)
		}
	}
	return got
}

// After a rebuild, verify takes the journals' side from the rebuild's own
// read, and reports exactly what a second read would: every kind of line
// (duplicates, a clash, bad JSON, a squatting line, blank lines, a line
// without its newline yet) and every kind of difference the graph may hold.
func TestVerifyTalliedEqualsVerify(t *testing.T) {
	squat := line("mem_20261120T100000Z_bob_0001", "alice", "alice squats bob's uuid")
	for _, tc := range []struct {
		name  string
		alice string // alice's journal of 2026-11-20
		after func(r *rig)
		ok    bool
	}{
		{name: "clean", ok: true},
		{name: "duplicates and blank lines", alice: line("mem_a", "alice", "a") + "\n  \n" + line("mem_a", "alice", "a") + "\r\n", ok: true},
		{name: "bad lines and a squatter", alice: "not json\n" + `{"uuid":"mem_x"}` + "\n" + squat, ok: true},
		{name: "a clash", alice: line("mem_a", "alice", "first") + lineAt("mem_a", "alice", "later", "2026-11-21T10:00:00Z")},
		{name: "a line without its newline", alice: line("mem_a", "alice", "a") + `{"uuid":"mem_half"`, ok: true},
		{name: "the graph holds an extra memory and another version", alice: line("mem_a", "alice", "a"), after: func(r *rig) {
			apply(r, line("mem_extra", "carol", "only in the graph"), line("mem_a", "alice", "the graph's own version"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachLocalBackend(t, func(t *testing.T, r *rig) {
				r.write("bob", "2026-11-20.jsonl", line("mem_20261120T100000Z_bob_0001", "bob", "bob's own record"))
				r.write("bob", "2026-11-21.jsonl", line("mem_b2", "bob", "one")+line("mem_b3", "bob", "two")+line("mem_b4", "bob", "three"))
				if tc.alice != "" {
					r.write("alice", "2026-11-20.jsonl", tc.alice)
				}
				tally := r.rebuildTallied()
				if tc.after != nil {
					tc.after(r)
				}
				rep := r.verifyBoth(tally)
				if !rep.JournalsFromRebuild || rep.OK != tc.ok {
					t.Fatalf("VerifyTallied = %+v, want the rebuild's read used and ok %v", rep, tc.ok)
				}
			})
		})
	}
}

// eachLocalBackend runs fn against the fake and the embedded store (the
// embedded one walks its hashes in parts: memsync.PartHasher).
func eachLocalBackend(t *testing.T, fn func(t *testing.T, r *rig)) {
	for _, b := range backends[:2] {
		t.Run(b.name, func(t *testing.T) { fn(t, newRig(t, b.open(t))) })
	}
}

// When the journals are not what the rebuild read (a line appended or
// completed, a file added, removed or rewritten), verify reads them again
// and reports what they hold now.
func TestVerifyTalliedReadsChangedJournals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *rig)
		ok     bool
	}{
		{"a line appended", func(r *rig) { r.write("bob", "2026-11-21.jsonl", line("mem_new", "bob", "after the rebuild")) }, false},
		{"a half line completed", func(r *rig) { r.write("alice", "2026-11-20.jsonl", `}`+"\n") }, false}, // mem_half, missing
		{"a file added", func(r *rig) { r.write("alice", "2026-11-22.jsonl", line("mem_c", "alice", "new file")) }, false},
		{"a file removed", func(r *rig) {
			if err := os.Remove(r.path("bob", "2026-11-21.jsonl")); err != nil {
				r.t.Fatal(err)
			}
		}, false},
		{"a file rewritten with other lines", func(r *rig) {
			if err := os.WriteFile(r.path("bob", "2026-11-21.jsonl"), []byte(line("mem_b9", "bob", "rewritten")), 0o644); err != nil {
				r.t.Fatal(err)
			}
		}, false},
		{"no change", func(*rig) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, memsynctest.NewGraph())
			r.write("alice", "2026-11-20.jsonl", line("mem_a", "alice", "a")+`{"uuid":"mem_half","ts":"2026-11-20T10:00:00Z","agent":"alice","kind":"fact","text":"half"`)
			r.write("bob", "2026-11-21.jsonl", line("mem_b2", "bob", "one")+line("mem_b3", "bob", "two"))
			tally := r.rebuildTallied()
			tc.change(r)
			rep := r.verifyBoth(tally)
			unchanged := tc.name == "no change"
			if rep.JournalsFromRebuild != unchanged || rep.OK != tc.ok {
				t.Fatalf("VerifyTallied = %+v, want the rebuild's read used %v and ok %v", rep, unchanged, tc.ok)
			}
		})
	}
	// Without a tally, it is Verify.
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", line("mem_a", "alice", "a"))
	r.rebuildTallied()
	if rep := r.verifyBoth(nil); rep.JournalsFromRebuild || !rep.OK {
		t.Fatalf("VerifyTallied(nil) = %+v", rep)
	}
}

// A tally read by a daemon's pass (a file read in two passes, the second
// from its cursor) counts each line once and still matches.
func TestTallyAcrossPasses(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", line("mem_a", "alice", "a"))
	tally := r.newTally()
	e, err := memsync.New(memsync.Options{Root: r.root, Graph: r.g, Logger: zaptest.NewLogger(t), BatchSize: 2, Tally: tally})
	if err != nil {
		t.Fatal(err)
	}
	r.syncOnce(e)
	r.write("alice", "2026-11-20.jsonl", "\n"+line("mem_b", "alice", "b"))
	r.syncOnce(e)
	if rep := r.verifyBoth(tally); !rep.JournalsFromRebuild || !rep.OK || rep.Lines != 2 {
		t.Fatalf("VerifyTallied = %+v", rep)
	}
}

// apply projects raw journal lines straight into r's graph.
func apply(r *rig, lines ...string) {
	r.t.Helper()
	var batch []memsync.Memory
	for _, l := range lines {
		rec, err := journal.Parse([]byte(l))
		if err != nil {
			r.t.Fatal(err)
		}
		batch = append(batch, memsync.Memory{Record: rec, Path: "x", Line: 1})
	}
	if _, err := r.g.Apply(context.Background(), batch); err != nil {
		r.t.Fatal(err)
	}
}

// The tally's digests live in a file nobody sees (nothing is left behind
// by a rebuild that dies), and a tally whose file fails is not used: the
// journals are read again.
func TestTallyFile(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	r.write("alice", "2026-11-20.jsonl", line("mem_a", "alice", "a")+line("mem_b", "alice", "b"))
	dir := t.TempDir()
	tally, err := memsync.NewJournalTally(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tally.Close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("the tally left %v in its directory", left)
	}
	e, err := memsync.New(memsync.Options{Root: r.root, Graph: r.g, Logger: zaptest.NewLogger(t), BatchSize: 2, Tally: tally})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := memsync.CloseTallyFile(tally); err != nil {
		t.Fatal(err)
	}
	if rep := r.verifyBoth(tally); rep.JournalsFromRebuild || !rep.OK || rep.JournalRecords != 2 {
		t.Fatalf("VerifyTallied with its file failed = %+v, want the journals read again", rep)
	}
	if _, err := memsync.NewJournalTally(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a tally in a missing directory: no error")
	}
}
