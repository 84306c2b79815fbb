package neo4j

import (
	"context"
	"fmt"
	"slices"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

var _ memsync.WindowReader = (*Graph)(nil)

// farPast bounds ts when a WindowQuery sets no Since, so that the
// (group_id, ts) index is read as a range.
var farPast = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

// windowMatch finds a window (memsync.WindowQuery) and leaves it as win
// (its memories newest first, ts then uuid) and bounded: each group's
// newest $limit + 1 through the (group_id, ts) index, and when that cut falls
// inside a run of one ts, the whole run (as listQuery reads a window's
// edge), so that the merge takes the run's largest uuids; then the groups
// merged, one more than the limit kept to tell whether it stopped the
// window. Fixed text, every value a parameter.
const windowMatch = `UNWIND $groups AS group
CALL {
  WITH group
  MATCH (m:Memory) USING INDEX m:Memory(group_id, ts)
  WHERE m.group_id = group AND m.ts >= $since AND m.hash IS NOT NULL
  WITH group, m ORDER BY m.group_id DESC, m.ts DESC LIMIT $limit + 1
  WITH group, collect(m) AS w
  WITH group, w, CASE WHEN size(w) > $limit THEN w[-1].ts END AS edge
  CALL {
    WITH group, edge
    MATCH (t:Memory) WHERE edge IS NOT NULL AND t.group_id = group AND t.ts = edge AND t.hash IS NOT NULL
    RETURN collect(t) AS run
  }
  UNWIND [x IN w WHERE edge IS NULL OR x.ts > edge] + run AS m
  RETURN m
}
WITH m ORDER BY m.ts DESC, m.uuid DESC LIMIT $limit + 1
WITH collect(m) AS ms
WITH ms[0..$limit] AS win, size(ms) > $limit AS bounded
`

// windowCandidates returns, of the window, the fields of the memories
// that may be candidates (memsync.Candidates.Add judges them): the
// promotions, those of a tier and those that name a conflict.
const windowCandidates = windowMatch + `RETURN size(win) AS records, bounded,
  [m IN win WHERE m.kind = 'promotion' OR m.tier IS NOT NULL OR size([(m)-[:CONFLICTS_WITH]->(t) | t]) > 0 |
    [m.uuid, m.kind, m.tier, m.confidence, size([(m)-[:CONFLICTS_WITH]->(t) | t]) > 0]] AS rows`

// windowMentions counts, per group and name, the entities the window's
// memories mention (their MENTIONS edges: journal.Record.AllEntities).
const windowMentions = windowMatch + `CALL {
  WITH win
  UNWIND win AS m
  MATCH (m)-[:MENTIONS]->(e)
  WITH m.group_id AS g, e.name AS name, count(*) AS n, max(m.ts) AS newest
  RETURN collect([g, name, n, newest]) AS entities
}
RETURN size(win) AS records, bounded, entities`

// readWindow runs query (windowCandidates or windowMentions) for q and
// returns its one row's window and list column col.
func (g *Graph) readWindow(ctx context.Context, what, query, col string, q memsync.WindowQuery) (memsync.Window, []any, error) {
	ctx = withPin(ctx)
	groups := slices.Clone(q.Groups)
	slices.Sort(groups)
	groups = slices.Compact(groups)
	if len(groups) == 0 {
		return memsync.Window{}, nil, nil
	}
	since := farPast
	if !q.Since.IsZero() {
		since = q.Since.UTC()
	}
	type answer struct {
		w    memsync.Window
		list []any
	}
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	a, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (answer, error) {
		res, err := tx.Run(ctx, query, map[string]any{"groups": groups, "since": since, "limit": int64(q.Size())})
		if err != nil {
			return answer{}, err
		}
		rec, err := res.Single(ctx)
		if err != nil {
			return answer{}, err
		}
		var a answer
		records, _ := rec.Get("records")
		n, _ := records.(int64)
		bounded, _ := rec.Get("bounded")
		a.w.Records = int(n)
		a.w.Bounded, _ = bounded.(bool)
		list, _ := rec.Get(col)
		a.list, _ = list.([]any)
		return a, nil
	})
	if err != nil {
		return memsync.Window{}, nil, wrap(what, err)
	}
	return a.w, a.list, nil
}

// WindowCandidates returns the queue's candidates of q's window
// (memsync.CandidatesFrom's answer) from the stored properties.
func (g *Graph) WindowCandidates(ctx context.Context, q memsync.WindowQuery) (memsync.Candidates, error) {
	w, rows, err := g.readWindow(ctx, "window candidates", windowCandidates, "rows", q)
	if err != nil {
		return memsync.Candidates{}, err
	}
	out := memsync.Candidates{Window: w}
	for _, r := range rows {
		v, ok := r.([]any)
		if !ok || len(v) != 5 {
			return memsync.Candidates{}, fmt.Errorf("neo4j: window candidates: row %v", r)
		}
		var f memsync.CandidateFields
		f.UUID, _ = v[0].(string)
		kind, _ := v[1].(string)
		f.Kind = journal.Kind(kind)
		f.Tier, _ = v[2].(string)
		f.Confidence, _ = v[3].(string)
		f.Conflicts, _ = v[4].(bool)
		out.Add(f)
	}
	return out, nil
}

// WindowMentions returns the entities q's window mentions
// (memsync.MentionsFrom's answer), counted by the server.
func (g *Graph) WindowMentions(ctx context.Context, q memsync.WindowQuery) (memsync.Mentions, error) {
	w, rows, err := g.readWindow(ctx, "window mentions", windowMentions, "entities", q)
	if err != nil {
		return memsync.Mentions{}, err
	}
	out := memsync.Mentions{Window: w}
	for _, r := range rows {
		v, ok := r.([]any)
		if !ok || len(v) != 4 {
			return memsync.Mentions{}, fmt.Errorf("neo4j: window mentions: row %v", r)
		}
		var e memsync.EntityCount
		e.Group, _ = v[0].(string)
		e.Name, _ = v[1].(string)
		n, _ := v[2].(int64)
		e.Mentions = int(n)
		if t, ok := v[3].(time.Time); ok {
			e.Newest = t.UTC()
		}
		out.Entities = append(out.Entities, e)
	}
	slices.SortFunc(out.Entities, memsync.EntityOrder)
	return out, nil
}
