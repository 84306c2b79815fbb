package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

var _ memsync.Lister = (*Graph)(nil)

// sqlCreateList are the indexes List reads, created at every open (IF NOT
// EXISTS), so stores written before them get them too: memories by group
// and time, and the core tier's (partial: an entry only for core
// memories). Indexes on task and session would need
// json_extract at every write (measured on a loaded host: Apply fell from
// about 30,000 to 16,000–20,000 records/s with them; these two cost about
// 6 % of Apply's CPU),
// so those are matched within memsync.ScopeWindow instead. A list of some
// kinds reads each kind through memories_kind: through memories_recent it
// read every memory of the group newer than the kind's newest (at 10M
// memories and no decision, a packet's decisions took 30 s).
var sqlCreateList = []string{
	`CREATE INDEX IF NOT EXISTS memories_recent ON memories (group_id, ts)`,
	`CREATE INDEX IF NOT EXISTS memories_core ON memories (group_id, ts) WHERE ` + whereCore,
	`CREATE INDEX IF NOT EXISTS memories_kind ON memories (group_id, kind, ts)`,
}

// whereCore is memories_core's condition; a query uses that index only
// when it repeats it exactly. (Until schema 4 it searched the stored
// record for the tier at every write: 0.9 of a 1M rebuild's 35 CPU-s, on
// the writer.)
const whereCore = `core = 1`

// coreFlag is the core column of a memory of tier.
func coreFlag(tier string) int64 {
	if tier == "core" {
		return 1
	}
	return 0
}

// listSQL is the statement for one group of q: static text, every value a
// parameter, read newest first through one of sqlCreateList's indexes.
func listSQL(q memsync.ListQuery) string {
	base := []string{`group_id = :group`, `(:until IS NULL OR ts <= :until)`}
	if q.Core {
		base = append(base, whereCore)
	}
	var outer []string
	switch {
	case perKind(q):
		base = append(base, `kind = :onekind`)
	case len(q.Kinds) > 0:
		outer = append(outer, `kind IN (SELECT value FROM json_each(:kinds))`)
	}
	if q.Task != "" {
		outer = append(outer, `instr(record, '"task":') > 0 AND json_extract(record, '$.task') = :task`)
	}
	if q.Session != "" {
		outer = append(outer, `instr(record, '"session":') > 0 AND json_extract(record, '$.session') = :session`)
	}
	ids := `SELECT id FROM memories WHERE ` + strings.Join(append(base, outer...), " AND ") + ` ORDER BY ts DESC, uuid DESC LIMIT :limit`
	if q.Task != "" || q.Session != "" {
		// Among the group's newest ScopeWindow records only.
		window := `SELECT id, kind, record, ts, uuid FROM memories WHERE ` + strings.Join(base, " AND ") + ` ORDER BY ts DESC, uuid DESC LIMIT :window`
		ids = `SELECT id FROM (` + window + `) WHERE ` + strings.Join(outer, " AND ") + ` ORDER BY ts DESC, uuid DESC LIMIT :limit`
	}
	return `SELECT ` + nodeCols + ` FROM ` + nodeFrom + ` WHERE m.id IN (` + ids + `) ORDER BY m.ts DESC, m.uuid DESC`
}

// perKind is whether List reads q one kind at a time (listSQL's :onekind,
// through memories_kind): a list of some kinds, not within a task's or
// session's window.
func perKind(q memsync.ListQuery) bool {
	return len(q.Kinds) > 0 && q.Task == "" && q.Session == ""
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
	each := []journal.Kind{""} // the statement reads every kind at once
	if perKind(q) {
		each = slices.Compact(slices.Sorted(slices.Values(q.Kinds)))
	}
	type part struct {
		group string
		kind  journal.Kind
	}
	var parts []part
	for _, group := range slices.Compact(groups) {
		for _, k := range each {
			parts = append(parts, part{group, k})
		}
	}
	for _, p := range parts {
		rows, err := g.rdb.QueryContext(ctx, query, namedArgs(query, map[string]any{"group": p.group, "kinds": kinds, "onekind": string(p.kind),
			"until": until, "task": q.Task, "session": q.Session, "limit": limit, "window": memsync.ScopeWindow})...)
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
