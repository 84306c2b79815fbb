package memsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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

// Searcher is a SignalReader that also gives lexical candidates.
type Searcher interface {
	SignalReader
	Search(ctx context.Context, q SearchQuery) ([]Hit, error)
}

// Scored is a memory with what score.Evaluate says of it at a clock.
type Scored struct {
	Node
	Result    score.Result
	Freshness float64
}

// ScoreNodes evaluates nodes at asOf from the records naming them (read
// from r). A record whose writer cannot see the memory counts for nothing
// (score.Evaluate asks journal.Sees); one the reader of groups may not see
// still counts but is marked invisible, so that explain never names it.
func ScoreNodes(ctx context.Context, r SignalReader, nodes []Node, groups []string, asOf time.Time) (map[string]Scored, error) {
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
		events[ref.Target] = append(events[ref.Target], e)
	}
	for _, n := range nodes {
		m := score.FromRecord(&n.Record, n.InvalidAt, n.ReplacedBy)
		res := score.Evaluate(m, events[n.UUID], asOf)
		n.Importance = res.Importance
		out[n.UUID] = Scored{Node: n, Result: res, Freshness: score.Freshness(m, res, asOf)}
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
	Lexical float64 // the backend's lexical score
	Score   float64 // the blend (score.Blend)
}

// RankQuery is a search ranked by SPEC §7's blend.
type RankQuery struct {
	SearchQuery           // Limit is the number of results; All shows archived and superseded
	AsOf        time.Time // the clock; records after it are left out
}

// Rank asks s for a candidate pool, scores each candidate at q.AsOf,
// leaves out records after it (and archived or superseded ones unless
// q.All), and orders by score.Blend, then uuid. Every backend and the
// offline path rank through here, so they agree.
func Rank(ctx context.Context, s Searcher, q RankQuery) ([]Ranked, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	sq := q.SearchQuery
	sq.Limit = max(PoolSize, limit)
	sq.All = true // status is decided at the clock, not by the backend
	hits, err := s.Search(ctx, sq)
	if err != nil {
		return nil, err
	}
	nodes := make([]Node, 0, len(hits))
	lexical := make(map[string]float64, len(hits))
	best := 0.0
	for _, h := range hits {
		if h.TS.After(q.AsOf) {
			continue
		}
		if _, dup := lexical[h.UUID]; dup {
			continue
		}
		nodes = append(nodes, h.Node)
		lexical[h.UUID] = h.Score
		best = max(best, h.Score)
	}
	scored, err := ScoreNodes(ctx, s, nodes, q.Groups, q.AsOf)
	if err != nil {
		return nil, err
	}
	out := make([]Ranked, 0, len(nodes))
	for _, n := range nodes {
		sc := scored[n.UUID]
		if !q.All && sc.Result.Status.Hidden() {
			continue
		}
		out = append(out, Ranked{Scored: sc, Lexical: lexical[n.UUID],
			Score: score.Blend(lexical[n.UUID], best, sc.Result, sc.Freshness)})
	}
	slices.SortFunc(out, func(a, b Ranked) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ErrNotVisible is returned by Explain for a memory that does not exist or
// that the reader may not see: the two are not told apart.
var ErrNotVisible = errors.New("no such memory visible to this agent")

// Explain scores one memory for a reader of groups at asOf. A memory the
// reader may not see, or written after asOf, is ErrNotVisible.
func Explain(ctx context.Context, r SignalReader, uuid string, groups []string, asOf time.Time) (Scored, error) {
	nodes, err := r.Get(ctx, []string{uuid})
	if err != nil {
		return Scored{}, fmt.Errorf("read memory %s: %w", uuid, err)
	}
	n, ok := nodes[uuid]
	if !ok || !slices.Contains(groups, n.Record.GroupID()) || n.TS.After(asOf) {
		return Scored{}, fmt.Errorf("%s: %w", uuid, ErrNotVisible)
	}
	scored, err := ScoreNodes(ctx, r, []Node{n}, groups, asOf)
	if err != nil {
		return Scored{}, err
	}
	return scored[uuid], nil
}
