package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/compaction"
	"github.com/memsync/memsync/journal"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Compaction through the command: dry run first, then for real (committed
// by memsync), and the graph keeps every absorbed memory.
func TestCompactCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := ledgerRepo(t)
	var ids []string
	for i, text := range []string{"Use MySQL for #storage", "Use Postgres for #storage", "prefer short answers"} {
		kind := journal.KindDecision
		if i == 2 {
			kind = journal.KindPreference
		}
		ids = append(ids, ledgerAppend(t, repo, journal.Record{TS: t0.Add(time.Duration(i) * time.Hour), Agent: "a", Kind: kind, Text: text}))
	}
	today := ledgerAppend(t, repo, journal.Record{TS: t0.Add(72 * time.Hour), Agent: "a", Text: "today"})
	ledgerAppend(t, repo, journal.Record{TS: t0, Agent: "b", Text: "b's old line"})
	mustRun(t, "sync", "--once", "--repo", repo)
	iv := invocation{now: t0.Add(72*time.Hour + time.Minute)}

	before := gitOut(t, repo, "status", "--porcelain", "--untracked-files=all")
	r := iv.run(t, "compact", "--dry-run", "--agent", "a", "--repo", repo)
	if r.code != 0 || !strings.Contains(r.stdout, "a: would absorb 3 records\n  journal/2026-11-18.jsonl: 3 (older than the days kept)\n") ||
		!strings.Contains(r.stdout, "2026-11-18.jsonl:2 "+ids[1]+" 2026-11-18T10:00:00Z decision: Use Postgres for #storage") {
		t.Fatalf("dry run: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after := gitOut(t, repo, "status", "--porcelain", "--untracked-files=all"); after != before {
		t.Fatalf("dry run changed the work tree:\n%s\n%s", before, after)
	}

	r = iv.run(t, "compact", "--json", "--repo", repo)
	var doc passJSON[compaction.Report]
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != 0 || err != nil || len(doc.Agents) != 2 {
		t.Fatalf("compact: %d %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	a, b := doc.Agents[0], doc.Agents[1]
	if a.Absorbed != 3 || a.Commit != "committed" || len(a.Records) != 1 || b.Absorbed != 1 || b.Commit != "committed" {
		t.Fatalf("reports %+v", doc.Agents)
	}
	log := gitOut(t, repo, "log", "--format=%an|%s", "-2")
	if log != "memsync|memsync: compact b: 1 records archived\nmemsync|memsync: compact a: 3 records archived\n" {
		t.Fatalf("git log:\n%s", log)
	}
	tree := gitOut(t, repo, "ls-tree", "-r", "--name-only", "HEAD")
	for _, want := range []string{"agents/a/memory/MEMORY.md", "agents/a/memory/journal/archive/2026-11-18.jsonl",
		"agents/a/memory/journal/2026-11-21.jsonl", "agents/a/memory/entities/storage.md"} {
		if !strings.Contains(tree, want+"\n") {
			t.Fatalf("HEAD lacks %s:\n%s", want, tree)
		}
	}
	if strings.Contains(tree, "sync/") || strings.Contains(tree, ".memsync") {
		t.Fatalf("HEAD tree:\n%s", tree)
	}
	// The absorbed lines are blanked in place (the journal is never
	// replaced, so a direct writer's lines are never lost).
	if old := gitOut(t, repo, "show", "HEAD:agents/a/memory/journal/2026-11-18.jsonl"); strings.TrimSpace(old) != "" || strings.Count(old, "\n") != 3 {
		t.Fatalf("compacted journal in HEAD: %q", old)
	}
	mem, _ := os.ReadFile(memoryFile(repo, "a"))
	if !strings.Contains(string(mem), "Use Postgres for #storage") || strings.Contains(string(mem), "Use MySQL") {
		t.Fatalf("MEMORY.md:\n%s", mem)
	}

	// The daemon sees the journal rewritten and the archive grown; the graph
	// keeps every memory, and the compaction records join it.
	mustRun(t, "sync", "--once", "--repo", repo)
	r = mustRun(t, "verify", "--repo", repo)
	if !strings.HasPrefix(r.stdout, "ok: 7 journal records, 7 in the graph") {
		t.Fatalf("verify: %s", r.stdout)
	}
	nodes := strings.Join(graphNodes(t, repo), "\n")
	for _, id := range append(ids, today, a.Records[0]) {
		if !strings.Contains(nodes, `"UUID":"`+id+`"`) {
			t.Fatalf("%s not in the graph", id)
		}
	}

	// Again: nothing to do, nothing written, nothing committed.
	head := gitOut(t, repo, "rev-parse", "HEAD")
	r = iv.run(t, "compact", "--repo", repo)
	if r.code != 0 || r.stdout != "a: nothing to compact\nb: nothing to compact\n" {
		t.Fatalf("second run: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if gitOut(t, repo, "rev-parse", "HEAD") != head {
		t.Fatal("second run committed")
	}
}

func TestCompactCommandErrors(t *testing.T) {
	repo := ledgerRepo(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compact", "--agent", "../x"}, exitUsage, "invalid agent name"},
		{[]string{"compact", "--agent", "carol"}, exitUsage, `--agent: unknown agent "carol"`},
		{[]string{"compact", "now"}, exitUsage, `unexpected argument "now"`},
	} {
		r := cli(t, append(tc.args, "--repo", repo)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: %d %q", tc.args, r.code, r.stderr)
		}
	}
	// Not a git work tree: compaction works, the commit is left undone.
	plain := t.TempDir()
	os.MkdirAll(filepath.Join(plain, "agents", "a", "memory"), 0o755)
	ledgerAppend(t, plain, journal.Record{TS: t0, Agent: "a", Text: "old"})
	r := invocation{now: t0.Add(48 * time.Hour)}.run(t, "compact", "--repo", plain)
	if r.code != 0 || !strings.Contains(r.stdout, "skipped: not committed") {
		t.Fatalf("%d %q %q", r.code, r.stdout, r.stderr)
	}
	// The summary is said once, on stdout, in English: "1 record".
	if !strings.HasPrefix(r.stdout, "a: absorbed 1 record (") || strings.Contains(r.stderr, "compacted") || strings.Contains(r.stderr, "compacting") {
		t.Fatalf("summary: stdout %q stderr %q", r.stdout, r.stderr)
	}
}
