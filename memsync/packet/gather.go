package packet

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	readpath "github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

// How many candidates each source gives (stage one's pool).
const (
	lexicalPool   = readpath.PoolSize
	scopedLimit   = 30
	durableLimit  = 20
	recentLimit   = 15
	decisionLimit = 20
)

// Gather collects a packet's candidates from r, scored at req.AsOf:
// lexical recall of the goal, constraints, failures and questions; and, when r is a memsync.Lister, the task's and
// the session's memories, the core tier, the newest durable preferences
// and procedures, the newest records the role reads, and the decisions old
// enough to wait for an outcome. Every read names only the agent's groups.
func Gather(ctx context.Context, r memsync.Searcher, req Request) ([]memsync.Scored, error) {
	groups := req.Groups()
	text := strings.Join(append(append(append([]string{req.Goal}, req.Constraints...), req.Failures...), req.Questions...), " ")
	var read []Class
	for _, c := range Classes {
		if req.Role.Reads(c) {
			read = append(read, c)
		}
	}
	// One lexical pool (one full-text query, not one per class: most of a
	// packet's time is its searches), of every kind: a kind filter makes
	// Neo4j's full-text search widen its top-k again and again. Build
	// routes by kind; the lists below bring each class's durable and
	// newest memories.
	hits, err := readpath.Search(ctx, r, memsync.SearchQuery{Text: text, Groups: groups, Limit: lexicalPool, All: true})
	if err != nil {
		return nil, fmt.Errorf("packet: recall: %w", err)
	}
	var nodes []memsync.Node
	for _, h := range hits {
		nodes = append(nodes, h.Node)
	}
	if l, ok := r.(memsync.Lister); ok {
		var durable []Class
		for _, c := range read {
			if c == Preference || c == Procedure {
				durable = append(durable, c)
			}
		}
		queries := []memsync.ListQuery{
			{Core: true, Limit: CapCore * 2},
			{Kinds: kindsOf(read), Limit: recentLimit},
			{Kinds: []journal.Kind{journal.KindDecision}, Until: req.AsOf.Add(-score.FollowUpAfter), Limit: decisionLimit},
		}
		if len(durable) > 0 {
			queries = append(queries, memsync.ListQuery{Kinds: kindsOf(durable), Limit: durableLimit})
		}
		if req.Task != "" {
			queries = append(queries, memsync.ListQuery{Task: req.Task, Limit: scopedLimit})
		}
		if req.Session != "" {
			queries = append(queries, memsync.ListQuery{Session: req.Session, Limit: scopedLimit})
		}
		// One after the other: on the embedded store (2 loaded cores)
		// reading them concurrently was slower (packet p95 ~90 ms against
		// ~50 ms).
		for _, q := range queries {
			q.Groups = groups
			if q.Until.IsZero() && req.Cutoff {
				q.Until = req.AsOf
			}
			list, err := l.List(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("packet: list candidates: %w", err)
			}
			nodes = append(nodes, list...)
		}
	}
	// Once each, visible, not after the clock.
	seen := map[string]bool{}
	var keep []memsync.Node
	var named []string
	for _, n := range nodes {
		if seen[n.UUID] || !slices.Contains(groups, n.Record.GroupID()) || req.Clock().Hides(n.TS) {
			continue
		}
		seen[n.UUID] = true
		keep = append(keep, n)
		named = append(append(append(named, n.Record.Supersedes...), n.Record.Links...), n.Record.Supports()...)
	}
	// The memories candidates retire or build on, so an item can name them
	// when the reader may see them (retired ones are never items).
	var missing []string
	for _, id := range named {
		if !seen[id] && !slices.Contains(missing, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		got, err := r.Get(ctx, missing)
		if err != nil {
			return nil, fmt.Errorf("packet: read linked memories: %w", err)
		}
		for _, id := range missing {
			if n, ok := got[id]; ok && slices.Contains(groups, n.Record.GroupID()) && !req.Clock().Hides(n.TS) {
				keep = append(keep, n)
			}
		}
	}
	scored, err := readpath.ScoreNodes(ctx, r, keep, groups, req.Clock())
	if err != nil {
		return nil, fmt.Errorf("packet: score candidates: %w", err)
	}
	out := make([]memsync.Scored, 0, len(keep))
	for _, n := range keep {
		out = append(out, scored[n.UUID])
	}
	return out, nil
}

func kindsOf(classes []Class) []journal.Kind {
	var out []journal.Kind
	for _, c := range classes {
		out = append(out, c.Kinds()...)
	}
	return out
}

// BuildPacket gathers req's candidates from r and builds its packet: what
// commands, hooks and the MCP server call. It fails only when r does; the
// caller falls back to the journals (offline.Journals) then.
func BuildPacket(ctx context.Context, r memsync.Searcher, req Request) (Packet, error) {
	if err := req.Validate(); err != nil {
		return Packet{}, err
	}
	cands, err := Gather(ctx, r, req)
	if err != nil {
		return Packet{}, err
	}
	return Build(req, cands), nil
}
