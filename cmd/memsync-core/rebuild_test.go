package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/ledger"
	"github.com/memsync/memsync/memsync"
)

// ledgerRepo is a repository made by memsync init (a git work tree) for
// agents a and b.
func ledgerRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if r := cli(t, "init", "--repo", dir, "--agent", "a", "--agent", "b"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	return dir
}

// ledgerAppend appends a record to agent's journal and returns its uuid.
func ledgerAppend(t *testing.T, repo string, r journal.Record) string {
	t.Helper()
	if r.Kind == "" {
		r.Kind = journal.KindObservation
	}
	if _, err := journal.Append(journalDir(repo, r.Agent), &r, journal.AppendOptions{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	return r.UUID
}

// graphNodes is everything the embedded graph of repo holds, one JSON
// document per node, in uuid order.
func graphNodes(t *testing.T, repo string) []string {
	t.Helper()
	g, err := embedded.Open(localDir(repo), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var out []string
	err = g.Walk(context.Background(), func(n memsync.Node) error {
		b, err := json.Marshal(n)
		out = append(out, string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := cli(t, args...)
	if r.code != 0 {
		t.Fatalf("memsync %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

var t0 = time.Date(2026, 11, 18, 9, 0, 0, 0, time.UTC)

// A wiped graph, rebuilt, is the graph the daemon built incrementally.
func TestRebuildMatchesTheIncrementalProjection(t *testing.T) {
	repo := ledgerRepo(t)
	d1 := ledgerAppend(t, repo, journal.Record{TS: t0, Agent: "a", Kind: journal.KindDecision, Text: "Use MySQL for #storage"})
	mustRun(t, "sync", "--once", "--repo", repo)
	ledgerAppend(t, repo, journal.Record{TS: t0.Add(time.Hour), Agent: "a", Kind: journal.KindDecision, Text: "Use Postgres for #storage", Supersedes: []string{d1}})
	ledgerAppend(t, repo, journal.Record{TS: t0.Add(2 * time.Hour), Agent: "b", Scope: journal.ScopeShared, Text: "@a said so", Links: []string{d1, "mem_not_yet"}})
	mustRun(t, "sync", "--once", "--repo", repo)
	f, _ := os.OpenFile(filepath.Join(journalDir(repo, "a"), "2026-11-18.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{broken\n")
	f.Close()
	for i := 0; i < 30; i++ {
		ledgerAppend(t, repo, journal.Record{TS: t0.Add(time.Duration(24+i) * time.Hour), Agent: "b", Text: fmt.Sprintf("note %d about [[Project %d]]", i, i%3)})
	}
	os.MkdirAll(archiveDir(repo, "a"), 0o755)
	os.WriteFile(filepath.Join(archiveDir(repo, "a"), "2026-11-01.jsonl"),
		[]byte(`{"uuid":"mem_not_yet","ts":"2026-11-01T00:00:00Z","agent":"a","kind":"fact","text":"archived"}`+"\n"), 0o644)
	mustRun(t, "sync", "--once", "--repo", repo)
	incremental := graphNodes(t, repo)
	if len(incremental) != 34 {
		t.Fatalf("%d nodes after the incremental projection", len(incremental))
	}

	if r := cli(t, "rebuild", "--repo", repo); r.code != exitUsage || !strings.Contains(r.stderr, "--yes") || r.stdout != "" {
		t.Fatalf("rebuild without --yes: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if err := os.RemoveAll(localDir(repo)); err != nil { // the graph is gone
		t.Fatal(err)
	}
	r := mustRun(t, "rebuild", "--yes", "--repo", repo)
	if !strings.Contains(r.stdout, ": 34 records from the work tree's journals") ||
		!strings.Contains(r.stdout, "verify ok: 34 journal records, 34 in the graph; missing 0, extra 0, different 0") {
		t.Fatalf("rebuild output:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "rebuild journals") {
		t.Fatalf("no progress lines on stderr:\n%s", r.stderr)
	}
	if got := graphNodes(t, repo); strings.Join(got, "\n") != strings.Join(incremental, "\n") {
		t.Fatalf("rebuilt graph differs from the incremental one:\n%s\n---\n%s", strings.Join(got, "\n"), strings.Join(incremental, "\n"))
	}
	mustRun(t, "verify", "--repo", repo)
	// Cursors stand at the end: the daemon has nothing left to do.
	if r := mustRun(t, "sync", "--once", "--repo", repo); r.stdout != "projected 0, queued 0, rejected 0, outbox 0\n" {
		t.Fatalf("sync after rebuild: %q", r.stdout)
	}
	// Rebuilding over a full graph gives the same graph again.
	r = mustRun(t, "rebuild", "--yes", "--json", "--repo", repo)
	var doc rebuildJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Projected != 34 || !doc.Verify.OK ||
		!doc.Verify.JournalsFromRebuild || doc.Verify.Lines != 35 || doc.Verify.Rejected != 1 {
		t.Fatalf("--json (verify from the rebuild's own read, the broken line counted): %v %s", err, r.stdout)
	}
	if left, _ := filepath.Glob(filepath.Join(localDir(repo), ".tally-*")); len(left) > 0 {
		t.Fatalf("the rebuild left its tally behind: %v", left)
	}
	if got := graphNodes(t, repo); strings.Join(got, "\n") != strings.Join(incremental, "\n") {
		t.Fatal("second rebuild differs")
	}
}

// A journal deleted in a later commit is gone from the work tree; rebuild
// --from-history finds its records in the commits before.
func TestRebuildFromHistoryRecoversADeletedJournal(t *testing.T) {
	repo := ledgerRepo(t)
	c, err := ledger.NewCommitter(ledger.CommitterOptions{Root: repo})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var lost []string
	for i := 0; i < 5; i++ {
		lost = append(lost, ledgerAppend(t, repo, journal.Record{TS: t0, Agent: "a", Text: fmt.Sprintf("lost %d", i)}))
	}
	kept := ledgerAppend(t, repo, journal.Record{TS: t0.Add(48 * time.Hour), Agent: "a", Text: "kept"})
	if _, err := c.CommitNow(ctx, "journals"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(journalDir(repo, "a"), "2026-11-18.jsonl"))
	if res, err := c.CommitNow(ctx, "oops"); err != nil || len(res.Files) != 1 {
		t.Fatalf("%+v %v", res, err)
	}

	mustRun(t, "rebuild", "--yes", "--repo", repo)
	if n := len(graphNodes(t, repo)); n != 1 {
		t.Fatalf("work tree rebuild: %d nodes", n)
	}
	r := mustRun(t, "rebuild", "--from-history", "--yes", "--repo", repo)
	if !strings.Contains(r.stdout, "6 records read from history, 5 found only there") ||
		!strings.Contains(r.stdout, "verify ok: 1 journal records, 6 in the graph; missing 0, extra 5") {
		t.Fatalf("output:\n%s", r.stdout)
	}
	nodes := strings.Join(graphNodes(t, repo), "\n")
	for _, id := range append(lost, kept) {
		if !strings.Contains(nodes, `"UUID":"`+id+`"`) {
			t.Fatalf("%s not recovered:\n%s", id, nodes)
		}
	}
	if !strings.Contains(nodes, `"Path":"agents/a/memory/journal/2026-11-18.jsonl"`) {
		t.Fatal("recovered records should name the journal they were read from")
	}
	noGit := t.TempDir()
	os.MkdirAll(filepath.Join(noGit, "agents"), 0o755) // a memory repository, but no git work tree
	if r := cli(t, "rebuild", "--from-history", "--yes", "--repo", noGit); r.code != exitUsage || !strings.Contains(r.stderr, "git") {
		t.Fatalf("no git: %d %q", r.code, r.stderr)
	}
}

func TestProgressLines(t *testing.T) {
	var b strings.Builder
	clock := t0
	p := newProgress(&b, func() time.Time { return clock })
	clock = clock.Add(5 * time.Second)
	p.add(0) // before the total is counted: no bar
	p.total.Store(100)
	for i := 0; i < 10; i++ {
		clock = clock.Add(time.Second)
		p.add(10)
	}
	p.phase("history")
	p.add(7)
	p.done()
	out := b.String()
	for _, want := range []string{
		"rebuild journals [###############...............]  50% 50/100 records, 10s\n",
		"rebuild journals [##############################] 100% 100/100 records, 15s\n",
		"rebuild journals: 0 records, 5s\n",
		"rebuild history: 7 records, 0s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
}

// A squatted uuid found only in history (a wrote b's next uuid, back-dated,
// and deleted the line later) is rejected by rebuild --from-history as by
// every other path: b's record keeps its uuid.
func TestRebuildFromHistoryRejectsSquattedUUIDs(t *testing.T) {
	repo := ledgerRepo(t)
	c, err := ledger.NewCommitter(ledger.CommitterOptions{Root: repo})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	squat := journal.Record{UUID: "mem_20261118T090000Z_b_0001", TS: t0.Add(-time.Hour), Agent: "a", Kind: journal.KindFact,
		Scope: journal.ScopePrivate, Text: "squatted from history"}
	path := filepath.Join(journalDir(repo, "a"), "2026-11-18.jsonl")
	if err := os.WriteFile(path, append(squat.Canonical(), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CommitNow(ctx, "squat"); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if _, err := c.CommitNow(ctx, "hide it"); err != nil {
		t.Fatal(err)
	}
	if id := ledgerAppend(t, repo, journal.Record{TS: t0, Agent: "b", Text: "b's own record"}); id != squat.UUID {
		t.Fatalf("b's append wrote %s, want %s", id, squat.UUID)
	}
	mustRun(t, "rebuild", "--from-history", "--yes", "--repo", repo)
	nodes := strings.Join(graphNodes(t, repo), "\n")
	if strings.Contains(nodes, "squatted") || !strings.Contains(nodes, "b's own record") {
		t.Fatalf("graph after rebuild --from-history:\n%s", nodes)
	}
}
