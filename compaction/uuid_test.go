package compaction_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/compaction"
	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// TestAppendUUIDsSurviveCompactions is issue 13's "the uuid memsync append
// writes is unique whatever the line lengths, compactions, lock waits and
// clock steps": 100,000 appends of mixed sizes (one in 2,000 over 64 KiB),
// about 140 a second, the clock stepping back now and then, and a
// compaction of the overfull day every 20,000 appends (each writes
// compaction records of 20,000 uuids, over 64 KiB, in the current second).
// Every uuid is distinct, every line projects, verify is clean and nothing
// is rejected. On the 64 KiB tail scan the first append after each long
// line or compaction record reused a uuid.
func TestAppendUUIDsSurviveCompactions(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	root := t.TempDir()
	l := memsync.Layout{Root: root}
	const agent = "a"
	if err := os.MkdirAll(l.JournalDir(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	cur := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return cur }
	rng := rand.New(rand.NewSource(13))
	opts := journal.AppendOptions{NoSync: true, Now: clock, Root: root, SequenceFile: l.SequenceFile(agent)}
	appended := make(map[string]bool, n)
	compactions := 0
	start := time.Now()
	var inCompact time.Duration
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("record %d %s", i, strings.Repeat("w", rng.Intn(300)))
		if i%2_000 == 0 {
			text += strings.Repeat("L", 70<<10)
		}
		rec := journal.Record{Agent: agent, Kind: journal.KindObservation, Text: text}
		if _, err := journal.Append(l.JournalDir(agent), &rec, opts); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if appended[rec.UUID] {
			t.Fatalf("append %d: uuid %s handed out twice", i, rec.UUID)
		}
		appended[rec.UUID] = true
		cur = cur.Add(7 * time.Millisecond)
		if i%7_001 == 0 {
			cur = cur.Add(-3 * time.Second) // the clock steps back
		}
		if i%(n/5) == 0 {
			c0 := time.Now()
			rep, err := compaction.Compact(context.Background(), compaction.Options{Root: root, Agent: agent,
				KeepDays: -1, MaxDayLines: n / 20, Now: clock})
			if err != nil {
				t.Fatalf("compaction after %d appends: %v", i, err)
			}
			if rep.Absorbed == 0 {
				t.Fatalf("compaction after %d appends absorbed nothing", i)
			}
			compactions += len(rep.Records)
			inCompact += time.Since(c0)
		}
	}
	if compactions == 0 {
		t.Fatal("no compaction ran")
	}

	t.Logf("%d appends and %d compaction records in %v (compactions %v)", n, compactions, time.Since(start), inCompact)
	// Every line of every journal and archive: a distinct uuid.
	files, err := l.JournalFiles(agent)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	uuids := map[string]bool{}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		r := journal.NewReader(f, 0, 0)
		for {
			line, err := r.Next()
			if err != nil {
				break
			}
			if line.Err != nil {
				t.Fatalf("%s:%d: %v", p, line.Number, line.Err)
			}
			lines++
			uuids[line.Record.UUID] = true
		}
		f.Close()
	}
	if want := n + compactions; lines != want || len(uuids) != want {
		t.Fatalf("%d lines with %d distinct uuids, want %d", lines, len(uuids), want)
	}

	g, err := embedded.Open(l.LocalDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	e, err := memsync.New(memsync.Options{Root: root, Graph: g, BatchSize: 5_000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, err := memsync.Verify(context.Background(), root, g)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.GraphRecords != n+compactions {
		t.Fatalf("verify: %+v, want ok with %d records", rep, n+compactions)
	}
	if data, _ := os.ReadFile(l.RejectsFile(agent)); len(data) > 0 {
		t.Fatalf("rejects:\n%.2000s", data)
	}
}
