package cache

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// fleet returns agents × perAgent memories shaped like the daemon idle
// benchmark's fleet (cmd/bench): agents take turns, three in ten records
// are shared, entities (inline and declared) come from a skewed pool of 64,
// and some records supersede or contradict recent ones.
func fleet(seed int64, agents, perAgent int) (names []string, out []memsync.Memory) {
	rng := rand.New(rand.NewSource(seed))
	for i := range agents {
		names = append(names, fmt.Sprintf("agent-%03d", i))
	}
	var pool []string
	for i := range 64 {
		switch i % 4 {
		case 0:
			pool = append(pool, fmt.Sprintf("@Person%02d", i))
		case 1:
			pool = append(pool, fmt.Sprintf("#topic%02d", i))
		case 2:
			pool = append(pool, fmt.Sprintf("Org %02d", i))
		default:
			pool = append(pool, fmt.Sprintf("[[Page %02d]]", i))
		}
	}
	entity := rand.NewZipf(rng, 1.1, 2, uint64(len(pool)-1))
	words := strings.Fields("deploy database migration latency budget customer invoice planner retry backoff graph index " +
		"cache snapshot release rollback postgres kafka schema tenant quota alert oncall runbook contract pricing")
	kinds := []journal.Kind{journal.KindFact, journal.KindDecision, journal.KindPreference, journal.KindProcedure,
		journal.KindObservation, journal.KindTask, journal.KindReflection, journal.KindOutcome}
	n := agents * perAgent
	for i := range n {
		agent := names[i%agents]
		var text strings.Builder
		for w := range 5 + rng.Intn(24) {
			if w > 0 {
				text.WriteByte(' ')
			}
			if rng.Intn(14) == 0 {
				text.WriteString(pool[entity.Uint64()])
			} else {
				text.WriteString(words[rng.Intn(len(words))])
			}
		}
		m := mem(fmt.Sprintf("mem_%06d_%s", i, agent), agent, i, kinds[rng.Intn(len(kinds))], text.String())
		if rng.Intn(10) < 3 {
			m.Scope = journal.ScopeShared
		}
		if rng.Intn(4) == 0 {
			m.Entities = []string{pool[entity.Uint64()]}
		}
		if i >= agents && rng.Intn(10) == 0 {
			m.Supersedes = []string{out[i-agents].UUID} // the author's previous record
		}
		if i > 0 && rng.Intn(15) == 0 {
			m.ConflictsWith = []string{out[max(0, i-1-rng.Intn(200))].UUID}
		}
		out = append(out, m)
	}
	return names, out
}

// heapSampler records the largest HeapInuse seen until stopped.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func sampleHeap(every time.Duration) *heapSampler {
	s := &heapSampler{stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > s.peak.Load() {
				s.peak.Store(ms.HeapInuse)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) done() uint64 {
	close(s.stop)
	s.wg.Wait()
	return s.peak.Load()
}

// vmRSS is the process's resident set from /proc/self/status, in bytes
// (0 where there is no /proc).
func vmRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkGenerateFleet regenerates the snapshots of 100 agents with 50
// memories each (the daemon idle benchmark's fleet) from an embedded graph,
// as the daemon's Regenerator does, and reports the peak heap in use while
// generating (sampled every millisecond), the heap still live after a GC,
// and the process RSS once memory went back to the OS. The first iteration
// writes every file; later ones find them unchanged.
//
//	go test ./cache -run '^$' -bench GenerateFleet -benchtime 3x
func BenchmarkGenerateFleet(b *testing.B) {
	g, err := embedded.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	agents, recs := fleet(42, 100, 50)
	for i := 0; i < len(recs); i += 1000 {
		if _, err := g.Apply(context.Background(), recs[i:min(i+1000, len(recs))]); err != nil {
			b.Fatal(err)
		}
	}
	recs = nil
	layout := memsync.Layout{Root: b.TempDir()}
	for _, a := range agents {
		if err := os.MkdirAll(layout.JournalDir(a), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	w := NewWriter(g, layout, nil)
	debug.FreeOSMemory()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var total time.Duration
	var peak, live, rss uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := sampleHeap(time.Millisecond)
		start := time.Now()
		if _, err := w.Generate(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		peak = max(peak, s.done())
		b.StopTimer()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = max(live, ms.HeapInuse)
		rss = max(rss, vmRSS())
		b.StartTimer()
	}
	const mib = 1 << 20
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/generate")
	b.ReportMetric(float64(base.HeapInuse)/mib, "base-heap-MiB")
	b.ReportMetric(float64(peak)/mib, "peak-heap-MiB")
	b.ReportMetric(float64(live)/mib, "live-after-MiB")
	b.ReportMetric(float64(rss)/mib, "rss-after-free-MiB")
}
