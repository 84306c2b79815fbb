package embedded

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/embed"
)

// BenchmarkApplyModel is BenchmarkApplyFlush (100,000 corpus records in
// batches of 1,000, Flush inside the clock), lexical only and with the
// built-in model, with the CPU it costs: the whole process's and the
// writer's thread's (the projection's critical path), per 100,000 records.
// Under load, the CPU seconds are the comparable figures.
func BenchmarkApplyModel(b *testing.B) {
	for _, c := range []struct {
		name string
		emb  memsync.Embedder
	}{{"none", nil}, {"default", embed.Default()}} {
		b.Run(c.name, func(b *testing.B) { benchmarkApplyCPU(b, c.emb, benchBatch) })
	}
}

// BenchmarkApplyBatch is BenchmarkApplyModel's lexical projection in
// batches of 1,000 and of 5,000: what fewer, larger transactions (fewer
// commits, each with its fsync) would buy a rebuild.
func BenchmarkApplyBatch(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchmarkApplyCPU(b, nil, n) })
	}
}

func benchmarkApplyCPU(b *testing.B, emb memsync.Embedder, batch int) {
	corpus := graphtest.Corpus(42, benchRecords)
	ctx := context.Background()
	var total, cpu, writerCPU time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		g, err := Open(b.TempDir(), nil, WithEmbedder(emb))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, startCPU, startThread := time.Now(), processCPU(), threadCPU()
		for j := 0; j < len(corpus); j += batch {
			if _, err := g.Apply(ctx, corpus[j:min(j+batch, len(corpus))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := g.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		cpu += processCPU() - startCPU
		writerCPU += threadCPU() - startThread
		b.StopTimer()
		if err := g.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	n := float64(b.N * len(corpus))
	b.ReportMetric(n/total.Seconds(), "records/s")
	b.ReportMetric(cpu.Seconds()/n*1e5, "cpu-s/100k")
	b.ReportMetric(writerCPU.Seconds()/n*1e5, "writer-cpu-s/100k")
}
