package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

var _ memsync.WindowReader = (*Graph)(nil)

// A window (memsync.WindowQuery) is read in two steps. The cut: each
// group's timestamps, newest first, from the memories_recent index alone
// (no row is read), in pages that grow, merged until the window is full;
// the ts of its oldest record is the cut. Then the rows: each group's
// memories newer than the cut, and of those at the cut the largest uuids
// that fill the window (ts, then uuid, as everywhere), each with a few
// fields SQLite takes from the stored record (json_extract, behind an
// instr test that keeps it off the records that cannot match): no record
// is decoded in Go, which is what a window of decoded nodes cost (at
// 100,000 memories a 5,000-record window took 0.1–2 s per viewer on a
// loaded host).

// windowPage is the cut's largest page of timestamps per group,
// windowFirstPage its smallest first one.
const (
	windowPage      = 4096
	windowFirstPage = 32
)

// The statements of a window read: static text, every value a parameter.
const (
	// sqlWindowTimes is a page of one group's timestamps, newest first,
	// older than :before: index only.
	sqlWindowTimes = `SELECT ts FROM memories WHERE group_id = :group AND ts >= :since AND ts < :before ORDER BY ts DESC LIMIT :limit`
	// sqlWindowRun counts a group's memories of one ts.
	sqlWindowRun = `SELECT count(*) FROM memories WHERE group_id = :group AND ts = :ts`
)

// sqlWindowRows are a group's memories newer than :after that where lets
// through, with cols; sqlWindowAtCut those of the :n largest uuids of the
// groups' memories at ts :cut.
func sqlWindowRows(where, cols string) string {
	return `SELECT m.uuid, m.ts, m.group_id, ` + cols + ` FROM memories AS m
	WHERE m.group_id = :group AND m.ts >= :since AND m.ts > :after AND (` + where + `)`
}

func sqlWindowAtCut(where, cols string) string {
	return `SELECT m.uuid, m.ts, m.group_id, ` + cols + ` FROM (SELECT * FROM memories
	  WHERE group_id IN (SELECT value FROM json_each(:groups)) AND ts = :cut ORDER BY uuid DESC LIMIT :n) AS m
	WHERE ` + where
}

// noBefore is above every stored ts (tsLayout's digits): the first page's
// :before.
const noBefore = "\xff"

// The conditions and columns of the two window reads. A record may be a
// candidate when it is a promotion, names a conflict, or declares
// confidence low (a learning record's); it may mention an entity when it
// declares some or its text holds a sigil.
const (
	windowCandidateWhere = `m.kind = 'promotion' OR instr(m.record, '"conflicts_with":[') > 0 OR instr(m.record, '"confidence":"low"') > 0`
	windowMentionWhere   = `instr(m.record, '"entities":[') > 0 OR instr(m.record, '@') > 0 OR instr(m.record, '#') > 0 OR instr(m.record, '[[') > 0`
	windowCandidateCols  = `m.kind,
	  instr(m.record, '"conflicts_with":[') > 0 AND IFNULL(json_array_length(m.record, '$.conflicts_with'), 0) > 0,
	  m.record ->> '$.tier', m.record ->> '$.confidence'`
	// A record's entities are its declared ones and those its text
	// mentions (journal.Record.AllEntities).
	windowMentionCols = `m.record -> '$.entities', m.record ->> '$.text'`
)

// windowKey orders a window's rows: ts (as stored, which sorts as time),
// then uuid, both descending.
type windowKey struct{ ts, uuid string }

func (a windowKey) newer(b windowKey) bool { return a.ts > b.ts || a.ts == b.ts && a.uuid > b.uuid }

