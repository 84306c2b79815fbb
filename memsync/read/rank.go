package read

import (
	"context"
	"maps"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/recall"
	"github.com/memsync/memsync/memsync/score"
)

// PoolSize is how many lexical candidates ranking re-scores, whatever the
// limit (a larger limit widens it): the first N results for --limit N are
// the first N for any larger limit.
const PoolSize = 100

// Rank gathers a search's candidates through s (the recipe of Search),
// scores each at the query's clock, and fuses them (package recall) with
// the memories the clock leaves out removed and the retired ones
// (superseded or flagged wrong) lifting no neighbour — and left out
// unless q.All; an archived memory is found, and ranks lower. It then
// blends each hit's relevance with its importance, freshness, confidence
// and status (score.Blend) and orders by that score, then uuid, keeping
// the superset-of-terms property and each neighbour that is no hit of its
// own below the hit that brought it in (recall.OrderFrom). A memory those
// rules move below one that scores less is given that one's score (the
// Order factor), so the order is the scores' order. Every backend and the
// offline path rank through here, so they agree.
func Rank(ctx context.Context, s memsync.Searcher, q memsync.RankQuery) ([]memsync.Ranked, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = memsync.DefaultSearchLimit
	}
	if p, ok := s.(memsync.Pinner); ok {
		ctx = p.Pin(ctx) // the signals read the snapshot the candidates came from
	}
	clock := q.Clock
	sq := q.SearchQuery
	sq.Limit = max(PoolSize, limit)
	sq.All = true // status is decided at the clock, not by the backend
	c, err := gather(ctx, s, sq)
	if err != nil || c == nil {
		return nil, err
	}
	nodes := make([]memsync.Node, 0, len(c.nodes))
	hidden := map[string]bool{}
	for _, id := range c.order() {
		n := c.nodes[id]
		if clock.Hides(n.TS) {
			hidden[id] = true
			continue
		}
		nodes = append(nodes, n)
	}
	scored, err := ScoreNodes(ctx, s, nodes, q.Groups, clock)
	if err != nil {
		return nil, err
	}
	drop, quiet := maps.Clone(hidden), maps.Clone(hidden)
	for id, sc := range scored {
		if sc.Result.Retired() {
			quiet[id] = true
			if !q.All {
				drop[id] = true
			}
		}
	}
	ranked := c.fuse(drop, quiet)
	ranked = ranked[:min(sq.Limit, len(ranked))]
	best := 0.0
	for _, r := range ranked {
		best = max(best, r.Score)
	}
	out := make([]memsync.Ranked, 0, len(ranked))
	at := make(map[string]int, len(ranked))
	for _, r := range ranked {
		sc, ok := scored[r.UUID]
		if !ok {
			continue
		}
		f := score.Blend(r.Score, best, sc.Result, sc.Freshness)
		at[r.UUID] = len(out)
		out = append(out, memsync.Ranked{Scored: sc, Lexical: r.Score, Parts: r.Parts, Match: r.Match, Fields: r.Fields,
			Held: r.Fields.Describe(c.q), From: r.From, Boosts: r.Boosts, Factors: f, Score: f.Score})
	}
	// The superset-of-terms property, and each neighbour that is no hit
	// of its own below the hit that brought it in; then each score is
	// held to at most the one above it, so the order is the scores'.
	from := func(r memsync.Ranked) int {
		if k, ok := at[r.From]; ok && r.Parts.VecRank == 0 {
			return k
		}
		return -1
	}
	recall.OrderFrom(out, func(a, b memsync.Ranked) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.UUID < b.UUID
	}, func(r memsync.Ranked) uint64 { return r.Match }, from)
	for i := 1; i < len(out); i++ {
		if out[i].Score > out[i-1].Score {
			setScore(&out[i], out[i-1].Score)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// setScore makes v the hit's score, its Order factor what it takes.
func setScore(r *memsync.Ranked, v float64) {
	if v != r.Score {
		r.Factors.Reorder(v)
		r.Score = v
	}
}

// RankFrom is Rank through r: the graph, else the journals (Read). It is
// how the search command, the hooks and the MCP server rank.
func RankFrom(ctx context.Context, r *Reader, q memsync.RankQuery) ([]memsync.Ranked, error) {
	return Read(ctx, r, func(s memsync.Searcher) ([]memsync.Ranked, error) { return Rank(ctx, s, q) })
}
