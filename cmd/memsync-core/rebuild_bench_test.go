package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/ledger"
)

// TestRebuildBenchmark times `memsync rebuild` (the real binary, so that the
// peak RSS is the command's alone) on a work tree of many records and on a
// history of many commits, and logs the figures. It is a test behind a
// switch rather than a Go benchmark because one run takes minutes:
//
//	MEMSYNC_BENCH_REBUILD=1 go test -run TestRebuildBenchmark -v -timeout 60m ./cmd/memsync-core
//
// MEMSYNC_BENCH_RECORDS (default 1000000) sizes the work tree,
// MEMSYNC_BENCH_COMMITS (default 1000) the history, MEMSYNC_BENCH_GRAPH
// (embedded, neo4j or both; default embedded) the backends. Targets: 1M
// records in 60 s on the embedded store, 120 s on Neo4j, peak RSS 300 MB.
func TestRebuildBenchmark(t *testing.T) {
	if os.Getenv("MEMSYNC_BENCH_REBUILD") == "" {
		t.Skip("set MEMSYNC_BENCH_REBUILD=1 to run the rebuild benchmark")
	}
	records := envInt(t, "MEMSYNC_BENCH_RECORDS", 1_000_000)
	commits := envInt(t, "MEMSYNC_BENCH_COMMITS", 1000)
	backends := strings.Split(os.Getenv("MEMSYNC_BENCH_GRAPH"), ",")
	if backends[0] == "" {
		backends = []string{graphEmbedded}
	} else if backends[0] == "both" {
		backends = []string{graphEmbedded, graphNeo4j}
	}
	bin := benchBinary(t)

	tree := t.TempDir()
	start := time.Now()
	writeBenchJournals(t, tree, records)
	t.Logf("work tree: %d records written in %s (%s of journals)", records, time.Since(start).Round(time.Millisecond), dirSize(t, tree))

	hist := t.TempDir()
	start = time.Now()
	perCommit := writeBenchHistory(t, hist, commits)
	t.Logf("history: %d commits of %d records each in %s (%s in .git)", commits, perCommit, time.Since(start).Round(time.Millisecond),
		dirSize(t, filepath.Join(hist, ".git")))

	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			env := []string{"MEMSYNC_GRAPH=" + backend, "MEMSYNC_LOG_LEVEL=warn"}
			if backend == graphNeo4j {
				neo4jtest.Open(t) // skips without a server; holds the shared server for this test
				env = append(env, "MEMSYNC_NEO4J_URI="+os.Getenv("MEMSYNC_NEO4J_URI"))
			}
			runBenchRebuild(t, bin, tree, env, "work tree", "--yes")
			runBenchRebuild(t, bin, hist, env, "history", "--yes", "--from-history")
		})
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

func benchBinary(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "memsync")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBenchRebuild runs memsync rebuild on repo and logs its wall time, CPU
// time and peak RSS (from wait4's rusage).
func runBenchRebuild(t *testing.T, bin, repo string, env []string, what string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"rebuild", "--repo", repo}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		t.Fatalf("rebuild %s: %v\n%s\n%s", what, err, out, tail(stderr.String(), 2000))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	t.Logf("rebuild %s: wall %s, cpu %s, peak RSS %d MB\n%s", what, wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
		ru.Maxrss/1024, strings.TrimSpace(string(out)))
	if !strings.Contains(string(out), "verify ok") {
		t.Errorf("rebuild %s did not verify clean", what)
	}
}

// benchText makes a plausible record text of 60 to 250 bytes.
func benchText(rng *rand.Rand, i int) string {
	words := []string{"deploy", "pricing", "roadmap", "review", "latency", "customer", "contract", "retry", "schema",
		"cache", "index", "budget", "release", "incident", "migration", "vendor", "meeting", "draft", "metric", "owner"}
	var b strings.Builder
	n := 8 + rng.Intn(30)
	for w := 0; w < n; w++ {
		if w > 0 {
			b.WriteByte(' ')
		}
		switch r := rng.Intn(40); {
		case r == 0:
			fmt.Fprintf(&b, "@person%d", rng.Intn(50))
		case r == 1:
			fmt.Fprintf(&b, "#topic%d", rng.Intn(200))
		default:
			b.WriteString(words[rng.Intn(len(words))])
		}
	}
	fmt.Fprintf(&b, " (%d)", i)
	return b.String()
}

