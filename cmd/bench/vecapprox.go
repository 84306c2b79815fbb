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
	"github.com/memsync/memsync/memsync/read"
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
// same queries on the same store, interleaved query by query: lexical
// only (a read-only opener of the store without the model), hybrid with
// every vector scored, and hybrid through the sign codes at a few budgets;
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
	// Every query runs lexical only, then with every vector scored, then
	// through the sign codes at each budget, before the next query: the
	// modes share the host's load as closely as one process can.
	modes := len(approxBudgets) + 2
	top := make([][][]string, modes) // [mode][query]
	lat := make([][]float64, modes)
	for m := range modes {
		top[m] = make([][]string, len(queries))
		lat[m] = make([]float64, len(queries))
	}
	for _, q := range queries[:min(20, len(queries))] { // warm the lexical-only reader
		if _, err := read.Search(ctx, lex, q); err != nil {
			return fmt.Errorf("search %q: %w", q.Text, err)
		}
	}
	for i, q := range queries {
		for m := range modes {
			var sg memsync.Graph = lex
			switch {
			case m == 1:
				sg = g
				s.SetVectorSearch(math.MaxInt, 0)
			case m > 1:
				sg = g
				s.SetVectorSearch(1, approxBudgets[m-2])
			}
			start := time.Now()
			hits, err := read.Search(ctx, sg, q)
			lat[m][i] = float64(time.Since(start)) / float64(time.Millisecond)
			if err != nil {
				return fmt.Errorf("search %q: %w", q.Text, err)
			}
			for _, h := range hits[:min(10, len(hits))] {
				top[m][i] = append(top[m][i], h.UUID)
			}
		}
	}
	// part is the latencies of mode m and of its vector part: each
	// query's hybrid latency less its lexical-only one.
	part := func(m int) string {
		d := make([]float64, len(queries))
		for i := range d {
			d[i] = lat[m][i] - lat[0][i]
		}
		return fmt.Sprintf("p50 %s / p95 %s ms (vector part p50 %s / p95 %s)", millis(percentile(lat[m], 50)), millis(percentile(lat[m], 95)),
			millis(percentile(d, 50)), millis(percentile(d, 95)))
	}
	parts := []string{"lexical only p50 " + millis(percentile(lat[0], 50)) + " / p95 " + millis(percentile(lat[0], 95)) + " ms",
		"every vector " + part(1)}
	for k, budget := range approxBudgets {
		hit, total := 0, 0
		for i := range queries {
			want := map[string]bool{}
			for _, u := range top[1][i] {
				want[u] = true
			}
			total += len(want)
			for _, u := range top[k+2][i] {
				if want[u] {
					hit++
				}
			}
		}
		parts = append(parts, fmt.Sprintf("sign codes, budget %d: recall@10 %.3f, %s", budget,
			float64(hit)/float64(max(total, 1)), part(k+2)))
	}
	b.logf("vector search A/B on one store (final hybrid top 10, %d queries): %s", len(queries), strings.Join(parts, "; "))
	return nil
}
