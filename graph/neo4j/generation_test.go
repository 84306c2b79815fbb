package neo4j_test

import (
	"context"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
)

// Every Drop marks the graph with a new generation, one marker node even
// when two hosts drop at once, and both hosts then read the same one.
func TestDropMarksANewGeneration(t *testing.T) {
	g := neo4jtest.Open(t) // dropped: a generation is marked
	ctx := context.Background()
	first, err := g.Generation(ctx)
	if err != nil || first == "" {
		t.Fatalf("generation after a drop = %q, %v", first, err)
	}
	other, err := neo4j.Open(ctx, neo4jtest.Config(t), zaptest.NewLogger(t)) // a second host
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, h := range []*neo4j.Graph{g, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.Drop(ctx)
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("concurrent drops: %v", errs)
	}
	a, errA := g.Generation(ctx)
	b, errB := other.Generation(ctx)
	if errA != nil || errB != nil || a != b || a == first || a == "" {
		t.Fatalf("after two drops: %q (%v) and %q (%v), first %q", a, errA, b, errB, first)
	}
	if rows := cypher(t)("MATCH (g:MemsyncGeneration) RETURN count(g) AS n"); len(rows) != 1 || rows[0].Values[0].(int64) != 1 {
		t.Fatalf("generation markers: %v", rows)
	}
}
