package embedded

import (
	"context"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/read"
)

// BenchmarkApplyVectors is BenchmarkApply's projection, 100,000 records
// in batches of 1,000, lexical only and with the built-in model: the
// same-run pair of issue 27's "within 15 %" budget.
func BenchmarkApplyVectors(b *testing.B) {
	corpus := graphtest.Corpus(42, benchRecords)
	for _, c := range []struct {
		name string
		emb  memsync.Embedder
	}{{"none", nil}, {"default", embed.Default()}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				g, err := Open(b.TempDir(), nil, WithEmbedder(c.emb))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for j := 0; j < len(corpus); j += benchBatch {
					if _, err := g.Apply(ctx, corpus[j:min(j+benchBatch, len(corpus))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := g.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N*len(corpus))/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkColdVectorSearch is what each `memsync search` process does
// with the built-in model on a store of 100,000 memories: open the store
// read-only, search once (the vector index loaded, from the index file
// once one exists), close.
func BenchmarkColdVectorSearch(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	emb := embed.Default()
	g, err := Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		b.Fatal(err)
	}
	corpus := graphtest.Corpus(42, benchRecords)
	for j := 0; j < len(corpus); j += benchBatch {
		if _, err := g.Apply(ctx, corpus[j:min(j+benchBatch, len(corpus))]); err != nil {
			b.Fatal(err)
		}
	}
	if err := g.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if err := g.Close(); err != nil {
		b.Fatal(err)
	}
	queries := []string{"deploy", "kafka lag", "database migration rollback", "what did we decide about the postgres schema?"}
	groups := []string{journal.SharedGroup, journal.PrivateGroup("alice")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ro, err := OpenReadOnly(dir, nil, WithEmbedder(emb))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := read.Search(ctx, ro, memsync.SearchQuery{Text: queries[i%len(queries)], Groups: groups, Limit: 10}); err != nil {
			b.Fatal(err)
		}
		ro.Close()
	}
}

// BenchmarkEncodeVector is the quantisation of one stored vector (the
// built-in model's 256 dimensions), as the projection does per memory.
func BenchmarkEncodeVector(b *testing.B) {
	m := embed.Default()
	var vecs [][]float32
	for _, c := range graphtest.Corpus(42, 1024) {
		vecs = append(vecs, m.Embed(c.Text))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		encodeVector(vecs[i%len(vecs)])
		i++
	}
}
