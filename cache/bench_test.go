package cache

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/graphtest"
)

// BenchmarkRender renders the snapshots of the five corpus agents from an
// embedded graph of 100,000 memories, in one walk, and reports the time
// (wall and CPU) and the heap in use at the end of the render (the
// snapshots themselves included).
func BenchmarkRender(b *testing.B) {
	g, err := embedded.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	corpus := graphtest.Corpus(42, 100_000)
	for i := 0; i < len(corpus); i += 1000 {
		if _, err := g.Apply(context.Background(), corpus[i:min(i+1000, len(corpus))]); err != nil {
			b.Fatal(err)
		}
	}
	corpus = nil
	agents := []string{"alice", "bob", "carol", "dave", "erin"}
	var total, cpu time.Duration
	var heap uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, startCPU := time.Now(), processCPU()
		snaps, err := Render(context.Background(), g, agents, 0)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		cpu += processCPU() - startCPU
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, ms.HeapInuse)
		runtime.KeepAlive(snaps)
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/render")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/render")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}
