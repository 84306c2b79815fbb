package neo4j

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/recall"
)

// searchQuery asks the fulltext index for its top $k candidates and returns,
// in one row, how many there were, the lowest score among them and the ones
// that pass the reader's filters. Search widens k until the answer is exact.
const searchQuery = `
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH count(*) AS n, min(score) AS lowest,
  collect(CASE WHEN node.hash IS NOT NULL
      AND node.group_id IN $groups
      AND ($all OR node.invalid_at IS NULL)
      AND (size($kinds) = 0 OR node.kind IN $kinds)
      AND ($since IS NULL OR node.ts >= $since)
    THEN [node.uuid, score, node.ts] END) AS hits
RETURN n, lowest, hits`

// awaitTextIndex waits until the fulltext index holds every transaction
// committed before it was called (the index is eventually consistent: see
// createTextIndex). It is VOID, so it leaves the one row searchQuery starts
// from as it is.
const awaitTextIndex = `
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()`

// neighboursQuery returns, for each source uuid, the uuids of the memories
// of its agent and session nearest to it before and after (by ts, then
// uuid), nearest first, at most $w each side, among those the search may
// return (the filters of searchQuery).
const neighboursQuery = `
UNWIND $sources AS src
MATCH (h:Memory {uuid: src})
CALL {
  WITH h
  MATCH (n:Memory)
  WHERE n.session = h.session AND n.ts <= h.ts AND n.agent = h.agent AND (n.ts < h.ts OR n.uuid < h.uuid)
    AND n.hash IS NOT NULL AND n.group_id IN $groups AND ($all OR n.invalid_at IS NULL)
    AND (size($kinds) = 0 OR n.kind IN $kinds) AND ($since IS NULL OR n.ts >= $since)
  WITH n ORDER BY n.ts DESC, n.uuid DESC LIMIT $w
  RETURN collect(n.uuid) AS before
}
CALL {
  WITH h
  MATCH (n:Memory)
  WHERE n.session = h.session AND n.ts >= h.ts AND n.agent = h.agent AND (n.ts > h.ts OR n.uuid > h.uuid)
    AND n.hash IS NOT NULL AND n.group_id IN $groups AND ($all OR n.invalid_at IS NULL)
    AND (size($kinds) = 0 OR n.kind IN $kinds) AND ($since IS NULL OR n.ts >= $since)
  WITH n ORDER BY n.ts, n.uuid LIMIT $w
  RETURN collect(n.uuid) AS after
}
RETURN src, before, after`

// Search ranks the memories of q.Groups against the terms of q.Text
// (package analysis) with the rule of package recall: the recall.PoolSize
// best fulltext matches of any term, and the neighbours in their session
// of the strongest. Nothing a user types acts as index query syntax.
// Superseded memories are left out unless q.All.
//
// Search sees every write committed before it was called, by this Graph or
// any other client: it first waits for the eventually consistent fulltext
// index to catch up with them (see the package documentation).
func (g *Graph) Search(ctx context.Context, q memsync.SearchQuery) ([]memsync.Hit, error) {
	rq := recall.ParseQuery(q.Text)
	if len(rq.Terms) == 0 || len(q.Groups) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	pool := recall.PoolSize(limit)
	kinds := make([]string, len(q.Kinds))
	for i, k := range q.Kinds {
		kinds[i] = string(k)
	}
	params := map[string]any{
		"index":  IndexMemoryText,
		"query":  luceneQuery(rq.Terms),
		"groups": q.Groups,
		"all":    q.All,
		"kinds":  kinds,
		"since":  nil,
	}
	if !q.Since.IsZero() {
		params["since"] = q.Since.UTC()
	}
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	var found []candidate
	for k, first := max(8*pool, 200), true; ; k, first = k*8, false {
		params["k"] = int64(k)
		query := searchQuery
		if first {
			query = awaitTextIndex + searchQuery
		}
		c, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (candidates, error) {
			return searchOnce(ctx, tx, query, params)
		})
		if err != nil {
			return nil, wrap("search", err)
		}
		sort.Slice(c.hits, func(i, j int) bool { return c.hits[i].less(c.hits[j]) })
		if c.exact(k, pool) {
			found = c.hits
			break
		}
	}
	if len(found) > pool {
		found = found[:pool]
	}
	if len(found) == 0 {
		return nil, nil
	}
	uuids := make([]string, len(found))
	for i, c := range found {
		uuids[i] = c.uuid
	}
	nodes, err := g.Get(ctx, uuids)
	if err != nil {
		return nil, err
	}
	cands := make([]recall.Candidate, 0, len(found))
	var sources []string
	for _, c := range found {
		n, ok := nodes[c.uuid]
		if !ok {
			continue
		}
		cands = append(cands, recall.Candidate{UUID: c.uuid, TS: n.TS, Lexical: c.score, Timed: recall.Timed(n.Text)})
		if len(sources) < recall.Sources && n.Session != "" {
			sources = append(sources, c.uuid)
		}
	}
	links, err := g.neighbours(ctx, s, sources, params)
	if err != nil {
		return nil, err
	}
	var more []string
	for _, l := range links {
		if _, ok := nodes[l.To]; !ok && !slices.Contains(more, l.To) {
			more = append(more, l.To)
		}
	}
	if len(more) > 0 {
		extra, err := g.Get(ctx, more)
		if err != nil {
			return nil, err
		}
		for _, u := range more {
			if n, ok := extra[u]; ok {
				nodes[u] = n
				cands = append(cands, recall.Candidate{UUID: u, TS: n.TS, Timed: recall.Timed(n.Text)})
			}
		}
	}
	ranked := recall.Rank(rq, cands, links)
	hits := make([]memsync.Hit, 0, min(limit, len(ranked)))
	for _, r := range ranked[:min(limit, len(ranked))] {
		hits = append(hits, memsync.Hit{Node: nodes[r.UUID], Score: r.Score})
	}
	return hits, nil
}

