package memsync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	readpath "github.com/memsync/memsync/memsync/read"
)

// TestRebuildOnASharedGraphIsNoticed is issue 25 §5: two hosts project
// their clones of one memory into one Neo4j; host 2 holds records git has
// not carried to host 1 yet. `memsync rebuild` on host 1 drops every
// host's nodes and projects host 1's journals. Host 2's engine, already
// running (its cursors at the end of its journals), notices the graph's
// new generation on its next pass and projects its journals again; status
// on host 2 says its records are pending until then. Once git carries host
// 2's lines to host 1, verify is ok on both hosts.
func TestRebuildOnASharedGraphIsNoticed(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	host1, host2 := t.TempDir(), t.TempDir()
	engine := func(root string) *memsync.Engine {
		e, err := memsync.New(memsync.Options{Root: root, Graph: g, Logger: zaptest.NewLogger(t), BatchSize: 50})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	add := func(root, host string, n int, what string) {
		t.Helper()
		dir := memsync.Layout{Root: root}.JournalDir("ada")
		for i := 0; i < n; i++ {
			rec := journal.Record{Agent: "ada", Kind: journal.KindObservation, Text: what,
				TS: time.Date(2026, 11, 20, 10, 0, i, 0, time.UTC)}
			if _, err := journal.Append(dir, &rec, journal.AppendOptions{NoSync: true, Host: host}); err != nil {
				t.Fatal(err)
			}
		}
	}
	journalFile := func(root string) string {
		return filepath.Join(memsync.Layout{Root: root}.JournalDir("ada"), "2026-11-20.jsonl")
	}
	carry := func(from, to string) { // what a git pull brings: the other host's file
		t.Helper()
		data, err := os.ReadFile(journalFile(from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(journalFile(to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	syncOnce := func(e *memsync.Engine) {
		t.Helper()
		if _, err := e.SyncOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	verify := func(root string) memsync.VerifyReport {
		t.Helper()
		rep, err := memsync.Verify(ctx, root, g)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	add(host1, "one", 3, "seen on host 1")
	if err := os.MkdirAll(memsync.Layout{Root: host2}.JournalDir("ada"), 0o755); err != nil {
		t.Fatal(err)
	}
	carry(host1, host2)
	add(host2, "two", 5, "seen on host 2, not carried yet")
	daemon1, daemon2 := engine(host1), engine(host2)
	syncOnce(daemon1)
	syncOnce(daemon2)
	if rep := verify(host2); !rep.OK || rep.GraphRecords != 8 {
		t.Fatalf("before the rebuild: %+v", rep)
	}

	if _, err := engine(host1).Rebuild(ctx, nil); err != nil { // `memsync rebuild` on host 1
		t.Fatal(err)
	}
	if rep := verify(host2); rep.Missing != 5 {
		t.Fatalf("after host 1's rebuild, host 2's verify: %+v, want 5 missing", rep)
	}
	st, err := memsync.Status(ctx, host2, g, "neo4j", time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Agents[0]; a.Projected != 3 || a.JournalRecords != 8 || a.LagSeconds == 0 {
		t.Errorf("host 2's status after the rebuild: %+v, want 3 of 8 projected and a lag", a)
	}

	syncOnce(daemon2) // host 2's running daemon, next pass
	if rep := verify(host2); !rep.OK || rep.GraphRecords != 8 {
		t.Fatalf("host 2's records did not come back: %+v", rep)
	}
	syncOnce(daemon1) // host 1's daemon: the rebuild made its cursors
	carry(host2, host1)
	syncOnce(daemon1)
	for _, root := range []string{host1, host2} {
		if rep := verify(root); !rep.OK || rep.GraphRecords != 8 || rep.JournalRecords != 8 {
			t.Errorf("verify on %s: %+v", root, rep)
		}
	}

	// A second pass changes nothing: the generation is taken once.
	syncOnce(daemon2)
	rep, err := daemon2.SyncOnce(ctx)
	if err != nil || rep.Projected != 0 {
		t.Errorf("a pass after catching up projected %d (%v)", rep.Projected, err)
	}
}

// TestRebuildOverAFullGraphKeepsAnswering is issue 30: `memsync rebuild`
// over a graph that holds another projection used to delete it first, so
// every search meanwhile found nothing or part of it. Now (Rebuilder) a
// second client's reads answer from the old projection, whole, until the
// switch, then from the new one, whole: never empty, never a mix.
func TestRebuildOverAFullGraphKeepsAnswering(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	write := func(root, what string, n int) {
		t.Helper()
		dir := memsync.Layout{Root: root}.JournalDir("ada")
		for i := 0; i < n; i++ {
			rec := journal.Record{Agent: "ada", Kind: journal.KindObservation, Scope: journal.ScopeShared,
				Text: "alpaca " + what + " note", TS: time.Date(2026, 11, 20, 10, 0, 0, i, time.UTC)}
			if _, err := journal.Append(dir, &rec, journal.AppendOptions{NoSync: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	engine := func(root string) *memsync.Engine {
		e, err := memsync.New(memsync.Options{Root: root, Graph: g, Logger: zaptest.NewLogger(t), BatchSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	const nOld, nNew = 1500, 3000
	old, fresh := t.TempDir(), t.TempDir()
	write(old, "old", nOld)
	write(fresh, "new", nNew)
	if _, err := engine(old).SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}

	reader, err := neo4j.Open(ctx, neo4jtest.Config(t), nil) // another process's client
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	// read answers which projection Stats, then Search, answered from:
	// each must be one whole projection.
	read := func() []string {
		st, err := reader.Stats(ctx)
		if err != nil {
			t.Error(err)
			return []string{"error"}
		}
		var out []string
		switch st.Memories {
		case nOld:
			out = append(out, "old")
		case nNew:
			out = append(out, "new")
		default:
			out = append(out, fmt.Sprintf("Stats counted %d memories", st.Memories))
		}
		hits, err := readpath.Search(ctx, reader, memsync.SearchQuery{Text: "alpaca note", Groups: []string{journal.SharedGroup}, Limit: 20})
		if err != nil {
			t.Error(err)
			return []string{"error"}
		}
		gens := map[string]bool{}
		for _, h := range hits {
			gens[strings.Fields(h.Text)[1]] = true
		}
		if len(hits) == 20 && len(gens) == 1 {
			for g := range gens {
				out = append(out, g)
			}
		} else {
			out = append(out, fmt.Sprintf("search found %d hits from %v", len(hits), gens))
		}
		return out
	}
	done := make(chan struct{})
	var seen []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			seen = append(seen, read()...)
		}
	}()
	_, err = engine(fresh).Rebuild(ctx, nil)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for i, s := range seen {
		counts[s]++
		if s != "old" && s != "new" || s == "old" && i > 0 && seen[i-1] == "new" {
			t.Errorf("read %d during the rebuild: %s after %s", i, s, seen[max(i-1, 0)])
		}
	}
	t.Logf("reads during the rebuild: %v", counts)
	if counts["old"] == 0 {
		t.Fatalf("no read answered during the rebuild: %v", counts)
	}
	if got := read(); got[0] != "new" || got[1] != "new" {
		t.Fatalf("after the rebuild: %v", got)
	}
}
