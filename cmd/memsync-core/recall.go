package main

import (
	"context"
	"io"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// recall is ranked search for the doors agents use (hooks, MCP): the graph
// when it answers, else the journals, ranked by read.Rank at now as the
// search command ranks. cmd names the command in the note openReader
// writes on stderr when it answers offline.
func recall(ctx context.Context, cfg *Config, repo, cmd string, stderr io.Writer, q memsync.SearchQuery, now time.Time) (hits []memsync.Ranked, isOffline bool, reason string, err error) {
	rq := memsync.RankQuery{SearchQuery: q, Clock: memsync.Present(now)}
	r := openReader(ctx, cfg, repo, cmd, stderr)
	defer r.Close()
	hits, err = rank(ctx, r, rq)
	return hits, r.Offline, r.Reason, err
}

// rank is read.Rank through r: the graph, else the journals.
func rank(ctx context.Context, r *read.Reader, rq memsync.RankQuery) ([]memsync.Ranked, error) {
	return read.Read(ctx, r, func(s memsync.Searcher) ([]memsync.Ranked, error) { return read.Rank(ctx, s, rq) })
}
