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

// A window (memsync.WindowQuery) is read group by group through the
// memories_recent index, newest first, in pages that grow, and the groups
// are merged: each group gives at most a page more than its share of the
// window. A row is a memory's uuid and ts and a few fields SQLite takes
// from the stored record (json_extract, behind an instr test that keeps
// it off the records that cannot match): no record is decoded in Go, which
// is what a window of decoded nodes cost (at 100,000 memories a 5,000-record
// window took 0.1–2 s per viewer on a loaded host).

// windowPage is a window read's largest page per group, windowFirstPage
// its smallest first one.
const (
	windowPage      = 1000
	windowFirstPage = 32
)

// sqlWindowPage is one page of a group's window, newest first, after the
// key (:ts, :uuid) (none when :ts is NULL), with cols.
func sqlWindowPage(cols string) string {
	return `SELECT m.uuid, m.ts, ` + cols + ` FROM memories AS m
	WHERE m.group_id = :group AND m.ts >= :since
	  AND (:ts IS NULL OR m.ts < :ts OR m.ts = :ts AND m.uuid < :uuid)
	ORDER BY m.ts DESC, m.uuid DESC LIMIT :limit`
}

// The columns of the two window reads.
var (
	sqlWindowCandidates = sqlWindowPage(`m.kind,
	  instr(m.record, '"conflicts_with":[') > 0 AND IFNULL(json_array_length(m.record, '$.conflicts_with'), 0) > 0,
	  CASE WHEN instr(m.record, '"tier":') > 0 THEN m.record ->> '$.tier' END,
	  CASE WHEN instr(m.record, '"confidence":') > 0 THEN m.record ->> '$.confidence' END`)
	// A record's entities are its declared ones and those its text
	// mentions (journal.Record.AllEntities): the text is read only when
	// it holds a sigil a mention needs.
	sqlWindowMentions = sqlWindowPage(`
	  CASE WHEN instr(m.record, '"entities":[') > 0 THEN m.record -> '$.entities' END,
	  CASE WHEN instr(m.record, '@') > 0 OR instr(m.record, '#') > 0 OR instr(m.record, '[[') > 0 THEN m.record ->> '$.text' END`)
)

// windowKey orders a window's rows: ts (as stored, which sorts as time),
// then uuid, both descending.
type windowKey struct{ ts, uuid string }

func (a windowKey) newer(b windowKey) bool { return a.ts > b.ts || a.ts == b.ts && a.uuid > b.uuid }

// windowRows reads q's window through query (one of sqlWindowPage's),
// scanning each row's columns after uuid and ts with scan, newest first;
// bounded is true when the limit stopped it before q.Since.
func windowRows[T any](ctx context.Context, g *Graph, what, query string, q memsync.WindowQuery,
	scan func(rows *sql.Rows, group string, uuid, ts *string) (T, error)) (out []T, bounded bool, err error) {
	limit := q.Size()
	groups := slices.Clone(q.Groups)
	slices.Sort(groups)
	groups = slices.Compact(groups)
	if len(groups) == 0 {
		return nil, false, nil
	}
	since := formatTS(q.Since)
	if q.Since.IsZero() {
		since = ""
	}
	type row struct {
		key windowKey
		v   T
	}
	type cursor struct {
		group string
		buf   []row
		size  int
		after *windowKey
		done  bool
	}
	fill := func(c *cursor) error {
		var ts, uuid any
		if c.after != nil {
			ts, uuid = c.after.ts, c.after.uuid
		}
		rows, err := g.rdb.QueryContext(ctx, query, namedArgs(query, map[string]any{
			"group": c.group, "since": since, "ts": ts, "uuid": uuid, "limit": c.size})...)
		if err != nil {
			return g.wrap(what, err)
		}
		defer rows.Close()
		got := 0
		for rows.Next() {
			var r row
			if r.v, err = scan(rows, c.group, &r.key.uuid, &r.key.ts); err != nil {
				return g.wrap(what, err)
			}
			c.buf = append(c.buf, r)
			got++
		}
		if err := rows.Err(); err != nil {
			return g.wrap(what, err)
		}
		if got < c.size {
			c.done = true
		} else {
			last := c.buf[len(c.buf)-1].key
			c.after = &last
		}
		c.size = min(c.size*4, windowPage)
		return nil
	}
	first := min(max(windowFirstPage, (limit+1)/len(groups)+1), windowPage, limit+1)
	cs := make([]*cursor, len(groups))
	for i, gr := range groups {
		cs[i] = &cursor{group: gr, size: first}
	}
	for {
		var head *cursor
		for _, c := range cs {
			if len(c.buf) == 0 && !c.done {
				if err := fill(c); err != nil {
					return nil, false, err
				}
			}
			if len(c.buf) > 0 && (head == nil || c.buf[0].key.newer(head.buf[0].key)) {
				head = c
			}
		}
		if head == nil {
			return out, false, nil
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, head.buf[0].v)
		head.buf = head.buf[1:]
	}
}

// WindowCandidates returns the queue's candidates of q's window
// (memsync.CandidatesFrom's answer) from the stored fields.
func (g *Graph) WindowCandidates(ctx context.Context, q memsync.WindowQuery) (memsync.Candidates, error) {
	rows, bounded, err := windowRows(ctx, g, "window candidates", sqlWindowCandidates, q,
		func(rows *sql.Rows, _ string, uuid, ts *string) (memsync.CandidateFields, error) {
			var f memsync.CandidateFields
			var tier, confidence sql.NullString
			err := rows.Scan(uuid, ts, &f.Kind, &f.Conflicts, &tier, &confidence)
			f.UUID, f.Tier, f.Confidence = *uuid, tier.String, confidence.String
			return f, err
		})
	if err != nil {
		return memsync.Candidates{}, err
	}
	out := memsync.Candidates{Window: memsync.Window{Records: len(rows), Bounded: bounded}}
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
	rows, bounded, err := windowRows(ctx, g, "window mentions", sqlWindowMentions, q,
		func(rows *sql.Rows, group string, uuid, ts *string) (named, error) {
			var ents, text sql.NullString
			if err := rows.Scan(uuid, ts, &ents, &text); err != nil {
				return named{}, err
			}
			n := named{group: group}
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
	return t.Mentions(memsync.Window{Records: len(rows), Bounded: bounded}), nil
}
