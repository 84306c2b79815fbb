package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
)

// writeJournal appends recs to agent's journal file day as canonical lines.
func writeJournal(t *testing.T, repo, agent, day string, recs []journal.Record) int64 {
	t.Helper()
	var b bytes.Buffer
	for i := range recs {
		b.Write(recs[i].Canonical())
		b.WriteByte('\n')
	}
	path := filepath.Join(journalDir(repo, agent), day+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	return int64(b.Len())
}

// TestExportJSONLIsTheListedView: the streamed jsonl export is exactly
// the agent's view as the offline List gives it, oldest first: shared
// records of others, its own private ones, never another's private ones,
// a uuid clash as its winning version, a line that is not a record left out.
func TestExportJSONLIsTheListedView(t *testing.T) {
	repo := initRepo(t, "a", "b")
	ts := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	rec := func(agent string, i int, scope journal.Scope, text string) journal.Record {
		return journal.Record{UUID: fmt.Sprintf("mem_20261120T090000Z_%s_%04d", agent, i), TS: ts.Add(time.Duration(i) * time.Minute),
			Agent: agent, Kind: journal.KindFact, Scope: scope, Text: text}
	}
	writeJournal(t, repo, "a", "2026-11-20", []journal.Record{rec("a", 1, journal.ScopePrivate, "a private"), rec("a", 3, journal.ScopeShared, "a shared")})
	writeJournal(t, repo, "b", "2026-11-20", []journal.Record{rec("b", 2, journal.ScopeShared, "b shared"), rec("b", 4, journal.ScopePrivate, "b private")})
	// A clash: b's 0002 again, private (private wins), in a later file.
	writeJournal(t, repo, "b", "2026-11-21", []journal.Record{rec("b", 2, journal.ScopePrivate, "b's private version of 0002")})
	f, _ := os.OpenFile(filepath.Join(journalDir(repo, "a"), "2026-11-20.jsonl"), os.O_WRONLY|os.O_APPEND, 0o644)
	f.WriteString("{not a record}\n")
	f.Close()
	r := cli(t, "export", "--agent", "a", "--format", "jsonl", "--repo", repo)
	if r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	groups := []string{journal.SharedGroup, journal.PrivateGroup("a")}
	nodes, err := offline.NewJournals(layout(repo)).List(context.Background(), memsync.ListQuery{Groups: groups, Limit: math.MaxInt32})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(nodes)
	var want strings.Builder
	for _, n := range nodes {
		want.Write(n.Record.Canonical())
		want.WriteByte('\n')
	}
	if r.stdout != want.String() {
		t.Fatalf("export:\n%s\nthe listed view:\n%s", r.stdout, want.String())
	}
	if strings.Contains(r.stdout, "b private") || strings.Contains(r.stdout, "b shared") || !strings.Contains(r.stdout, "a private") {
		t.Fatalf("export holds the wrong records:\n%s", r.stdout)
	}
}

// TestExportJSONLStreams is issue 51 §12: exporting an agent's journals
// holds an index of them, not their records: the heap grows by well under
// the journals' size (the export used to hold every record, parsed, many
// times the bytes).
func TestExportJSONLStreams(t *testing.T) {
	repo := initRepo(t, "a")
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var size int64
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 12)
	for day := range 20 {
		recs := make([]journal.Record, 2000)
		for i := range recs {
			n := day*2000 + i
			recs[i] = journal.Record{UUID: fmt.Sprintf("mem_20260101T000000Z_a_%06d", n), TS: ts.Add(time.Duration(n) * time.Second),
				Agent: "a", Kind: journal.KindObservation, Text: fmt.Sprintf("observation %d: %s", n, pad), Tags: []string{"bulk", "export"}}
		}
		size += writeJournal(t, repo, "a", ts.AddDate(0, 0, day).Format("2006-01-02"), recs)
	}
	// A tight GC, so that the heap follows what the export keeps, not
	// the garbage of parsing each line.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(string) string { return "" }, Now: time.Now, Getwd: os.Getwd}
	code := Main(context.Background(), env, []string{"export", "--agent", "a", "--format", "jsonl", "--repo", repo})
	close(stop)
	<-sampled
	if code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	grew := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("journals %d MB; heap grew by %d MB at most", size>>20, grew>>20)
	if grew > size {
		t.Fatalf("exporting %d MB of journals grew the heap by %d MB: the export holds the records", size>>20, grew>>20)
	}
}
