package neo4j_test

import (
	"context"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// benchRecords is the corpus size; MEMSYNC_BENCH_RECORDS overrides it.
func benchRecords() int {
	if n, err := strconv.Atoi(os.Getenv("MEMSYNC_BENCH_RECORDS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// benchBatch is the Apply batch size; MEMSYNC_BENCH_BATCH overrides it.
func benchBatch() int {
	if n, err := strconv.Atoi(os.Getenv("MEMSYNC_BENCH_BATCH")); err == nil && n > 0 {
		return n
	}
	return 2000
}

func applyAll(tb testing.TB, g memsync.Graph, corpus []memsync.Memory, batch int) {
	ctx := context.Background()
	for i := 0; i < len(corpus); i += batch {
		if _, err := g.Apply(ctx, corpus[i:min(i+batch, len(corpus))]); err != nil {
			tb.Fatalf("Apply at %d: %v", i, err)
		}
	}
}

// BenchmarkApply projects the corpus in batches into an empty graph.
func BenchmarkApply(b *testing.B) {
	g := neo4jtest.Open(b)
	corpus := graphtest.Corpus(42, benchRecords())
	batch := benchBatch()
	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := g.Drop(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		applyAll(b, g, corpus, batch)
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(len(corpus)*b.N)/elapsed.Seconds(), "records/s")
}

// BenchmarkSearch ranks two-word queries over the corpus, as one agent sees it.
func BenchmarkSearch(b *testing.B) {
	g := neo4jtest.Open(b)
	corpus := graphtest.Corpus(42, benchRecords())
	applyAll(b, g, corpus, benchBatch())
	words := []string{"deploy", "database", "latency", "budget", "customer", "rollback", "kafka", "schema", "quota", "runbook"}
	agents := []string{"alice", "bob", "carol", "dave", "erin"}
	rng := rand.New(rand.NewSource(1))
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := memsync.SearchQuery{
			Text:   words[rng.Intn(len(words))] + " " + words[rng.Intn(len(words))],
			Groups: []string{journal.SharedGroup, journal.PrivateGroup(agents[rng.Intn(len(agents))])},
		}
		start := time.Now()
		hits, err := read.Search(ctx, g, q)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) == 0 {
			b.Fatalf("no hits for %q", q.Text)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}

// BenchmarkApplyGraphiti is BenchmarkApply with the Graphiti shape off and
// on (shared group only, and with private groups), and a full
// ReprojectGraphiti of the projected corpus (what a rebuild adds).
func BenchmarkApplyGraphiti(b *testing.B) {
	corpus := graphtest.Corpus(42, benchRecords())
	batch := benchBatch()
	for _, c := range []struct {
		name           string
		graphiti, priv bool
	}{{"off", false, false}, {"shared", true, false}, {"private", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			g := neo4jtest.OpenWith(b, func(cfg *neo4j.Config) { cfg.Graphiti, cfg.GraphitiPrivate = c.graphiti, c.priv })
			var elapsed, reproject time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := g.Drop(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				applyAll(b, g, corpus, batch)
				elapsed += time.Since(start)
				start = time.Now()
				if err := g.ReprojectGraphiti(context.Background()); err != nil {
					b.Fatal(err)
				}
				reproject += time.Since(start)
			}
			b.ReportMetric(float64(len(corpus)*b.N)/elapsed.Seconds(), "records/s")
			b.ReportMetric(reproject.Seconds()/float64(b.N), "reproject-s")
		})
	}
}
