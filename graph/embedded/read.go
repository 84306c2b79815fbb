package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
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

// sqlIncoming lists the projected records naming any of ?1 through an
// edge that carries a signal (the type test matches edges_signals).
const sqlIncoming = `SELECT ` + nodeCols + `, e.dst, e.type
	FROM edges AS e INDEXED BY edges_signals
	JOIN memories AS m ON m.uuid = e.src LEFT JOIN superseded AS x ON x.id = m.id
	WHERE e.dst IN (SELECT value FROM json_each(?1)) AND e.type <> 'SUPERSEDES'`

// Incoming returns every projected record naming one of uuids through
// LINKS_TO, SUPPORTS or CONFLICTS_WITH, whatever its group. Edges are
// stored by uuid, so one stored before its target counts once it lands.
func (g *Graph) Incoming(ctx context.Context, uuids []string) ([]memsync.Reference, error) {
	if len(uuids) == 0 {
		return nil, nil
	}
	ids, err := json.Marshal(uuids)
	if err != nil {
		return nil, fmt.Errorf("embedded: incoming: %w", err)
	}
	rows, err := g.rdb.QueryContext(ctx, sqlIncoming, string(ids))
	if err != nil {
		return nil, g.wrap("incoming", err)
	}
	defer rows.Close()
	var out []memsync.Reference
	for rows.Next() {
		var ref memsync.Reference
		n, err := scanNode(rows, &ref.Target, &ref.Relation)
		if err != nil {
			return nil, g.wrap("incoming", err)
		}
		ref.Source = n
		out = append(out, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, g.wrap("incoming", err)
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

// maxQueryTokens bounds the words of one query that reach the index.
const maxQueryTokens = 64

// sqlSearch ranks by bm25 (lower is better in SQLite; Score is its
// negation), then newest first, then uuid. ?1 names the visible groups in
// the full-text query itself (their grp tokens), so bm25 scores only
// memories the reader may see; the grp column weighs nothing. The
// full-text index drives (CROSS JOIN); each match is filtered through the
// narrow memories_filter index by id alone (the unary + keeps SQLite from
// seeking once per group; the group test there is a second guard), and only
// the rows that make the limit are read whole.
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

// Search ranks the memories in q.Groups against the words of q.Text. When
// at least the limit of them hold every word, only those are ranked;
// otherwise any word may match. More and rarer matches rank higher. q.Text
// is never read as query syntax. Superseded memories are left out unless
// q.All. No groups, or no words, give no hits.
func (g *Graph) Search(ctx context.Context, q memsync.SearchQuery) ([]memsync.Hit, error) {
	if len(q.Groups) == 0 {
		return nil, nil
	}
	terms := queryTerms(q.Text)
	if len(terms) == 0 {
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
	visible := groupExpr(q.Groups)
	search := func(op string) ([]memsync.Hit, error) {
		return g.search(ctx, matchExpr(visible, terms, op), string(groups), q.All, kinds, since, limit)
	}
	// Common words ORed match much of the store, and bm25 scores every
	// match; ANDed they match far fewer, and those rank first anyway
	// whenever there are enough of them.
	if len(terms) > 1 {
		hits, err := search(" AND ")
		if err != nil || len(hits) >= limit {
			return hits, err
		}
	}
	return search(" OR ")
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

func (g *Graph) search(ctx context.Context, match, groups string, all bool, kinds, since any, limit int) ([]memsync.Hit, error) {
	rows, err := g.rdb.QueryContext(ctx, sqlSearch, match, groups, all, kinds, since, limit)
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

// queryTerms turns free text into FTS5 strings that cannot be read as
// syntax: the words (runs of letters, digits and combining marks), each
// quoted. Repeated words count once; at most maxQueryTokens are kept.
func queryTerms(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Mn, r)
	})
	seen := make(map[string]bool, len(words))
	var terms []string
	for _, w := range words {
		key := strings.ToLower(w)
		if seen[key] {
			continue
		}
		seen[key] = true
		terms = append(terms, quote(w))
		if len(terms) == maxQueryTokens {
			break
		}
	}
	return terms
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

// matchExpr is the full-text query for terms joined by op (" AND " or
// " OR ") in the text and meta columns, within the groups of visible.
func matchExpr(visible string, terms []string, op string) string {
	return visible + " AND {text meta} : (" + strings.Join(terms, op) + ")"
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
