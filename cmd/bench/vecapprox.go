package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/memsync"
)

// vectorSearchSetter is a graph whose vector search can be told to score
// every vector (embedded.Graph.SetVectorSearch).
type vectorSearchSetter interface {
	SetVectorSearch(minVectors, budget int)
	Path() string
}

// approxBudgets are the sign codes' budgets the harness compares with
// every vector scored (embedded: the built-in one is 4,096).
var approxBudgets = []int{2048, 4096, 8192}

// measureVectorApprox logs, for the embedded store with vectors, the
// same queries on the same store, back to back: lexical only (a
// read-only opener of the store without the model), hybrid with every
// vector scored, and hybrid through the sign codes at a few budgets;
// each one's latency, the vector part's own (hybrid less lexical, query
// by query), and the recall@10 of each approximate final hybrid top 10
// against every vector scored. A diagnostic line, not a row.
func (b *bench) measureVectorApprox(ctx context.Context, be *backend, g memsync.Graph, queries []memsync.SearchQuery) error {
	s, ok := g.(vectorSearchSetter)
	if !ok || be.emb == nil {
		return nil
	}
	defer s.SetVectorSearch(0, 0)
	lex, err := embedded.OpenReadOnly(filepath.Dir(s.Path()), nil)
	if err != nil {
		return fmt.Errorf("open the store without the model: %w", err)
	}
	defer lex.Close()
	pass := func(g memsync.Graph) ([][]string, []float64, error) {
		top := make([][]string, len(queries))
		lat := make([]float64, len(queries))
		for i, q := range queries {
			start := time.Now()
			hits, err := g.Search(ctx, q)
			lat[i] = float64(time.Since(start)) / float64(time.Millisecond)
			if err != nil {
				return nil, nil, fmt.Errorf("search %q: %w", q.Text, err)
			}
			for _, h := range hits[:min(10, len(hits))] {
				top[i] = append(top[i], h.UUID)
			}
		}
		return top, lat, nil
	}
	if _, _, err := pass(lex); err != nil { // warm the lexical-only reader
		return err
	}
	_, lexLat, err := pass(lex)
	if err != nil {
		return err
	}
	s.SetVectorSearch(math.MaxInt, 0)
	exact, exactLat, err := pass(g)
	if err != nil {
		return err
	}
	// part is the p50 / p95 of the vector part: each query's hybrid
	// latency less its lexical-only one.
	part := func(lat []float64) string {
		d := make([]float64, len(lat))
		for i := range lat {
			d[i] = lat[i] - lexLat[i]
		}
		return fmt.Sprintf("p50 %s / p95 %s ms (vector part p50 %s / p95 %s)", millis(percentile(lat, 50)), millis(percentile(lat, 95)),
			millis(percentile(d, 50)), millis(percentile(d, 95)))
	}
	parts := []string{"lexical only p50 " + millis(percentile(lexLat, 50)) + " / p95 " + millis(percentile(lexLat, 95)) + " ms",
		"every vector " + part(exactLat)}
	for _, budget := range approxBudgets {
		s.SetVectorSearch(1, budget)
		got, lat, err := pass(g)
		if err != nil {
			return err
		}
		hit, total := 0, 0
		for i := range exact {
			want := map[string]bool{}
			for _, u := range exact[i] {
				want[u] = true
			}
			total += len(want)
			for _, u := range got[i] {
				if want[u] {
					hit++
				}
			}
		}
		parts = append(parts, fmt.Sprintf("sign codes, budget %d: recall@10 %.3f, %s", budget,
			float64(hit)/float64(max(total, 1)), part(lat)))
	}
	b.logf("vector search A/B on one store (final hybrid top 10, %d queries): %s", len(queries), strings.Join(parts, "; "))
	return nil
}
