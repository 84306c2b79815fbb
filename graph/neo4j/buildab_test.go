package neo4j_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/memsync"
)

// TestBuildAB measures a rebuild's write path (BeginRebuild, Apply in
// agent order, FinishRebuild) with variants interleaved round after round, with the server's CPU from /proc: a same-run A/B
// that a loaded host cannot skew one way. Opt-in: MEMSYNC_BUILD_AB=1,
// MEMSYNC_NEO4J_PID the server's process, MEMSYNC_BENCH_RECORDS the size.
func TestBuildAB(t *testing.T) {
	if os.Getenv("MEMSYNC_BUILD_AB") == "" {
		t.Skip("MEMSYNC_BUILD_AB not set")
	}
	pid, _ := strconv.Atoi(os.Getenv("MEMSYNC_NEO4J_PID"))
	g := neo4jtest.Open(t)
	n := 50_000
	if v, err := strconv.Atoi(os.Getenv("MEMSYNC_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	corpus := graphtest.Corpus(42, n)
	slices.SortStableFunc(corpus, func(a, b memsync.Memory) int { return cmp.Compare(a.Agent, b.Agent) })
	// Transactions of 1000 records (the engine's batch) against 5000 (a
	// build could write larger ones: nobody reads its slot until the switch).
	variants := []struct {
		name  string
		batch int
	}{{"batches of 1000", 1000}, {"batches of 5000", 5000}}
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		for _, v := range variants {
			if err := g.BeginRebuild(ctx); err != nil {
				t.Fatal(err)
			}
			cpu0, start := procCPU(pid), time.Now()
			applyAll(t, g, corpus, v.batch)
			if err := g.FinishRebuild(ctx); err != nil {
				t.Fatal(err)
			}
			wall, cpu := time.Since(start), procCPU(pid)-cpu0
			if err := g.WaitDropped(ctx); err != nil { // the old slot's drop, not measured
				t.Fatal(err)
			}
			load, _ := os.ReadFile("/proc/loadavg")
			t.Logf("round %d %-16s %6.0f rec/s  server %5.1f CPU-s  load %s", round, v.name, float64(n)/wall.Seconds(), cpu.Seconds(),
				strings.Fields(string(load))[0])
		}
	}
}

// procCPU is the user+system CPU of process pid so far (0 if unknown).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100
}
