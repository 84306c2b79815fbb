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
// so those are matched within memsync.ScopeWindow instead. Each of
// sparseKinds has a partial index of its own (kindIndex): through
// memories_recent, a list of a kind read every memory of the group newer
// than the kind's newest (at 10M memories and no decision, a packet's
// decisions took 30 s). The common kinds have none: their lists find
// their newest at once, and an index of every kind cost Apply a third of
// its throughput.
var sqlCreateList = append([]string{
	`CREATE INDEX IF NOT EXISTS memories_recent ON memories (group_id, ts)`,
	`CREATE INDEX IF NOT EXISTS memories_core ON memories (group_id, ts) WHERE ` + whereCore,
}, kindIndexes()...)

// sparseKinds are the kinds a packet lists apart from the others (its
// decisions, its durable preferences and procedures, the reflection and
// summary classes) and that agents write least: a partial index each.
var sparseKinds = []journal.Kind{
	journal.KindCompaction, journal.KindDecision, journal.KindPreference,
	journal.KindProcedure, journal.KindReflection, journal.KindSummary,
}

// whereKind is the condition of k's partial index; a query uses it only
// when it repeats it exactly, so k is written into the statement (a kind
// of sparseKinds: static text, never a caller's value).
func whereKind(k journal.Kind) string { return `kind = '` + string(k) + `'` }

// kindIndexes are the partial indexes of sparseKinds.
func kindIndexes() []string {
	var out []string
	for _, k := range sparseKinds {
		out = append(out, `CREATE INDEX IF NOT EXISTS memories_kind_`+string(k)+` ON memories (group_id, ts) WHERE `+whereKind(k))
	}
	return out
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

// listSQL is the statement for one group of q (of its kind one alone, one
// of sparseKinds, when one is set): static text, every value a parameter,
// read newest first through one of sqlCreateList's indexes.
func listSQL(q memsync.ListQuery, one journal.Kind) string {
	base := []string{`group_id = :group`, `(:until IS NULL OR ts <= :until)`}
	if q.Core {
		base = append(base, whereCore)
	}
	var outer []string
	switch {
	case one != "":
		base = append(base, whereKind(one))
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

// kindParts splits q's kinds into those List reads one at a time (of
// sparseKinds, through their own indexes) and the rest, read at once (q
// with Kinds cut to them; nil when none is left). Within a task's or a
// session's window every kind is read at once.
func kindParts(q memsync.ListQuery) (apart []journal.Kind, rest *memsync.ListQuery) {
	if len(q.Kinds) == 0 || q.Task != "" || q.Session != "" {
		return nil, &q
	}
	var others []journal.Kind
	for _, k := range slices.Compact(slices.Sorted(slices.Values(q.Kinds))) {
		if slices.Contains(sparseKinds, k) {
			apart = append(apart, k)
		} else {
			others = append(others, k)
		}
	}
	if len(others) == 0 {
		return apart, nil
	}
	q.Kinds = others
	return apart, &q
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
	var until any
	if !q.Until.IsZero() {
		until = formatTS(q.Until)
	}
	type part struct {
		group string
		query string
		kinds any // the JSON list of the kinds it reads at once (nil: none, or one in its text)
	}
	apart, rest := kindParts(q)
	var statements []part // with group unset
	for _, k := range apart {
		statements = append(statements, part{query: listSQL(q, k)})
	}
	if rest != nil {
		st := part{query: listSQL(*rest, "")}
		if len(rest.Kinds) > 0 {
			b, err := json.Marshal(rest.Kinds)
			if err != nil {
				return nil, fmt.Errorf("embedded: list: %w", err)
			}
			st.kinds = string(b)
		}
		statements = append(statements, st)
	}
	var out []memsync.Node
	groups := slices.Clone(q.Groups)
	slices.Sort(groups)
	var parts []part
	for _, group := range slices.Compact(groups) {
		for _, st := range statements {
			st.group = group
			parts = append(parts, st)
		}
	}
	for _, p := range parts {
		rows, err := g.rdb.QueryContext(ctx, p.query, namedArgs(p.query, map[string]any{"group": p.group, "kinds": p.kinds,
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
