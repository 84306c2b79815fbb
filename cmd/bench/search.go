package main

import (
	"context"
	"fmt"
	"time"

	"github.com/memsync/memsync/memsync"
)

// loadCorpus applies mems to g in engine-sized batches.
func loadCorpus(ctx context.Context, g memsync.Graph, mems []memsync.Memory) error {
	for i := 0; i < len(mems); i += engineBatch {
		if _, err := g.Apply(ctx, mems[i:min(i+engineBatch, len(mems))]); err != nil {
			return fmt.Errorf("load corpus records %d..: %w", i, err)
		}
	}
	return nil
}

// searchLatencies runs every query once against g, one after the other,
// and returns each one's latency in ms. A query that finds nothing is
// fine (some word combinations are rare); an error is not.
func searchLatencies(ctx context.Context, g memsync.Graph, queries []memsync.SearchQuery) ([]float64, int, error) {
	out := make([]float64, len(queries))
	hits := 0
	for i, q := range queries {
		start := time.Now()
		h, err := g.Search(ctx, q)
		out[i] = float64(time.Since(start)) / float64(time.Millisecond)
		if err != nil {
			return nil, 0, fmt.Errorf("search %q: %w", q.Text, err)
		}
		hits += len(h)
	}
	return out, hits, nil
}
