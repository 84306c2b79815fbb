package neo4j

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/memsync"
)

var _ memsync.Lister = (*Graph)(nil)

// farFuture bounds ts when a ListQuery sets no bound: a range on ts lets
// the (group_id, ts) index give the order.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// listQuery is the statement for q over every group of $groups: fixed
// text, every value a parameter, one row per memory with its group. The
// core tier is read through its index; otherwise the (group_id, ts) index
// gives each group's memories newest first, and a task or session is
// matched among the newest memsync.ScopeWindow of them. Each group gives
// at most $limit rows, in ts order only: List asks for one more than it
// needs and settles ties at the cut itself.
func listQuery(q memsync.ListQuery) string {
	base := []string{"m.group_id = group", "m.ts <= $until", "m.hash IS NOT NULL"}
	if q.Core {
		base = append(base, "m.tier = 'core'")
	}
	var filter []string
	if q.Task != "" {
		filter = append(filter, "m.task = $task")
	}
	if q.Session != "" {
		filter = append(filter, "m.session = $session")
	}
	if len(q.Kinds) > 0 {
		filter = append(filter, "m.kind IN $kinds")
	}
	// Ordering by the index's two keys (group_id is fixed) lets the index
	// give the order, so the seek stops at the limit; by ts alone Neo4j
	// reads the whole group and keeps a top-k.
	order := "m.group_id DESC, m.ts DESC"
	match := "MATCH (m:Memory) USING INDEX m:Memory(group_id, ts) WHERE " + strings.Join(base, " AND ")
	if q.Core {
		// The core tier is small: its own index, then a sort.
		match = "MATCH (m:Memory) WHERE " + strings.Join(base, " AND ")
	}
	if q.Task != "" || q.Session != "" {
		// The window is the group's newest $window memories in memsync's
		// order (ts, then uuid): when its edge falls inside a run of
		// memories of one ts, the run is read whole through the index and
		// the window takes its largest uuids, not whichever the index
		// gives first.
		run := make([]string, len(base))
		for i, c := range base {
			run[i] = strings.ReplaceAll(c, "m.", "t.")
		}
		match += "\n  WITH group, m ORDER BY " + order + " LIMIT $window" +
			"\n  WITH group, collect(m) AS w" +
			"\n  WITH group, w, CASE WHEN size(w) = $window THEN w[-1].ts END AS edge" +
			"\n  CALL {\n    WITH group, edge" +
			"\n    MATCH (t:Memory) WHERE edge IS NOT NULL AND " + strings.Join(run, " AND ") + " AND t.ts = edge" +
			"\n    WITH t ORDER BY t.uuid DESC\n    RETURN collect(t) AS run\n  }" +
			"\n  WITH [x IN w WHERE edge IS NULL OR x.ts > edge] AS above, run" +
			"\n  UNWIND above + run[0..($window - size(above))] AS m"
		if len(filter) > 0 {
			match += "\n  WITH m WHERE " + strings.Join(filter, " AND ")
		}
	} else if len(filter) > 0 {
		match += " AND " + strings.Join(filter, " AND ")
	}
	return "UNWIND $groups AS group\nCALL {\n  WITH group\n  " + match +
		"\n  WITH m ORDER BY " + order + " LIMIT $limit\n  RETURN m\n}\nWITH m" + nodeColumns
}

// List returns the memories meeting q, newest first (memsync.ListQuery):
// newest first within each group, merged. One statement reads every
// group; a group whose cut falls inside a run of memories of one ts is
// read again with a wider limit, so that the run's order is memsync's
// (uuid), not the server's.
func (g *Graph) List(ctx context.Context, q memsync.ListQuery) ([]memsync.Node, error) {
	ctx = withPin(ctx) // all its reads in one generation (generation.go)
	if len(q.Groups) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	until := farFuture
	if !q.Until.IsZero() {
		until = q.Until.UTC()
	}
	kinds := make([]string, len(q.Kinds))
	for i, k := range q.Kinds {
		kinds[i] = string(k)
	}
	query := listQuery(q)
	read := func(groups []string, n int) (map[string][]memsync.Node, error) {
		nodes, err := g.readNodes(ctx, query, map[string]any{
			"groups": groups, "until": until, "task": q.Task, "session": q.Session, "kinds": kinds,
			"limit": int64(n + 1), "window": int64(memsync.ScopeWindow),
		})
		if err != nil {
			return nil, wrap("list", err)
		}
		by := map[string][]memsync.Node{}
		for _, n := range nodes {
			by[n.GroupID] = append(by[n.GroupID], n)
		}
		return by, nil
	}
	groups := slices.Clone(q.Groups)
	slices.Sort(groups)
	groups = slices.Compact(groups)
	by, err := read(groups, limit)
	if err != nil {
		return nil, err
	}
	var out []memsync.Node
	for _, group := range groups {
		nodes, n := by[group], limit
		for {
			slices.SortFunc(nodes, memsync.NewerFirst)
			// Asked for n+1: more than n rows and the last two of one
			// ts mean the run may go on past what was read.
			if len(nodes) <= n || !nodes[n].TS.Equal(nodes[n-1].TS) {
				break
			}
			n *= 4
			again, err := read([]string{group}, n)
			if err != nil {
				return nil, err
			}
			nodes = again[group]
		}
		out = append(out, nodes[:min(len(nodes), limit)]...)
	}
	slices.SortFunc(out, memsync.NewerFirst)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
