package main

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/memsync/memsync/memsync"
)

// vectorSearchSetter is a graph whose vector search can be told to score
// every vector (embedded.Graph.SetVectorSearch).
type vectorSearchSetter interface {
	SetVectorSearch(minVectors, budget int)
}

// approxBudgets are the sign codes' budgets the harness compares with
// every vector scored (embedded: the built-in one is 8,192).
var approxBudgets = []int{4096, 8192, 16384}

// measureVectorApprox logs, for a graph with vectors whose search has an
// approximate path, the recall@10 of Graph.Search's final hybrid top 10
// through that path (at a few budgets) against the same queries with
// every vector scored, and each one's latency: what the approximate
// path costs in answers and what it saves. A diagnostic line, not a row.
func (b *bench) measureVectorApprox(ctx context.Context, be *backend, g memsync.Graph, queries []memsync.SearchQuery) error {
	s, ok := g.(vectorSearchSetter)
	if !ok || be.emb == nil {
		return nil
	}
	defer s.SetVectorSearch(0, 0)
	top := func() ([][]string, []float64, error) {
		out := make([][]string, len(queries))
		lat, _, err := searchLatencies(ctx, g, queries)
		if err != nil {
			return nil, nil, err
		}
		for i, q := range queries {
			hits, err := g.Search(ctx, q)
			if err != nil {
				return nil, nil, fmt.Errorf("search %q: %w", q.Text, err)
			}
			for _, h := range hits[:min(10, len(hits))] {
				out[i] = append(out[i], h.UUID)
			}
		}
		return out, lat, nil
	}
	s.SetVectorSearch(math.MaxInt, 0)
	exact, lat, err := top()
	if err != nil {
		return err
	}
	parts := []string{fmt.Sprintf("every vector p50 %s / p95 %s ms", millis(percentile(lat, 50)), millis(percentile(lat, 95)))}
	for _, budget := range approxBudgets {
		s.SetVectorSearch(1, budget)
		got, lat, err := top()
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
		parts = append(parts, fmt.Sprintf("budget %d: recall@10 %.3f, p50 %s / p95 %s ms", budget,
			float64(hit)/float64(max(total, 1)), millis(percentile(lat, 50)), millis(percentile(lat, 95))))
	}
	b.logf("vector search through the sign codes against every vector scored (final hybrid top 10, %d queries): %s",
		len(queries), strings.Join(parts, "; "))
	return nil
}
