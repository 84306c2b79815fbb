package offline

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

const benchRecords = 100_000

// benchRepo writes the 100,000-record corpus (with a sprinkling of rare
// words, as in the backends' benchmarks) into journals under a temp dir.
func benchRepo(b *testing.B) memsync.Layout {
	b.Helper()
	layout := memsync.Layout{Root: b.TempDir()}
	corpus := graphtest.Corpus(42, benchRecords)
	rare := []string{"zebra", "quartz", "lighthouse"}
	files := map[string]*bufio.Writer{}
	var closers []*os.File
	for i, m := range corpus {
		if i%997 == 0 {
			m.Text += " " + rare[i%len(rare)]
		}
		path := filepath.Join(layout.JournalDir(m.Agent), journal.FileName(m.TS))
		w, ok := files[path]
		if !ok {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			closers = append(closers, f)
			w = bufio.NewWriter(f)
			files[path] = w
		}
		w.Write(m.Canonical())
		w.WriteByte('\n')
	}
	for _, w := range files {
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range closers {
		f.Close()
	}
	return layout
}

// BenchmarkSearch runs the backends' benchmark queries offline over 100,000
// memories in journals and reports the median and 95th percentile latency.
func BenchmarkSearch(b *testing.B) {
	benchSearch(b, []string{
		"deploy", "kafka lag", "database migration rollback", "customer invoice pricing",
		"@Shaun moonshot", "snapshot", "what did we decide about the postgres schema?",
	})
}

// BenchmarkSearchRare is BenchmarkSearch with words few memories contain.
func BenchmarkSearchRare(b *testing.B) {
	benchSearch(b, []string{"zebra", "quartz lighthouse", "acme globex"})
}

func benchSearch(b *testing.B, queries []string) {
	layout := benchRepo(b)
	ctx := context.Background()
	groups := []string{journal.SharedGroup, journal.PrivateGroup("alice")}
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, startCPU := time.Now(), processCPU()
		hits, err := Search(ctx, layout, memsync.SearchQuery{Text: queries[i%len(queries)], Groups: groups})
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) == 0 {
			b.Fatalf("%q found nothing", queries[i%len(queries)])
		}
		lat = append(lat, time.Since(start))
		cpu = append(cpu, processCPU()-startCPU)
	}
	b.StopTimer()
	b.ReportMetric(percentile(lat, 50), "p50-ms")
	b.ReportMetric(percentile(lat, 95), "p95-ms")
	b.ReportMetric(percentile(cpu, 50), "p50-cpu-ms")
	b.ReportMetric(percentile(cpu, 95), "p95-cpu-ms")
}

// percentile is the p-th percentile of ds in milliseconds.
func percentile(ds []time.Duration, p int) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*p/100)].Microseconds()) / 1000
}
