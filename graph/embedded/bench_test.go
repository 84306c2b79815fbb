package embedded

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

const (
	benchRecords = 100_000
	benchBatch   = 1_000
)

// BenchmarkApply projects 100,000 corpus records in batches of 1,000 into a
// fresh store, once per iteration, and reports the throughput.
func BenchmarkApply(b *testing.B) { benchmarkApply(b, false, nil, benchBatch) }

// BenchmarkApplyFlush is BenchmarkApply with Flush inside the clock: the
// search file's indexing counted too, as a rebuild pays it.
func BenchmarkApplyFlush(b *testing.B) { benchmarkApply(b, true, nil, benchBatch) }

// benchmarkApply projects the corpus into a fresh store per iteration, in
// batches of batch, with emb (nil: no vectors), Flush inside the clock when
// flush, and reports records/s and the CPU per 100,000 records.
func benchmarkApply(b *testing.B, flush bool, emb memsync.Embedder, batch int) {
	corpus := graphtest.Corpus(42, benchRecords)
	ctx := context.Background()
	var total, cpu, writerCPU time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var opts []Option
		if emb != nil {
			opts = append(opts, WithEmbedder(emb))
		}
		g, err := Open(b.TempDir(), nil, opts...)
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
		if flush {
			if err := g.Flush(ctx); err != nil {
				b.Fatal(err)
			}
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
	// CPU seconds per 100k records: all goroutines, and the writer's thread
	// (SQLite runs there; preparing runs beside it on the other cores).
	b.ReportMetric(cpu.Seconds()/n*1e5, "cpu-s/100k")
	b.ReportMetric(writerCPU.Seconds()/n*1e5, "writer-cpu-s/100k")
}

// BenchmarkSearch runs queries over a store of 100,000 memories and reports
// the median and 95th percentile latency. The corpus draws from 32 words,
// so every query word matches about a quarter of the store: a worst case
// for bm25, which scores every match.
func BenchmarkSearch(b *testing.B) {
	benchSearch(b, []string{
		"deploy", "kafka lag", "database migration rollback", "customer invoice pricing",
		"@Shaun moonshot", "snapshot", "what did we decide about the postgres schema?",
	})
}

// BenchmarkSearchRare is BenchmarkSearch with words that occur in few
// memories, as most words of a real vocabulary do.
func BenchmarkSearchRare(b *testing.B) {
	benchSearch(b, []string{"zebra", "quartz lighthouse", "acme globex"})
}

func benchSearch(b *testing.B, queries []string) {
	g, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	ctx := context.Background()
	corpus := graphtest.Corpus(42, benchRecords)
	// A sprinkling of rare words so that BenchmarkSearchRare finds something.
	rare := []string{"zebra", "quartz", "lighthouse"}
	for i := 0; i < len(corpus); i += 997 {
		corpus[i].Text += " " + rare[i%len(rare)]
	}
	for j := 0; j < len(corpus); j += benchBatch {
		if _, err := g.Apply(ctx, corpus[j:min(j+benchBatch, len(corpus))]); err != nil {
			b.Fatal(err)
		}
	}
	groups := []string{journal.SharedGroup, journal.PrivateGroup("alice")}
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, startCPU := time.Now(), threadCPU()
		if _, err := read.Search(ctx, g, memsync.SearchQuery{Text: queries[i%len(queries)], Groups: groups}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		cpu = append(cpu, threadCPU()-startCPU)
	}
	b.StopTimer()
	ms := func(d []time.Duration, q int) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)-1, len(d)*q/100)].Microseconds()) / 1000
	}
	b.ReportMetric(ms(lat, 50), "p50-ms")
	b.ReportMetric(ms(lat, 95), "p95-ms")
	b.ReportMetric(ms(cpu, 50), "p50-cpu-ms")
	b.ReportMetric(ms(cpu, 95), "p95-cpu-ms")
}
