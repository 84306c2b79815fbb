package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
)

// recall is ranked search for the doors agents use (hooks, MCP): the graph
// when it answers, else the journals, ranked by memsync.Rank at now as the
// search command ranks. cmd names the command in the note openReader
// writes on stderr when it answers offline.
func recall(ctx context.Context, cfg *Config, repo, cmd string, stderr io.Writer, q memsync.SearchQuery, now time.Time) (hits []memsync.Ranked, isOffline bool, reason string, err error) {
	rq := memsync.RankQuery{SearchQuery: q, Clock: memsync.Present(now)}
	r, isOffline, reason, closeReader := openReader(ctx, cfg, repo, cmd, stderr)
	defer closeReader()
	hits, err = memsync.Rank(ctx, r, rq)
	if err == nil && !isOffline {
		// A rebuild begun meanwhile may have dropped what it read.
		err = embeddedRebuilding(cfg, repo)
	}
	if err != nil && !isOffline && ctx.Err() == nil {
		// The graph answered the probe, then failed: the journals answer.
		isOffline, reason = true, fmt.Sprintf("%s graph: %v", cfg.graph(), err)
		hits, err = memsync.Rank(ctx, offline.Journals{Layout: layout(repo), Embedder: cfg.emb}, rq)
	}
	return hits, isOffline, reason, err
}
