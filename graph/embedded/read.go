package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/recall"
)

// nodeCols are the columns scanNode reads, in order.
// nodeFrom is where they come from: memories AS m and its supersession.
const (
	nodeCols = `m.record, m.path, m.line, m.hash, m.group_id, m.importance, x.invalid_at, x.replaced_by`
	nodeFrom = `memories AS m LEFT JOIN superseded AS x ON x.id = m.id`
)

type scanner interface{ Scan(dest ...any) error }

// scanNode rebuilds a Node from nodeCols (plus extra destinations after
// them). The record comes back from its canonical encoding; its outgoing
// edges and mentions are the ones Apply derived from that same record.
func scanNode(sc scanner, extra ...any) (memsync.Node, error) {
	var (
		n          memsync.Node
		record     string
		invalidAt  sql.NullString
		replacedBy sql.NullString
	)
	dest := append([]any{&record, &n.Path, &n.Line, &n.Hash, &n.GroupID, &n.Importance, &invalidAt, &replacedBy}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return n, err
	}
	rec, err := journal.Parse([]byte(record))
	if err != nil {
		return n, fmt.Errorf("stored record does not parse: %w", err)
	}
	n.Record = rec
	if invalidAt.Valid {
		if n.InvalidAt, err = time.Parse(time.RFC3339Nano, invalidAt.String); err != nil {
			return n, fmt.Errorf("%s: invalid_at: %w", rec.UUID, err)
		}
	}
	n.ReplacedBy = replacedBy.String
	n.LinksTo = sortedSet(rec.Links)
	n.Supersedes = sortedSet(rec.Supersedes)
	n.ConflictsWith = sortedSet(rec.ConflictsWith)
	n.Mentions = sortedSet(rec.AllEntities())
	return n, nil
}

// sortedSet is s sorted without duplicates, nil when empty.
func sortedSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Walk calls fn for every projected memory in uuid order, reading one row at
// a time from a single consistent snapshot. An error from fn stops the walk
// and is returned as is.
func (g *Graph) Walk(ctx context.Context, fn func(memsync.Node) error) error {
	rows, err := g.rdb.QueryContext(ctx, `SELECT `+nodeCols+` FROM `+nodeFrom+` ORDER BY m.uuid`)
	if err != nil {
		return g.wrap("walk", err)
	}
	defer rows.Close()
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return g.wrap("walk", err)
		}
		if err := fn(n); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return g.wrap("walk", err)
	}
	return nil
}

// Get returns the projected memories among uuids; absent ones are left out.
func (g *Graph) Get(ctx context.Context, uuids []string) (map[string]memsync.Node, error) {
	out := make(map[string]memsync.Node, len(uuids))
	if len(uuids) == 0 {
		return out, nil
	}
	ids, err := json.Marshal(uuids)
	if err != nil {
		return nil, fmt.Errorf("embedded: get: %w", err)
	}
	rows, err := g.rdb.QueryContext(ctx, `SELECT `+nodeCols+` FROM `+nodeFrom+`
		WHERE m.uuid IN (SELECT value FROM json_each(?1))`, string(ids))
	if err != nil {
		return nil, g.wrap("get", err)
	}
	defer rows.Close()
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, g.wrap("get", err)
		}
		out[n.UUID] = n
	}
	if err := rows.Err(); err != nil {
		return nil, g.wrap("get", err)
	}
	return out, nil
}

// Stats counts the projected memories, in all and per authoring agent.
// Uuids that are only edge targets are not memories and are not counted.
func (g *Graph) Stats(ctx context.Context) (memsync.Stats, error) {
	st := memsync.Stats{ByAgent: map[string]int{}}
	rows, err := g.rdb.QueryContext(ctx, `SELECT name, memories FROM agents WHERE memories > 0`)
	if err != nil {
		return st, g.wrap("stats", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return st, g.wrap("stats", err)
		}
		st.ByAgent[name] = n
		st.Memories += n
	}
	if err := rows.Err(); err != nil {
		return st, g.wrap("stats", err)
	}
	return st, nil
}

// DefaultLimit is the number of hits Search returns when the query sets none.
const DefaultLimit = 10

