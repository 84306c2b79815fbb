package neo4j_test

import (
	"context"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
	"github.com/memsync/memsync/memsync/read"
)

func withEmbedder(e memsync.Embedder) func(*neo4j.Config) {
	return func(c *neo4j.Config) { c.Embedder = e }
}

// TestHybridConformance: Neo4j passes the hybrid cases
// (graphtest.RunHybrid): the same top 10 as the embedded store and
// offline, and no other agent's private vector returned or ranking
// anything (the group filter runs in the vector query itself).
func TestHybridConformance(t *testing.T) {
	g := neo4jtest.OpenWith(t, withEmbedder(graphtest.HybridEmbedder()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := g.Apply(ctx, graphtest.HybridCorpus(true)); err != nil {
		t.Fatal(err)
	}
	graphtest.RunHybrid(t, func(t *testing.T, q memsync.SearchQuery) []memsync.Hit {
		hits, err := read.Search(ctx, g, q)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	})
}

// TestVectorsReembedOnNewModel: a graph embedded by one model, opened
// with another, searches with no vector of the old one (never a mixed
// index) and re-embeds every memory in the background (Flush waits).
func TestVectorsReembedOnNewModel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v1, v2 := memsynctest.Embedder{N: 64, Salt: "1"}, memsynctest.Embedder{N: 32, Salt: "2"}
	g1 := neo4jtest.OpenWith(t, withEmbedder(v1))
	corpus := graphtest.HybridCorpus(false)
	if _, err := g1.Apply(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if err := g1.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Opened again (not through neo4jtest, which would empty it).
	cfg := neo4jtest.Config(t)
	cfg.Embedder = v2
	g2, err := neo4j.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if err := g2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := read.Search(ctx, g2, memsync.SearchQuery{Text: "photography", Groups: []string{journal.SharedGroup}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].UUID != "h-photo" || hits[0].Parts.VecRank != 1 {
		t.Fatalf("after re-embedding with a new model: %v, want h-photo first by its vector", hits)
	}
	n, err := g2.CountEmbeddings(ctx, v2.Version())
	if err != nil {
		t.Fatal(err)
	}
	if n != len(corpus) {
		t.Fatalf("%d memories embedded by %s, want all %d", n, v2.Version(), len(corpus))
	}
	// A memory left with the old model's vector is never searched by it.
	if err := g2.SetEmbeddingVersion(ctx, "h-photo", v1.Version()); err != nil {
		t.Fatal(err)
	}
	hits, err = read.Search(ctx, g2, memsync.SearchQuery{Text: "photography", Groups: []string{journal.SharedGroup}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.UUID == "h-photo" {
			t.Fatalf("h-photo found by a vector of another model: %+v", h.Parts)
		}
	}
}

// TestVectorIndexOfEachSlotFollowsTheModel: a store whose two generation
// slots hold vector indexes of different sizes (one slot's dropped, the
// other left from an older model) is opened with both made for the
// model's dimensions. Checking only slot 0's index left slot 1's at the
// old size, and a search after the next rebuild failed in Neo4j ("query
// vector has 256 dimensions, but indexed vectors have 32").
func TestVectorIndexOfEachSlotFollowsTheModel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g1 := neo4jtest.OpenWith(t, withEmbedder(memsynctest.Embedder{N: 64, Salt: "1"}))
	if err := g1.DropSlotVectorIndex(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if dims, err := g1.VectorIndexDims(ctx); err != nil || dims != [2]int64{0, 64} {
		t.Fatalf("set-up: dims %v, %v", dims, err)
	}
	cfg := neo4jtest.Config(t)
	cfg.Embedder = memsynctest.Embedder{N: 32, Salt: "2"}
	g2, err := neo4j.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if dims, err := g2.VectorIndexDims(ctx); err != nil || dims != [2]int64{32, 32} {
		t.Fatalf("vector index dimensions by slot %v (%v), want 32 in both", dims, err)
	}
}
