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
	"sync"
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
	// Transactions of 1000 records (the engine's batch) against the same
	// batches from two lanes at once, each lane a disjoint set of agents
	// (two transactions in flight, which a rebuild could feed: nobody
	// reads its slot until the switch).
	variants := []struct {
		name  string
		batch int
		lanes int
	}{{"batches of 1000", 1000, 1}, {"two agent lanes", 1000, 2}}
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		for _, v := range variants {
			if err := g.BeginRebuild(ctx); err != nil {
				t.Fatal(err)
			}
			cpu0, start := procCPU(pid), time.Now()
			var wg sync.WaitGroup
			for _, lane := range agentLanes(corpus, v.lanes) {
				wg.Add(1)
				go func() { // t.Errorf, not applyAll's Fatalf: another goroutine
					defer wg.Done()
					for i := 0; i < len(lane); i += v.batch {
						if _, err := g.Apply(ctx, lane[i:min(i+v.batch, len(lane))]); err != nil {
							t.Errorf("Apply at %d: %v", i, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			if err := g.FinishRebuild(ctx); err != nil {
				t.Fatal(err)
			}
			wall, cpu := time.Since(start), procCPU(pid)-cpu0
			if st, err := g.Stats(ctx); err != nil || st.Memories != n {
				t.Fatalf("%s: %d memories after the build, want %d (%v)", v.name, st.Memories, n, err)
			}
			if err := g.WaitDropped(ctx); err != nil { // the old slot's drop, not measured
				t.Fatal(err)
			}
			load, _ := os.ReadFile("/proc/loadavg")
			t.Logf("round %d %-16s %6.0f rec/s  server %5.1f CPU-s  load %s", round, v.name, float64(n)/wall.Seconds(), cpu.Seconds(),
				strings.Fields(string(load))[0])
		}
	}
}

// agentLanes splits corpus (in agent order) into n lanes of whole agents,
// each agent to the lane holding the fewest records so far.
func agentLanes(corpus []memsync.Memory, n int) [][]memsync.Memory {
	lanes := make([][]memsync.Memory, n)
	for i := 0; i < len(corpus); {
		j := i
		for j < len(corpus) && corpus[j].Agent == corpus[i].Agent {
			j++
		}
		least := 0
		for k := range lanes {
			if len(lanes[k]) < len(lanes[least]) {
				least = k
			}
		}
		lanes[least] = append(lanes[least], corpus[i:j]...)
		i = j
	}
	return lanes
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
