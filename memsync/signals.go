package memsync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/memsync/memsync/memsync/recall"
	"github.com/memsync/memsync/memsync/score"
)

// References lists the signals record n sends to the uuids in want: one
// Reference per relation and target, from its links, supports and
// conflicts_with. It is how a store without edges (the offline path, test
// doubles) answers Incoming exactly as the graphs' edges do.
func References(n Node, want map[string]bool) []Reference {
	var out []Reference
	for _, rel := range []struct {
		name string
		ids  []string
	}{{RelLinksTo, n.Record.Links}, {RelSupports, n.Record.Supports()}, {RelConflictsWith, n.Record.ConflictsWith}} {
		seen := map[string]bool{}
		for _, id := range rel.ids {
			if want[id] && !seen[id] {
				seen[id] = true
				out = append(out, Reference{Target: id, Relation: rel.name, Source: n})
			}
		}
	}
	return out
}

// SignalReader is what scoring reads: the memories and the records that
// name them. Every Graph is one; so is the offline path.
type SignalReader interface {
	Get(ctx context.Context, uuids []string) (map[string]Node, error)
	Incoming(ctx context.Context, uuids []string) ([]Reference, error)
}

// Searcher is what ranking reads: the signals, and the search recipe's
// primitives (Retriever). Every Graph is one; so is the offline path.
type Searcher interface {
	SignalReader
	Retriever
}

// Scored is a memory with what score.Evaluate says of it at a clock.
type Scored struct {
	Node
	Result    score.Result
	Freshness float64
}

// Clock is when a read looks at the memory (SPEC §7 "The clock"). At is
// the time every rule is evaluated at. With Cutoff (an explicit --as-of)
// records dated after At are left out, as the memory stood then; without
// it (a read at the present) every projected record is seen, and one
// dated after At (another host's clock runs ahead, a typo) counts as
// written at At: its age is zero.
type Clock struct {
	At     time.Time
	Cutoff bool
}

// Present is the clock of a read at now: every record seen.
func Present(now time.Time) Clock { return Clock{At: now.UTC()} }

// AsOf is the clock of a read as the memory stood at t.
func AsOf(t time.Time) Clock { return Clock{At: t.UTC(), Cutoff: true} }

// Hides reports whether the clock leaves out a record dated ts.
func (c Clock) Hides(ts time.Time) bool { return c.Cutoff && ts.After(c.At) }

// at is ts as the clock counts it: a time after a present clock is now.
func (c Clock) at(ts time.Time) time.Time {
	if !c.Cutoff && ts.After(c.At) {
		return c.At
	}
	return ts
}

// ScoreNodes evaluates nodes at the clock from the records naming them
// (read from r). A record whose writer cannot see the memory counts for
// nothing (score.Evaluate asks journal.Sees); one the reader of groups may
// not see still counts but is marked invisible, so that explain never
// names it. A promotion stands only while its original does
// (FollowOriginal).
func ScoreNodes(ctx context.Context, r SignalReader, nodes []Node, groups []string, clock Clock) (map[string]Scored, error) {
	out, err := scoreNodes(ctx, r, nodes, groups, clock)
	if err != nil {
		return nil, err
	}
	if err := followOriginals(ctx, r, out, groups, clock); err != nil {
		return nil, err
	}
	return out, nil
}

// scoreNodes is ScoreNodes without following promotions' originals.
func scoreNodes(ctx context.Context, r SignalReader, nodes []Node, groups []string, clock Clock) (map[string]Scored, error) {
	out := make(map[string]Scored, len(nodes))
	if len(nodes) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		ids = append(ids, n.UUID)
	}
	refs, err := r.Incoming(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read signals of %d memories: %w", len(ids), err)
	}
	events := map[string][]score.Event{}
	for _, ref := range refs {
		e := score.EventFrom(score.Relation(ref.Relation), &ref.Source.Record)
		e.Visible = slices.Contains(groups, ref.Source.Record.GroupID())
		e.TS = clock.at(e.TS)
		events[ref.Target] = append(events[ref.Target], e)
	}
	for _, n := range nodes {
		m := score.FromRecord(&n.Record, n.InvalidAt, n.ReplacedBy)
		m.TS = clock.at(m.TS)
		if !m.SupersededAt.IsZero() {
			m.SupersededAt = clock.at(m.SupersededAt)
		}
		res := score.Evaluate(m, events[n.UUID], clock.At)
		n.Importance = res.Importance
		out[n.UUID] = Scored{Node: n, Result: res, Freshness: score.Freshness(m, res, clock.At)}
	}
	return out, nil
}

