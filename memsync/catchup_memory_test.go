package memsync_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// discardGraph acknowledges every write and keeps nothing, so that what
// a test measures of the heap is what the engine itself holds.
type discardGraph struct{ memsync.Graph }

func (discardGraph) Apply(context.Context, []memsync.Memory) (memsync.ApplyResult, error) {
	return memsync.ApplyResult{}, nil
}

// A catch-up holds a bounded part of what it read (issue 50): the uuids
// whose signals the pass changed reach OnSignals in bounded sets, each uuid
// a copy that does not keep its journal line alive. Before, the daemon's
// first pass over 1M records held every uuid projected until the pass
// ended, and with it every parsed line (155 of 365 MB live at 300k).
func TestCatchUpHoldsBoundedSignals(t *testing.T) {
	const agents, perAgent, textBytes = 40, 500, 2000 // 20,000 lines of about 2 KB: 40 MB read
	root := t.TempDir()
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	text := strings.Repeat("billing ", textBytes/8)
	for a := range agents {
		name := fmt.Sprintf("agent-%03d", a)
		dir := memsync.Layout{Root: root}.JournalDir(name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, journal.FileName(base)))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for r := range perAgent {
			ts := base.Add(time.Duration(r) * time.Second)
			rec := journal.Record{UUID: fmt.Sprintf("mem_%s_%s_0001", ts.Format("20060102T150405Z"), name),
				TS: ts, Agent: name, Kind: journal.KindFact, Scope: journal.ScopeShared, Text: fmt.Sprintf("%s %d", text, r)}
			w.Write(rec.Canonical())
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	var calls, told, largest int
	var peakLive uint64
	e, err := memsync.New(memsync.Options{Root: root, Graph: discardGraph{memsynctest.NewGraph()}, BatchSize: 1000,
		OnSignals: func(uuids []string) {
			calls++
			told += len(uuids)
			largest = max(largest, len(uuids))
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peakLive = max(peakLive, ms.HeapAlloc)
		}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.SyncOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Projected != agents*perAgent {
		t.Fatalf("projected %d, want %d", rep.Projected, agents*perAgent)
	}
	if told != agents*perAgent {
		t.Fatalf("OnSignals was told %d uuids, want every one of the %d projected, once", told, agents*perAgent)
	}
	// A set reaches OnSignals once it has 8,192 uuids, at the end of the
	// write that passed that: at most one batch more.
	if calls < 2 || largest > 8192+1000 {
		t.Fatalf("OnSignals was told %d uuids in %d calls, the largest of %d: want sets of at most 9,192", told, calls, largest)
	}
	// The lines read were 40 MB; a pass that kept the line of each uuid it
	// is to tell OnSignals about would hold them all at its end.
	if peakLive > 16<<20 {
		t.Fatalf("live heap reached %d MB while OnSignals was told (40 MB of lines read): want under 16 MB", peakLive>>20)
	}
	t.Logf("%d calls, largest %d, live heap at most %.1f MB", calls, largest, float64(peakLive)/(1<<20))
}