// sqlSearch ranks by bm25 (lower is better in SQLite; the lexical score is
// its negation), then newest first, then uuid, and keeps the best ?6. ?1
// names the visible groups in the full-text query itself (their grp
// tokens), so bm25 scores only memories the reader may see; the grp column
// weighs nothing. The full-text index drives (CROSS JOIN); each match is
// filtered through the narrow memories_filter index by id alone (the unary
// + keeps SQLite from seeking once per group; the group test there is a
// second guard), and only the rows that make the pool are read whole.
const sqlSearch = `WITH top AS (
		SELECT m.id, bm25(memories_fts, 1.0, 0.5, 0.0) AS rank, m.ts, m.uuid
		FROM search.memories_fts CROSS JOIN memories AS m INDEXED BY memories_filter ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ?1
		  AND +m.group_id IN (SELECT value FROM json_each(?2))
		  AND (?3 OR NOT EXISTS (SELECT 1 FROM superseded AS x WHERE x.id = m.id))
		  AND (?4 IS NULL OR +m.kind IN (SELECT value FROM json_each(?4)))
		  AND (?5 IS NULL OR m.ts >= ?5)
		ORDER BY rank, m.ts DESC, m.uuid
		LIMIT ?6)
	SELECT ` + nodeCols + `, top.rank
	FROM top CROSS JOIN memories AS m ON m.id = top.id LEFT JOIN superseded AS x ON x.id = m.id
	ORDER BY top.rank, top.ts DESC, top.uuid`

// sqlNeighbours are the memories of agent ?1 and session ?2 just before
// (?7 = 0) or after (?7 = 1) the memory at ts ?3 with uuid ?4, nearest
// first, among those the search may return (the filters of sqlSearch: ?5,
// ?6, ?8 and ?9), at most ?10.
const sqlNeighbours = `SELECT ` + nodeCols + `
	FROM search.turns AS t CROSS JOIN memories AS m ON m.id = t.id LEFT JOIN superseded AS x ON x.id = m.id
	WHERE t.agent = ?1 AND t.session = ?2
	  AND CASE WHEN ?7 THEN t.ts > ?3 OR t.ts = ?3 AND t.uuid > ?4 ELSE t.ts < ?3 OR t.ts = ?3 AND t.uuid < ?4 END
	  AND m.group_id IN (SELECT value FROM json_each(?5))
	  AND (?6 OR x.id IS NULL)
	  AND (?8 IS NULL OR m.kind IN (SELECT value FROM json_each(?8)))
	  AND (?9 IS NULL OR m.ts >= ?9)
	ORDER BY CASE WHEN ?7 THEN t.ts END, CASE WHEN ?7 THEN t.uuid END, t.ts DESC, t.uuid DESC
	LIMIT ?10`

// Search ranks the memories in q.Groups against the terms of q.Text (package
// analysis) with the rule of package recall: the recall.PoolSize best
// bm25 matches of any term, and the neighbours in their session of the
// strongest. q.Text is never read as query syntax. Superseded memories are
// left out unless q.All. No groups, or no terms (a query of stopwords
// only), give no hits.
func (g *Graph) Search(ctx context.Context, q memsync.SearchQuery) ([]memsync.Hit, error) {
	if len(q.Groups) == 0 {
		return nil, nil
	}
	rq := recall.ParseQuery(q.Text)
	if len(rq.Terms) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	groups, err := json.Marshal(q.Groups)
	if err != nil {
		return nil, fmt.Errorf("embedded: search: %w", err)
	}
	var kinds, since any
	if len(q.Kinds) > 0 {
		b, err := json.Marshal(q.Kinds)
		if err != nil {
			return nil, fmt.Errorf("embedded: search: %w", err)
		}
		kinds = string(b)
	}
	if !q.Since.IsZero() {
		since = formatTS(q.Since)
	}
	if err := g.awaitIndex(ctx); err != nil {
		return nil, err
	}
	f := filter{groups: string(groups), all: q.All, kinds: kinds, since: since}
	lexical, err := g.search(ctx, matchExpr(groupExpr(q.Groups), rq.Terms), f, recall.PoolSize(limit))
	if err != nil {
		return nil, err
	}
	nodes := make(map[string]memsync.Node, len(lexical))
	cands := make([]recall.Candidate, 0, len(lexical))
	for _, h := range lexical {
		nodes[h.UUID] = h.Node
		cands = append(cands, recall.Candidate{UUID: h.UUID, TS: h.TS, Lexical: h.Score, Timed: recall.Timed(h.Text)})
	}
	var links []recall.Link
	for _, h := range recall.SourceHits(lexical) {
		if h.Session == "" {
			continue
		}
		var sides [2][]string
		for after := range sides {
			ns, err := g.neighbours(ctx, h.Node, after == 1, f)
			if err != nil {
				return nil, err
			}
			for _, n := range ns {
				sides[after] = append(sides[after], n.UUID)
				if _, ok := nodes[n.UUID]; !ok {
					nodes[n.UUID] = n
					cands = append(cands, recall.Candidate{UUID: n.UUID, TS: n.TS, Timed: recall.Timed(n.Text)})
				}
			}
		}
		links = append(links, recall.Links(h.UUID, sides[0], sides[1])...)
	}
	ranked := recall.Rank(rq, cands, links)
	hits := make([]memsync.Hit, 0, min(limit, len(ranked)))
	for _, r := range ranked[:min(limit, len(ranked))] {
		hits = append(hits, memsync.Hit{Node: nodes[r.UUID], Score: r.Score})
	}
	return hits, nil
}

