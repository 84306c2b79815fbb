package main

import (
	"context"
	"fmt"
	"time"

	"github.com/memsync/memsync/memsync"

	"github.com/memsync/memsync/memsync/read"
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
		h, err := read.Search(ctx, g, q)
		out[i] = float64(time.Since(start)) / float64(time.Millisecond)
		if err != nil {
			return nil, 0, fmt.Errorf("search %q: %w", q.Text, err)
		}
		hits += len(h)
	}
	return out, hits, nil
}

// rankLatencies runs every query once through read.Rank (the lexical
// candidates, their signals, score.Evaluate, the blend) as of asOf, and
// returns each one's latency in ms.
func rankLatencies(ctx context.Context, g memsync.Graph, queries []memsync.SearchQuery, asOf time.Time) ([]float64, error) {
	out := make([]float64, len(queries))
	for i, q := range queries {
		start := time.Now()
		_, err := read.Rank(ctx, g, memsync.RankQuery{SearchQuery: q, Clock: memsync.Present(asOf)})
		out[i] = float64(time.Since(start)) / float64(time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("ranked search %q: %w", q.Text, err)
		}
	}
	return out, nil
}

// measureSearch loads the search corpus once and times the queries, a pass per run.
func (b *bench) measureSearch(ctx context.Context, c *column) error {
	o := b.opts
	name := c.b.name
	mems := newGenerator(o.seed, o.agents, true).take(o.searchCorpus)
	agents := agentNames(o.agents)
	queries := searchQueries(o.seed+1, o.searchQueries, agents)
	// One load, then every run: queries are reads.
	saved := o.runs
	err := c.b.exclusive(ctx, func() error {
		g, release, err := c.b.fresh(ctx)
		if err != nil {
			return err
		}
		defer release()
		b.logf("%s search: loading %s memories", name, thousands(float64(len(mems))))
		if err := loadCorpus(ctx, g, mems); err != nil {
			return err
		}
		if _, _, err := searchLatencies(ctx, g, queries[:min(20, len(queries))]); err != nil {
			return err
		}
		for run := 0; run < saved; run++ {
			lat, hits, err := searchLatencies(ctx, g, queries)
			if err != nil {
				return err
			}
			c.searchHits = hits
			c.searchP50.add(percentile(lat, 50))
			c.searchP95.add(percentile(lat, 95))
			b.logf("%s search run %d: p50 %s ms, p95 %s ms, max %s ms (%d hits over %d queries)", name, run+1,
				millis(percentile(lat, 50)), millis(percentile(lat, 95)), millis(percentile(lat, 100)), hits, len(queries))
		}
		if err := b.measureVectorApprox(ctx, c.b, g, queries); err != nil {
			return err
		}
		asOf := mems[len(mems)-1].TS
		for run := 0; run < saved; run++ {
			lat, err := rankLatencies(ctx, g, queries, asOf)
			if err != nil {
				c.rankP50.err, c.rankP95.err = err, err
				b.noteFailure(&c.rankP50, c)
				return nil
			}
			c.rankP50.add(percentile(lat, 50))
			c.rankP95.add(percentile(lat, 95))
			b.logf("%s ranked search run %d: p50 %s ms, p95 %s ms, max %s ms", name, run+1,
				millis(percentile(lat, 50)), millis(percentile(lat, 95)), millis(percentile(lat, 100)))
		}
		b.measurePacket(ctx, c, g, agents, queries, asOf)
		b.measureSearchCommand(ctx, c, g, agents, queries, asOf)
		return nil
	})
	if err != nil {
		err = fmt.Errorf("search: %w", err)
		c.searchP50.err, c.searchP95.err = err, err
		b.noteFailure(&c.searchP50, c)
		b.noteFailure(&c.searchP95, c)
	}
	return nil
}
