package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// TestAppendUUIDAfterLongLines is issue 13 item 1 through the built
// binary: the journal ends in records over 64 KiB, one for each second
// from just before now to a minute ahead (what appends at those seconds
// leave behind, like the compaction record of a 3,000-record day), and
// memsync append runs 20 times. Every uuid is new, and sync and verify
// account for every record. The old code read the last 64 KiB only, saw
// no uuid of the current second and handed out _0001 again.
func TestAppendUUIDAfterLongLines(t *testing.T) {
	repo := newRepo(t, "alice")
	l := memsync.Layout{Root: repo}
	base := time.Now().UTC().Add(-time.Second)
	long := strings.Repeat("long ", 14<<10)
	seen := map[string]bool{}
	for s := 0; s <= 60; s++ {
		at := base.Add(time.Duration(s) * time.Second)
		rec := journal.Record{Agent: "alice", Kind: journal.KindObservation, Text: fmt.Sprintf("%d %s", s, long)}
		opts := journal.AppendOptions{NoSync: true, Now: func() time.Time { return at }, Root: repo, SequenceFile: l.SequenceFile("alice")}
		if _, err := journal.Append(l.JournalDir("alice"), &rec, opts); err != nil {
			t.Fatal(err)
		}
		seen[rec.UUID] = true
	}
	for i := 0; i < 20; i++ {
		id := strings.TrimSpace(mustBin(t, repo, "append", "--agent", "alice", "--kind", "fact", "--no-fsync", fmt.Sprintf("short %d", i)))
		if seen[id] {
			t.Fatalf("append %d: uuid %s handed out twice", i, id)
		}
		seen[id] = true
	}
	mustBin(t, repo, "sync", "--once")
	var v memsync.VerifyReport
	if err := json.Unmarshal([]byte(mustBin(t, repo, "verify", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if !v.OK || v.JournalRecords != len(seen) || v.GraphRecords != len(seen) {
		t.Fatalf("verify %+v, want ok with %d records", v, len(seen))
	}
	st := statusJSON(t, repo)
	if len(st.Agents) != 1 || st.Agents[0].Rejects != 0 || st.Agents[0].Projected != len(seen) {
		t.Fatalf("status %+v, want %d projected and no rejects", st.Agents, len(seen))
	}
}
