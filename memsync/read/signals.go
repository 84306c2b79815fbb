package read

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/score"
)

// References lists the signals record n sends to the uuids in want: one
// memsync.Reference per relation and target, from its links, supports and
// conflicts_with. It is how a store without edges (the offline path, test
// doubles) answers Incoming exactly as the graphs' edges do.
func References(n memsync.Node, want map[string]bool) []memsync.Reference {
	var out []memsync.Reference
	for _, rel := range []struct {
		name string
		ids  []string
	}{{memsync.RelLinksTo, n.Record.Links}, {memsync.RelSupports, n.Record.Supports()}, {memsync.RelConflictsWith, n.Record.ConflictsWith}} {
		seen := map[string]bool{}
		for _, id := range rel.ids {
			if want[id] && !seen[id] {
				seen[id] = true
				out = append(out, memsync.Reference{Target: id, Relation: rel.name, Source: n})
			}
		}
	}
	return out
}

// ScoreNodes evaluates nodes at the clock from the records naming them
// (read from r). A record whose writer cannot see the memory counts for
// nothing (score.Evaluate asks journal.Sees); one the reader of groups may
// not see still counts but is marked invisible, so that explain never
// names it. A promotion stands only while its original does
// (FollowOriginal).
func ScoreNodes(ctx context.Context, r memsync.SignalReader, nodes []memsync.Node, groups []string, clock memsync.Clock) (map[string]memsync.Scored, error) {
	all, err := withOriginals(ctx, r, nodes)
	if err != nil {
		return nil, err
	}
	scored, err := scoreNodes(ctx, r, all, groups, clock)
	if err != nil {
		return nil, err
	}
	return followOriginals(nodes, scored), nil
}

// withOriginals is nodes and, after them, the originals of the promotions
// among them (the form memsync writes, journal.PromotionOriginal) that
// nodes do not hold, read from r in uuid order: one scoring of them all
// gives followOriginals what it needs, from one read of their signals.
// An original that is not there is left out.
func withOriginals(ctx context.Context, r memsync.SignalReader, nodes []memsync.Node) ([]memsync.Node, error) {
	have := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		have[n.UUID] = true
	}
	var ids []string
	for _, n := range nodes {
		if orig, ok := journal.PromotionOriginal(&n.Record); ok && !have[orig] {
			have[orig] = true
			ids = append(ids, orig)
		}
	}
	if len(ids) == 0 {
		return nodes, nil
	}
	slices.Sort(ids)
	got, err := r.Get(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read the originals of %d promotions: %w", len(ids), err)
	}
	all := slices.Clip(nodes)
	for _, id := range ids {
		if n, ok := got[id]; ok {
			all = append(all, n)
		}
	}
	return all, nil
}

// scoreNodes is ScoreNodes without following promotions' originals.
func scoreNodes(ctx context.Context, r memsync.SignalReader, nodes []memsync.Node, groups []string, clock memsync.Clock) (map[string]memsync.Scored, error) {
	out := make(map[string]memsync.Scored, len(nodes))
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
		e.TS = clock.Clamp(e.TS)
		events[ref.Target] = append(events[ref.Target], e)
	}
	for _, n := range nodes {
		m := score.FromRecord(&n.Record, n.InvalidAt, n.ReplacedBy)
		m.TS = clock.Clamp(m.TS)
		if !m.SupersededAt.IsZero() {
			m.SupersededAt = clock.Clamp(m.SupersededAt)
		}
		res := score.Evaluate(m, events[n.UUID], clock.At)
		n.Importance = res.Importance
		out[n.UUID] = memsync.Scored{Node: n, Result: res, Freshness: score.Freshness(m, res, clock.At)}
	}
	return out, nil
}

// ErrNotVisible is returned by Explain for a memory that does not exist or
// that the reader may not see: the two are not told apart.
var ErrNotVisible = errors.New("no such memory visible to this agent")

// Explain scores one memory for a reader of groups at the clock. A memory
// the reader may not see, or that the clock leaves out, is ErrNotVisible.
func Explain(ctx context.Context, r memsync.SignalReader, uuid string, groups []string, clock memsync.Clock) (memsync.Scored, error) {
	nodes, err := r.Get(ctx, []string{uuid})
	if err != nil {
		return memsync.Scored{}, fmt.Errorf("read memory %s: %w", uuid, err)
	}
	n, ok := nodes[uuid]
	if !ok || !slices.Contains(groups, n.Record.GroupID()) || clock.Hides(n.TS) {
		return memsync.Scored{}, fmt.Errorf("%s: %w", uuid, ErrNotVisible)
	}
	scored, err := ScoreNodes(ctx, r, []memsync.Node{n}, groups, clock)
	if err != nil {
		return memsync.Scored{}, err
	}
	return scored[uuid], nil
}