// windowCut is q's window's cut: the ts of its oldest record, how many
// of the window's records have that ts, and what the window holds.
func (g *Graph) windowCut(ctx context.Context, groups []string, since string, limit int) (cut string, atCut int, w memsync.Window, err error) {
	type cursor struct {
		group  string
		buf    []string
		before string
		size   int
		done   bool
	}
	fill := func(c *cursor) error {
		rows, err := g.rdb.QueryContext(ctx, sqlWindowTimes, sql.Named("group", c.group), sql.Named("since", since),
			sql.Named("before", c.before), sql.Named("limit", c.size))
		if err != nil {
			return err
		}
		got := 0
		for rows.Next() {
			var ts string
			if err := rows.Scan(&ts); err != nil {
				rows.Close()
				return err
			}
			c.buf = append(c.buf, ts)
			got++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if got < c.size {
			c.done = true
			return nil
		}
		// The page may end inside a run of one ts: count the run whole,
		// so that the next page (older than it) misses none of it.
		last, held := c.buf[len(c.buf)-1], 0
		for i := len(c.buf) - 1; i >= 0 && c.buf[i] == last; i-- {
			held++
		}
		var run int
		if err := g.rdb.QueryRowContext(ctx, sqlWindowRun, sql.Named("group", c.group), sql.Named("ts", last)).Scan(&run); err != nil {
			return err
		}
		for ; held < run; held++ {
			c.buf = append(c.buf, last)
		}
		c.before, c.size = last, min(c.size*4, windowPage)
		return nil
	}
	first := min(max(windowFirstPage, (limit+1)/len(groups)+1), windowPage, limit+1)
	cs := make([]*cursor, len(groups))
	for i, gr := range groups {
		cs[i] = &cursor{group: gr, before: noBefore, size: first}
	}
	taken := 0
	for {
		var head *cursor
		for _, c := range cs {
			if len(c.buf) == 0 && !c.done {
				if err := fill(c); err != nil {
					return "", 0, memsync.Window{}, err
				}
			}
			if len(c.buf) > 0 && (head == nil || c.buf[0] > head.buf[0]) {
				head = c
			}
		}
		switch {
		case head == nil:
			return cut, atCut, memsync.Window{Records: taken}, nil
		case taken == limit:
			return cut, atCut, memsync.Window{Records: taken, Bounded: true}, nil
		}
		if ts := head.buf[0]; ts == cut {
			atCut++
		} else {
			cut, atCut = ts, 1
		}
		head.buf = head.buf[1:]
		taken++
	}
}

// windowRows reads the records of q's window that where lets through
// (a condition on m, a superset of what the caller looks for, so that
// SQLite passes over the others without a row for Go) with cols
// (windowCandidateCols or windowMentionCols), newest first: scan reads a
// row, its uuid, ts and group first. w is what the whole window holds.
func windowRows[T any](ctx context.Context, g *Graph, what, where, cols string, q memsync.WindowQuery,
	scan func(rows *sql.Rows, uuid, ts, group *string) (T, error)) (out []T, w memsync.Window, err error) {
	groups := slices.Clone(q.Groups)
	slices.Sort(groups)
	groups = slices.Compact(groups)
	if len(groups) == 0 {
		return nil, w, nil
	}
	since := ""
	if !q.Since.IsZero() {
		since = formatTS(q.Since)
	}
	cut, atCut, w, err := g.windowCut(ctx, groups, since, q.Size())
	if err != nil {
		return nil, w, g.wrap(what, err)
	}
	bounded := w.Bounded
	type row struct {
		key windowKey
		v   T
	}
	var rs []row
	read := func(query string, args ...any) error {
		rows, err := g.rdb.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r row
			var group string
			if r.v, err = scan(rows, &r.key.uuid, &r.key.ts, &group); err != nil {
				return err
			}
			rs = append(rs, r)
		}
		return rows.Err()
	}
	// A window the limit did not stop is every record since q.Since
	// (every ts is after ""); one it stopped, the records newer than the
	// cut and the largest uuids at it.
	after := ""
	if bounded {
		after = cut
	}
	rowsQuery := sqlWindowRows(where, cols)
	for _, gr := range groups {
		if err := read(rowsQuery, sql.Named("group", gr), sql.Named("since", since), sql.Named("after", after)); err != nil {
			return nil, w, g.wrap(what, err)
		}
	}
	if bounded {
		ids, err := json.Marshal(groups)
		if err != nil {
			return nil, w, fmt.Errorf("embedded: %s: %w", what, err)
		}
		if err := read(sqlWindowAtCut(where, cols), sql.Named("groups", string(ids)), sql.Named("cut", cut), sql.Named("n", atCut)); err != nil {
			return nil, w, g.wrap(what, err)
		}
	}
	slices.SortFunc(rs, func(a, b row) int {
		switch {
		case a.key.newer(b.key):
			return -1
		case b.key.newer(a.key):
			return 1
		}
		return 0
	})
	out = make([]T, len(rs))
	for i, r := range rs {
		out[i] = r.v
	}
	return out, w, nil
}

// WindowCandidates returns the queue's candidates of q's window
// (memsync.CandidatesFrom's answer) from the stored fields.
func (g *Graph) WindowCandidates(ctx context.Context, q memsync.WindowQuery) (memsync.Candidates, error) {
	rows, w, err := windowRows(ctx, g, "window candidates", windowCandidateWhere, windowCandidateCols, q,
		func(rows *sql.Rows, uuid, ts, group *string) (memsync.CandidateFields, error) {
			var f memsync.CandidateFields
			var tier, confidence sql.NullString
			err := rows.Scan(uuid, ts, group, &f.Kind, &f.Conflicts, &tier, &confidence)
			f.UUID, f.Tier, f.Confidence = *uuid, tier.String, confidence.String
			return f, err
		})
	if err != nil {
		return memsync.Candidates{}, err
	}
	out := memsync.Candidates{Window: w}
	for _, f := range rows {
		out.Add(f)
	}
	return out, nil
}

// WindowMentions returns the entities q's window mentions
// (memsync.MentionsFrom's answer), each record's from its stored
// entities and text.
func (g *Graph) WindowMentions(ctx context.Context, q memsync.WindowQuery) (memsync.Mentions, error) {
	type named struct {
		ts       time.Time
		group    string
		entities []string
	}
	rows, w, err := windowRows(ctx, g, "window mentions", windowMentionWhere, windowMentionCols, q,
		func(rows *sql.Rows, uuid, ts, group *string) (named, error) {
			var ents, text sql.NullString
			if err := rows.Scan(uuid, ts, group, &ents, &text); err != nil {
				return named{}, err
			}
			n := named{group: *group}
			if !ents.Valid && !text.Valid {
				return n, nil
			}
			r := journal.Record{Text: text.String}
			if ents.Valid {
				if err := json.Unmarshal([]byte(ents.String), &r.Entities); err != nil {
					return n, fmt.Errorf("%s: entities: %w", *uuid, err)
				}
			}
			if n.entities = r.AllEntities(); len(n.entities) == 0 {
				return n, nil
			}
			t, err := time.Parse(time.RFC3339Nano, *ts)
			if err != nil {
				return n, fmt.Errorf("%s: ts: %w", *uuid, err)
			}
			n.ts = t
			return n, nil
		})
	if err != nil {
		return memsync.Mentions{}, err
	}
	var t memsync.MentionTally
	for _, n := range rows {
		t.Add(n.group, n.ts, n.entities)
	}
	return t.Mentions(w), nil
}