// neighbours links each of sources (lexical hits with a session) to its
// neighbours (package recall).
func (g *Graph) neighbours(ctx context.Context, s neo4jdrv.SessionWithContext, sources []string, params map[string]any) ([]recall.Link, error) {
	if len(sources) == 0 {
		return nil, nil
	}
	p := maps.Clone(params)
	p["sources"], p["w"] = sources, int64(recall.Window)
	links, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]recall.Link, error) {
		res, err := tx.Run(ctx, neighboursQuery, p)
		if err != nil {
			return nil, err
		}
		var out []recall.Link
		for res.Next(ctx) {
			v := res.Record().Values
			src, _ := v[0].(string)
			out = append(out, recall.Links(src, strs(v[1]), strs(v[2]))...)
		}
		return out, res.Err()
	})
	if err != nil {
		return nil, wrap("search: neighbours", err)
	}
	return links, nil
}

// strs is a list value of strings.
func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

type candidate struct {
	uuid  string
	score float64
	ts    time.Time
}

func (a candidate) less(b candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if !a.ts.Equal(b.ts) {
		return a.ts.After(b.ts)
	}
	return a.uuid < b.uuid
}

type candidates struct {
	n      int64   // how many the index returned
	lowest float64 // the lowest score among them
	hits   []candidate
}

// exact reports whether the top limit hits are final. The index returns its
// k best documents, so every document it left out scores at most lowest:
// the answer is exact when the index ran out of documents, or when at least
// limit hits score strictly above lowest (ties at lowest may be missing).
func (c candidates) exact(k, limit int) bool {
	if c.n < int64(k) {
		return true
	}
	above := 0
	for _, h := range c.hits {
		if h.score > c.lowest {
			above++
		}
	}
	return above >= limit
}

func searchOnce(ctx context.Context, tx neo4jdrv.ManagedTransaction, query string, params map[string]any) (candidates, error) {
	res, err := tx.Run(ctx, query, params)
	if err != nil {
		return candidates{}, err
	}
	rec, err := res.Single(ctx)
	if err != nil {
		return candidates{}, err
	}
	var c candidates
	c.n, _ = rec.Values[0].(int64)
	c.lowest, _ = rec.Values[1].(float64)
	list, _ := rec.Values[2].([]any)
	for _, x := range list {
		row, ok := x.([]any)
		if !ok || len(row) != 3 {
			return candidates{}, fmt.Errorf("unexpected search row %T", x)
		}
		var h candidate
		h.uuid, _ = row[0].(string)
		h.score, _ = row[1].(float64)
		if t, ok := row[2].(time.Time); ok {
			h.ts = t.UTC()
		}
		c.hits = append(c.hits, h)
	}
	return c, nil
}

// luceneQuery asks for any of terms in the terms property, or at half
// weight in keywords (as the other search paths weigh tags and entities),
// each quoted with Lucene's specials escaped, so a term can only ever
// match words.
func luceneQuery(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		q := quoteLucene(t)
		b.WriteString("terms:" + q + " OR keywords:" + q + "^0.5")
	}
	return b.String()
}

func quoteLucene(t string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range t {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
