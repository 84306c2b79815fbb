package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/memsync/memsync/memsync"
)

var _ memsync.Lister = (*Graph)(nil)

// sqlCreateList are the indexes List reads, created at every open (IF NOT
// EXISTS), so stores written before them get them too. Memories by group
// and time; and, partial so they stay small and cost a write only when
// the field is there, core-tier memories and memories by task and by
// session. task, session and tier live in the stored record: instr finds
// the (compact, canonical) key before json_extract reads its value.
var sqlCreateList = []string{
	`CREATE INDEX IF NOT EXISTS memories_recent ON memories (group_id, ts)`,
	`CREATE INDEX IF NOT EXISTS memories_core ON memories (group_id, ts) WHERE ` + whereCore,
	`CREATE INDEX IF NOT EXISTS memories_task ON memories (` + taskExpr + `, group_id, ts) WHERE ` + whereTask,
	`CREATE INDEX IF NOT EXISTS memories_session ON memories (` + sessionExpr + `, group_id, ts) WHERE ` + whereSession,
}

// The expressions of the partial indexes; a query uses an index only when
// it repeats them exactly.
const (
	whereCore    = `instr(record, '"tier":"core"') > 0`
	whereTask    = `instr(record, '"task":') > 0`
	whereSession = `instr(record, '"session":') > 0`
	taskExpr     = `json_extract(record, '$.task')`
	sessionExpr  = `json_extract(record, '$.session')`
)

// listSQL is the statement for one group of q: static text (every value a
// parameter) whose conditions match one of sqlCreateList's indexes, so
// that reading newest first stops at the limit.
func listSQL(q memsync.ListQuery) string {
	var where []string
	switch {
	case q.Task != "":
		where = append(where, whereTask, taskExpr+` = :task`)
	case q.Session != "":
		where = append(where, whereSession, sessionExpr+` = :session`)
	case q.Core:
		where = append(where, whereCore)
	}
	// A second scoping condition is checked on the rows the first finds.
	if q.Task != "" && q.Session != "" {
		where = append(where, `json_extract(record, '$.session') = :session`)
	}
	if q.Core && (q.Task != "" || q.Session != "") {
		where = append(where, `json_extract(record, '$.tier') = 'core'`)
	}
	where = append(where, `group_id = :group`, `(:kinds IS NULL OR kind IN (SELECT value FROM json_each(:kinds)))`, `(:until IS NULL OR ts <= :until)`)
	return `SELECT ` + nodeCols + ` FROM ` + nodeFrom + ` WHERE m.id IN (SELECT id FROM memories WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY ts DESC, uuid DESC LIMIT :limit) ORDER BY m.ts DESC, m.uuid DESC`
}

// namedArgs are the values of the parameters query names, in name order.
func namedArgs(query string, values map[string]any) []any {
	names := make([]string, 0, len(values))
	for k := range values {
		if strings.Contains(query, ":"+k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	args := make([]any, len(names))
	for i, k := range names {
		args[i] = sql.Named(k, values[k])
	}
	return args
}

// List returns the memories meeting q, newest first (memsync.ListQuery):
// newest first within each group, merged.
func (g *Graph) List(ctx context.Context, q memsync.ListQuery) ([]memsync.Node, error) {
	if len(q.Groups) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
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
	query := listSQL(q)
	var out []memsync.Node
	groups := slices.Clone(q.Groups)
	slices.Sort(groups)
	for _, group := range slices.Compact(groups) {
		rows, err := g.rdb.QueryContext(ctx, query, namedArgs(query, map[string]any{"group": group, "kinds": kinds, "until": until,
			"task": q.Task, "session": q.Session, "limit": limit})...)
		if err != nil {
			return nil, g.wrap("list", err)
		}
		for rows.Next() {
			n, err := scanNode(rows)
			if err != nil {
				rows.Close()
				return nil, g.wrap("list", err)
			}
			out = append(out, n)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, g.wrap("list", err)
		}
	}
	slices.SortFunc(out, memsync.NewerFirst)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
