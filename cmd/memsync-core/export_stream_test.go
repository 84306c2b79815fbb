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
	"github.com/memsync/memsync/journal/importer"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/read"
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

// exportInMemory is the markdown and mcp-memory export as it was before
// it streamed: the offline List of the agent's view, scored whole, handed
// to importer.Export. The streamed export must write the same bytes.
func exportInMemory(t *testing.T, repo, agent, format string, now time.Time) string {
	t.Helper()
	ctx := context.Background()
	groups := []string{journal.SharedGroup, journal.PrivateGroup(agent)}
	journals := offline.NewJournals(layout(repo))
	nodes, err := journals.List(ctx, memsync.ListQuery{Groups: groups, Limit: math.MaxInt32})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(nodes)
	scored, err := read.ScoreNodes(ctx, journals, nodes, groups, memsync.Present(now))
	if err != nil {
		t.Fatal(err)
	}
	var recs []journal.Record
	for _, n := range nodes {
		switch n.Record.Kind {
		case journal.KindFeedback, journal.KindPromotion, journal.KindCompaction:
			continue
		}
		if s, ok := scored[n.UUID]; !ok || s.Result.Retired() {
			continue
		}
		recs = append(recs, n.Record)
	}
	var b bytes.Buffer
	if err := importer.Export(&b, format, agent, recs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestExportViewIsTheScoredView: the streamed markdown and mcp-memory
// exports write exactly what the in-memory export wrote: superseded
// memories and ones flagged wrong left out (by another agent too), a
// clash as its winning version, another agent's private memories never,
// entities grouped across days, links as relations.
func TestExportViewIsTheScoredView(t *testing.T) {
	repo := initRepo(t, "a", "b")
	ts := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	id := func(agent string, i int) string { return fmt.Sprintf("mem_20261120T090000Z_%s_%04d", agent, i) }
	rec := func(agent string, i int, scope journal.Scope, kind journal.Kind, text string) journal.Record {
		return journal.Record{UUID: id(agent, i), TS: ts.Add(time.Duration(i) * time.Minute),
			Agent: agent, Kind: kind, Scope: scope, Text: text}
	}
	old := rec("a", 1, journal.ScopeShared, journal.KindDecision, "Use MySQL for @storage")
	newer := rec("a", 5, journal.ScopeShared, journal.KindDecision, "Use Postgres for @storage")
	newer.Supersedes = []string{old.UUID}
	linked := rec("b", 6, journal.ScopeShared, journal.KindObservation, "the @billing service reads @storage")
	linked.Links = []string{newer.UUID, id("a", 3)}
	writeJournal(t, repo, "a", "2026-11-20", []journal.Record{old,
		rec("a", 2, journal.ScopePrivate, journal.KindFact, "a private <b>fact</b> & \"quotes\""),
		rec("a", 3, journal.ScopeShared, journal.KindFact, "the port is 5433"), newer})
	writeJournal(t, repo, "b", "2026-11-20", []journal.Record{rec("b", 4, journal.ScopePrivate, journal.KindFact, "b private"), linked,
		rec("b", 7, journal.ScopeShared, journal.KindFact, "wrong: the port is 1234")})
	// A clash: b's 0007 again, in a later file, with other content.
	writeJournal(t, repo, "b", "2026-11-21", []journal.Record{rec("b", 7, journal.ScopeShared, journal.KindFact, "the @billing port is 8080"),
		rec("b", 8, journal.ScopeShared, journal.KindProcedure, "deploy with\nmake deploy")})
	for _, flag := range []invocation{{}} {
		if r := flag.run(t, "flag", id("a", 3), "--wrong", "--agent", "b", "--repo", repo); r.code != 0 {
			t.Fatalf("flag: %d %s", r.code, r.stderr)
		}
	}
	now := time.Date(2026, 11, 21, 9, 15, 0, 0, time.UTC) // invocation's clock
	for _, format := range []string{"markdown", "mcp-memory"} {
		for _, agent := range []string{"a", "b"} {
			r := cli(t, "export", "--agent", agent, "--format", format, "--repo", repo)
			if r.code != 0 {
				t.Fatalf("export %s: %d %s", format, r.code, r.stderr)
			}
			want := exportInMemory(t, repo, agent, format, now)
			if r.stdout != want {
				t.Errorf("export --agent %s --format %s:\n%s\nthe in-memory export:\n%s", agent, format, r.stdout, want)
			}
			for _, gone := range []string{"MySQL", "5433"} {
				if strings.Contains(r.stdout, gone) {
					t.Errorf("export --agent %s --format %s holds %q (superseded or flagged wrong):\n%s", agent, format, gone, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "1234") == strings.Contains(r.stdout, "8080") {
				t.Errorf("export --agent %s --format %s: a clash's versions, want exactly one:\n%s", agent, format, r.stdout)
			}
		}
	}
}

// TestExportViewStreams is issue 51 §6 for markdown and mcp-memory:
// exporting holds an index of the journals, not their records (the
// export used to hold every record, parsed, scored, many times the
// journals' bytes).
func TestExportViewStreams(t *testing.T) {
	repo := initRepo(t, "a")
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var size int64
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 12)
	for day := range 20 {
		recs := make([]journal.Record, 2000)
		for i := range recs {
			n := day*2000 + i
			recs[i] = journal.Record{UUID: fmt.Sprintf("mem_20260101T000000Z_a_%06d", n), TS: ts.Add(time.Duration(n) * time.Second),
				Agent: "a", Kind: journal.KindObservation, Text: fmt.Sprintf("observation %d on @topic%d: %s", n, n%50, pad), Tags: []string{"bulk", "export"}}
		}
		size += writeJournal(t, repo, "a", ts.AddDate(0, 0, day).Format("2006-01-02"), recs)
	}
	for _, format := range []string{"markdown", "mcp-memory"} {
		t.Run(format, func(t *testing.T) {
			grew, code := heapGrowth(func() int {
				env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
					Getenv: func(string) string { return "" }, Now: time.Now, Getwd: os.Getwd}
				return Main(context.Background(), env, []string{"export", "--agent", "a", "--format", format, "--repo", repo})
			})
			if code != 0 {
				t.Fatalf("export: exit %d", code)
			}
			t.Logf("journals %d MB; heap grew by %d MB at most", size>>20, grew>>20)
			if grew > size {
				t.Fatalf("exporting %d MB of journals as %s grew the heap by %d MB: the export holds the records", size>>20, format, grew>>20)
			}
		})
	}
}

// heapGrowth runs fn under a tight GC and returns by how much the heap in
// use grew at most while it ran, and what fn returned.
func heapGrowth(fn func() int) (int64, int) {
	// A tight GC, so that the heap follows what fn keeps, not the garbage
	// of parsing each line.
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
	code := fn()
	close(stop)
	<-sampled
	return int64(peak.Load()) - int64(base.HeapInuse), code
}