// filter is what a search asks of the memories it may return, as sqlSearch
// and sqlNeighbours take it.
type filter struct {
	groups       string // JSON list
	all          bool
	kinds, since any
}

// neighbours are the memories of n's agent and session nearest to it
// before it (or after), that f lets through, nearest first.
func (g *Graph) neighbours(ctx context.Context, n memsync.Node, after bool, f filter) ([]memsync.Node, error) {
	rows, err := g.rdb.QueryContext(ctx, sqlNeighbours, n.Agent, n.Session, formatTS(n.TS), n.UUID,
		f.groups, f.all, after, f.kinds, f.since, recall.Window)
	if err != nil {
		return nil, g.wrap("search: neighbours", err)
	}
	defer rows.Close()
	var out []memsync.Node
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, g.wrap("search: neighbours", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, g.wrap("search: neighbours", err)
	}
	return out, nil
}

// awaitIndex waits until the search file holds every memory applied so
// far, so that whatever Get returns Search finds too. When indexing failed
// the search goes on over what is indexed (recall degrades, it does not
// fail) and the indexer tries again from the stored records.
func (g *Graph) awaitIndex(ctx context.Context) error {
	if err := g.ix.wait(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("embedded: search: waiting for the full-text index: %w", err)
		}
		g.lg.Warn("search index is behind: searching what it holds", zap.Error(err))
		g.ix.retry()
	}
	return nil
}

// Flush waits until every memory applied so far is in the full-text index,
// and returns the error of the indexing that failed, if the last one did.
func (g *Graph) Flush(ctx context.Context) error {
	if err := g.ix.wait(ctx); err != nil {
		return g.wrap("flush full-text index", err)
	}
	return nil
}

// search returns the best pool bm25 matches of match that f lets through,
// best first, each scored with its lexical score.
func (g *Graph) search(ctx context.Context, match string, f filter, pool int) ([]memsync.Hit, error) {
	rows, err := g.rdb.QueryContext(ctx, sqlSearch, match, f.groups, f.all, f.kinds, f.since, pool)
	if err != nil {
		return nil, g.wrap("search", err)
	}
	defer rows.Close()
	var hits []memsync.Hit
	for rows.Next() {
		var rank float64
		n, err := scanNode(rows, &rank)
		if err != nil {
			return nil, g.wrap("search", err)
		}
		hits = append(hits, memsync.Hit{Node: n, Score: -rank})
	}
	if err := rows.Err(); err != nil {
		return nil, g.wrap("search", err)
	}
	return hits, nil
}

// quote is s as an FTS5 string.
func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// groupExpr is the FTS5 query matching the memories of any of groups.
func groupExpr(groups []string) string {
	toks := make([]string, 0, len(groups))
	for _, g := range groups {
		toks = append(toks, quote(groupToken(g)))
	}
	slices.Sort(toks)
	return "grp : (" + strings.Join(slices.Compact(toks), " OR ") + ")"
}

// matchExpr is the full-text query for any of terms (each quoted, so never
// syntax) in the text and meta columns, within the groups of visible.
func matchExpr(visible string, terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = quote(t)
	}
	return visible + " AND {text meta} : (" + strings.Join(q, " OR ") + ")"
}

// Hashes calls fn with the uuid and hash of every projected memory, in
// the table's order (one sequential scan, not one row lookup per uuid), from
// a single consistent snapshot, without decoding the records. An error from
// fn stops the stream and is returned as is.
func (g *Graph) Hashes(ctx context.Context, fn func(uuid, hash string) error) error {
	rows, err := g.rdb.QueryContext(ctx, `SELECT uuid, hash FROM memories`)
	if err != nil {
		return g.wrap("hashes", err)
	}
	defer rows.Close()
	var uuid, hash string
	for rows.Next() {
		if err := rows.Scan(&uuid, &hash); err != nil {
			return g.wrap("hashes", err)
		}
		if err := fn(uuid, hash); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return g.wrap("hashes", err)
	}
	return nil
}