// PoolSize is how many lexical candidates ranking re-scores, whatever the
// limit (a larger limit widens it): the first N results for --limit N are
// the first N for any larger limit.
const PoolSize = 100

// Ranked is one ranked search result with every factor of its score.
type Ranked struct {
	Scored
	Lexical float64       // the backend's relevance score (package recall: lexical, or fused with vectors)
	Parts   recall.Parts  // the lexical and vector parts of Lexical (recall.Fuse)
	Match   uint64        // the query terms it holds (recall.Ranked.Match)
	Fields  recall.Fields // where it holds them (text, tags, entities)
	Held    string        // the same as explain names it: "text: postgres; tag: billing"
	From    string        // for a neighbour that is no lexical hit: the hit that brought it in
	Boosts  recall.Boosts // the factors of time its relevance holds
	Factors score.Factors // the blend, factor by factor (score.Blend)
	Score   float64       // Factors.Score
}

// RankQuery is a search ranked by SPEC §7's blend.
type RankQuery struct {
	SearchQuery       // Limit is the number of results; All adds superseded and wrong-flagged memories
	Clock       Clock // when the query reads (Present, or AsOf an explicit --as-of)
}

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
func Rank(ctx context.Context, s Searcher, q RankQuery) ([]Ranked, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	if p, ok := s.(Pinner); ok {
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
	nodes := make([]Node, 0, len(c.nodes))
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
	out := make([]Ranked, 0, len(ranked))
	at := make(map[string]int, len(ranked))
	for _, r := range ranked {
		sc, ok := scored[r.UUID]
		if !ok {
			continue
		}
		f := score.Blend(r.Score, best, sc.Result, sc.Freshness)
		at[r.UUID] = len(out)
		out = append(out, Ranked{Scored: sc, Lexical: r.Score, Parts: r.Parts, Match: r.Match, Fields: r.Fields,
			Held: r.Fields.Describe(c.q), From: r.From, Boosts: r.Boosts, Factors: f, Score: f.Score})
	}
	// The superset-of-terms property, and each neighbour that is no hit
	// of its own below the hit that brought it in; then each score is
	// held to at most the one above it, so the order is the scores'.
	from := func(r Ranked) int {
		if k, ok := at[r.From]; ok && r.Parts.VecRank == 0 {
			return k
		}
		return -1
	}
	recall.OrderFrom(out, func(a, b Ranked) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.UUID < b.UUID
	}, func(r Ranked) uint64 { return r.Match }, from)
	for i := 1; i < len(out); i++ {
		if out[i].Score > out[i-1].Score {
			out[i].setScore(out[i-1].Score)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// setScore makes v the hit's score, its Order factor what it takes.
func (r *Ranked) setScore(v float64) {
	if v != r.Score {
		r.Factors.Reorder(v)
		r.Score = v
	}
}

// ErrNotVisible is returned by Explain for a memory that does not exist or
// that the reader may not see: the two are not told apart.
var ErrNotVisible = errors.New("no such memory visible to this agent")

// Explain scores one memory for a reader of groups at the clock. A memory
// the reader may not see, or that the clock leaves out, is ErrNotVisible.
func Explain(ctx context.Context, r SignalReader, uuid string, groups []string, clock Clock) (Scored, error) {
	nodes, err := r.Get(ctx, []string{uuid})
	if err != nil {
		return Scored{}, fmt.Errorf("read memory %s: %w", uuid, err)
	}
	n, ok := nodes[uuid]
	if !ok || !slices.Contains(groups, n.Record.GroupID()) || clock.Hides(n.TS) {
		return Scored{}, fmt.Errorf("%s: %w", uuid, ErrNotVisible)
	}
	scored, err := ScoreNodes(ctx, r, []Node{n}, groups, clock)
	if err != nil {
		return Scored{}, err
	}
	return scored[uuid], nil
}
