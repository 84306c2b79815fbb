package neo4j

import (
	"context"
	"time"

	"github.com/memsync/memsync/memsync"
)

var _ memsync.Lister = (*Graph)(nil)

// listQuery lists memories by their fields, newest first; every value is a
// parameter. The (group_id, ts) index serves the groups and the bound.
const listQuery = `
MATCH (m:Memory) WHERE m.group_id IN $groups AND m.hash IS NOT NULL
  AND ($kinds IS NULL OR m.kind IN $kinds)
  AND ($task = '' OR m.task = $task)
  AND ($session = '' OR m.session = $session)
  AND (NOT $core OR m.tier = 'core')
  AND ($until IS NULL OR m.ts <= $until)
WITH m ORDER BY m.ts DESC, m.uuid DESC LIMIT $limit` + nodeColumns

// List returns the memories meeting q, newest first (memsync.ListQuery).
func (g *Graph) List(ctx context.Context, q memsync.ListQuery) ([]memsync.Node, error) {
	if len(q.Groups) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	params := map[string]any{
		"groups": q.Groups, "kinds": nil, "task": q.Task, "session": q.Session,
		"core": q.Core, "until": nil, "limit": int64(limit),
	}
	if len(q.Kinds) > 0 {
		kinds := make([]string, len(q.Kinds))
		for i, k := range q.Kinds {
			kinds[i] = string(k)
		}
		params["kinds"] = kinds
	}
	if !q.Until.IsZero() {
		params["until"] = q.Until.UTC().Truncate(time.Nanosecond)
	}
	nodes, err := g.readNodes(ctx, listQuery, params)
	if err != nil {
		return nil, wrap("list", err)
	}
	return nodes, nil
}
