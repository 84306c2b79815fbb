package embedded

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/memsync/memsync/memsync"
)

var _ memsync.Lister = (*Graph)(nil)

// sqlList lists memories by their fields, newest first. task, session and
// tier live in the record: instr skips the records that do not hold the
// field at all before json_extract parses the ones that might.
const sqlList = `SELECT ` + nodeCols + ` FROM ` + nodeFrom + `
	WHERE m.group_id IN (SELECT value FROM json_each(?1))
	  AND (?2 IS NULL OR m.kind IN (SELECT value FROM json_each(?2)))
	  AND (?3 = '' OR (instr(m.record, '"task":') > 0 AND json_extract(m.record, '$.task') = ?3))
	  AND (?4 = '' OR (instr(m.record, '"session":') > 0 AND json_extract(m.record, '$.session') = ?4))
	  AND (?5 = 0 OR (instr(m.record, '"tier":"core"') > 0 AND json_extract(m.record, '$.tier') = 'core'))
	  AND (?6 IS NULL OR m.ts <= ?6)
	ORDER BY m.ts DESC, m.uuid DESC LIMIT ?7`

// List returns the memories meeting q, newest first (memsync.ListQuery).
func (g *Graph) List(ctx context.Context, q memsync.ListQuery) ([]memsync.Node, error) {
	if len(q.Groups) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	groups, err := json.Marshal(q.Groups)
	if err != nil {
		return nil, fmt.Errorf("embedded: list: %w", err)
	}
	var kinds, until any
	if len(q.Kinds) > 0 {
		b, err := json.Marshal(q.Kinds)
		if err != nil {
			return nil, fmt.Errorf("embedded: list: %w", err)
		}
		kinds = string(b)
	}
	if !q.Until.IsZero() {
		until = formatTS(q.Until)
	}
	core := 0
	if q.Core {
		core = 1
	}
	rows, err := g.rdb.QueryContext(ctx, sqlList, string(groups), kinds, q.Task, q.Session, core, until, limit)
	if err != nil {
		return nil, g.wrap("list", err)
	}
	defer rows.Close()
	var out []memsync.Node
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, g.wrap("list", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, g.wrap("list", err)
	}
	return out, nil
}