// writeBenchJournals writes n records across 10 agents and their daily
// journals (1,000 records a day), as memsync append would write them, with
// links, supersedes, tags and a share of shared records.
func writeBenchJournals(t *testing.T, root string, n int) {
	rng := rand.New(rand.NewSource(1))
	agents := 10
	kinds := []journal.Kind{journal.KindObservation, journal.KindFact, journal.KindDecision, journal.KindTask,
		journal.KindPreference, journal.KindProcedure, journal.KindOutcome}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	perAgent := (n + agents - 1) / agents
	written := 0
	for a := 0; a < agents && written < n; a++ {
		agent := fmt.Sprintf("agent%02d", a)
		dir := journalDir(root, agent)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var f *os.File
		var w *bufio.Writer
		day := -1
		var prev []string
		for i := 0; i < perAgent && written < n; i++ {
			ts := start.Add(time.Duration(i) * 86 * time.Second) // ~1,000 a day
			if d := int(ts.Sub(start).Hours() / 24); d != day {
				if w != nil {
					w.Flush()
					f.Close()
				}
				day = d
				var err error
				f, err = os.Create(filepath.Join(dir, journal.FileName(ts)))
				if err != nil {
					t.Fatal(err)
				}
				w = bufio.NewWriterSize(f, 1<<20)
			}
			r := journal.Record{UUID: fmt.Sprintf("mem_%s_%s_%04d", journal.UUIDTime(ts), agent, 1), TS: ts, Agent: agent,
				Kind: kinds[rng.Intn(len(kinds))], Scope: journal.ScopePrivate, Text: benchText(rng, written)}
			if rng.Intn(5) == 0 {
				r.Scope = journal.ScopeShared
			}
			if rng.Intn(3) == 0 {
				r.Tags = []string{fmt.Sprintf("t%d", rng.Intn(30))}
			}
			if len(prev) > 0 && rng.Intn(4) == 0 {
				r.Links = []string{prev[rng.Intn(len(prev))]}
			}
			if len(prev) > 0 && rng.Intn(20) == 0 {
				r.Supersedes = []string{prev[len(prev)-1]}
			}
			if len(prev) < 100 {
				prev = append(prev, r.UUID)
			} else {
				prev[rng.Intn(100)] = r.UUID
			}
			w.Write(r.Canonical())
			w.WriteByte('\n')
			written++
		}
		if w != nil {
			w.Flush()
			f.Close()
		}
	}
}

// writeBenchHistory makes commits commits through the ledger, each
// appending a batch of records to two agents' journals (a new day every ten
// commits), and returns the records per commit.
func writeBenchHistory(t *testing.T, root string, commits int) int {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if r := cli(t, "init", "--repo", root); r.code != 0 {
		t.Fatal(r.stderr)
	}
	c, err := ledger.NewCommitter(ledger.CommitterOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(2))
	const perCommit = 100
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	seq := 0
	for i := 0; i < commits; i++ {
		for j := 0; j < perCommit; j++ {
			agent := fmt.Sprintf("agent%d", j%2)
			ts := start.Add(time.Duration(i/10)*24*time.Hour + time.Duration(seq%86400)*time.Second)
			r := journal.Record{UUID: fmt.Sprintf("mem_h%07d_%s", seq, agent), TS: ts, Agent: agent,
				Kind: journal.KindObservation, Scope: journal.ScopePrivate, Text: benchText(rng, seq)}
			seq++
			if _, err := journal.Append(journalDir(root, agent), &r, journal.AppendOptions{NoSync: true}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.CommitNow(context.Background(), fmt.Sprintf("commit %d", i)); err != nil {
			t.Fatal(err)
		}
		// Every hundredth commit deletes the oldest day: its records live
		// on only in history.
		if i%100 == 99 {
			for a := 0; a < 2; a++ {
				files, _ := layout(root).JournalFiles(fmt.Sprintf("agent%d", a))
				if len(files) > 1 {
					os.Remove(files[0])
				}
			}
		}
	}
	return perCommit
}

func dirSize(t *testing.T, dir string) string {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
