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

// tieSlack is how many more rows than asked a group's query reads, so
// that memories sharing the last ts still sort by uuid (in Go): ordering
// by the index's keys alone lets the (group_id, ts) index give the order,
// where uuid as a further key made Neo4j read and sort the whole group.
const tieSlack = 32

// listQuery is the statement for one group of q: fixed text, every value a
// parameter. The core tier is read through its index; otherwise the
// (group_id, ts) index gives the group's memories newest first, and a task
// or session is matched among the newest memsync.ScopeWindow of them.
func listQuery(q memsync.ListQuery) string {
	base := []string{"m.group_id = $group", "m.ts <= $until", "m.hash IS NOT NULL"}
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
		match += "\nWITH m ORDER BY " + order + " LIMIT $window"
		if len(filter) > 0 {
			match += "\nWITH m WHERE " + strings.Join(filter, " AND ")
		}
	} else if len(filter) > 0 {
		match += " AND " + strings.Join(filter, " AND ")
	}
	return match + "\nWITH m ORDER BY " + order + " LIMIT $limit" + nodeColumns
}

// List returns the memories meeting q, newest first (memsync.ListQuery):
// newest first within each group, merged.
func (g *Graph) List(ctx context.Context, q memsync.ListQuery) ([]memsync.Node, error) {
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
	groups := slices.Clone(q.Groups)
	slices.Sort(groups)
	var out []memsync.Node
	for _, group := range slices.Compact(groups) {
		nodes, err := g.readNodes(ctx, query, map[string]any{
			"group": group, "until": until, "task": q.Task, "session": q.Session, "kinds": kinds, "limit": int64(limit + tieSlack),
			"window": int64(memsync.ScopeWindow),
		})
		if err != nil {
			return nil, wrap("list", err)
		}
		out = append(out, nodes...)
	}
	slices.SortFunc(out, memsync.NewerFirst)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
