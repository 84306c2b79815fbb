package memsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// TestStatusReadsTheSummary: after a pass, status reports the journals
// from the daemon's summary and its counting cursors, opening no journal;
// what it reports is what a status that reads every journal (a cursor
// made before cursors counted) reports, before and after lines are
// written past the pass.
func TestStatusReadsTheSummary(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	l := memsync.Layout{Root: r.root}
	now := time.Now() // the pass's clock, or later: what is dated after it is future
	for _, a := range []string{"alice", "bob"} {
		for d := 1; d <= 4; d++ {
			ts := fmt.Sprintf("2026-11-%02dT10:00:00Z", d)
			r.write(a, fmt.Sprintf("2026-11-%02d.jsonl", d), lineAt(fmt.Sprintf("mem_202611%02dT100000Z_%s_0001", d, a), a, "x", ts))
		}
	}
	r.write("alice", "2026-11-02.jsonl", "not json\n")
	// Two records dated after the clocks.
	r.write("bob", "2098-06-01.jsonl", lineAt("mem_20980601T100000Z_bob_0001", "bob", "ahead", "2098-06-01T10:00:00Z"))
	r.write("bob", "2099-01-01.jsonl", lineAt("mem_20990101T100000Z_bob_0001", "bob", "far", "2099-01-01T10:00:00Z"))
	r.syncOnce(r.engine())
	status := func(wantOpens int64) []memsync.AgentStatus {
		t.Helper()
		before := memsync.JournalOpens()
		st, err := memsync.Status(context.Background(), r.root, r.g, "test", now)
		if err != nil {
			t.Fatal(err)
		}
		if opens := memsync.JournalOpens() - before; opens != wantOpens {
			t.Errorf("status opened %d journals, want %d", opens, wantOpens)
		}
		return st.Agents
	}
	// uncounted rewrites the cursor files as a memsync before counting
	// cursors left them, and drops the summary: status reads every file.
	uncounted := func() {
		t.Helper()
		os.Remove(l.SummaryFile())
		for _, a := range []string{"alice", "bob"} {
			data, err := os.ReadFile(l.StateFile(a))
			if err != nil {
				t.Fatal(err)
			}
			var st map[string]any
			json.Unmarshal(data, &st)
			for _, c := range st["files"].(map[string]any) {
				c := c.(map[string]any)
				delete(c, "counted")
				delete(c, "records")
				delete(c, "future")
			}
			data, _ = json.Marshal(st)
			os.WriteFile(l.StateFile(a), data, 0o644)
		}
	}
	check := func(got []memsync.AgentStatus, records [2]int, future int) {
		t.Helper()
		if len(got) != 2 || got[0].JournalRecords != records[0] || got[1].JournalRecords != records[1] ||
			got[0].Future != 0 || got[1].Future != future || got[1].LastFuture.Year() != 2099 {
			t.Errorf("status = %+v, want records %v, bob's future %d (latest in 2099)", got, records, future)
		}
	}
	check(status(0), [2]int{4, 6}, 2)
	r.write("bob", "2099-01-01.jsonl", lineAt("mem_20990101T100001Z_bob_0001", "bob", "farther", "2099-01-01T10:00:01Z"))
	check(status(1), [2]int{4, 7}, 3) // bob's newest journal grew: that file alone
	got := status(1)
	if got[1].LagSeconds != 0 { // the waiting record is dated ahead of the clock
		t.Errorf("lag %v", got[1].LagSeconds)
	}
	uncounted()
	check(status(10), [2]int{4, 7}, 3) // every file, as before cursors counted
	r.syncOnce(r.engine())
	check(status(0), [2]int{4, 7}, 3)
	// That pass made the old cursors count: without the summary, status
	// reads their files no more.
	os.Remove(l.SummaryFile())
	check(status(0), [2]int{4, 7}, 3)
}
