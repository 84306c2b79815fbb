package neo4j

import (
	"context"
	"fmt"
	"maps"
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
    THEN [node.uuid, score, node.ts, node.session] END) AS hits
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
  RETURN collect([n.uuid, n.ts]) AS before
}
CALL {
  WITH h
  MATCH (n:Memory)
  WHERE n.session = h.session AND n.ts >= h.ts AND n.agent = h.agent AND (n.ts > h.ts OR n.uuid > h.uuid)
    AND n.hash IS NOT NULL AND n.group_id IN $groups AND ($all OR n.invalid_at IS NULL)
    AND (size($kinds) = 0 OR n.kind IN $kinds) AND ($since IS NULL OR n.ts >= $since)
  WITH n ORDER BY n.ts, n.uuid LIMIT $w
  RETURN collect([n.uuid, n.ts]) AS after
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
// index to catch up with them (see the package documentation). All its
// transactions read one generation (pinned, generation.go).
func (g *Graph) Search(ctx context.Context, q memsync.SearchQuery) ([]memsync.Hit, error) {
	return g.search(withPin(ctx), q)
}

func (g *Graph) search(ctx context.Context, q memsync.SearchQuery) ([]memsync.Hit, error) {
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
	for k, first := 4*pool, true; ; k, first = k*8, false {
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
	var sims []recall.Similar
	if qv := memsync.QueryVector(g.emb, q.Text); qv != nil {
		var err error
		if sims, err = g.similar(ctx, s, qv, params, pool); err != nil {
			return nil, err
		}
	}
	if len(found) == 0 && len(sims) == 0 {
		return nil, nil
	}
	cands := make([]recall.Candidate, 0, len(found))
	var sources []string
	for _, c := range found {
		cands = append(cands, recall.Candidate{UUID: c.uuid, TS: c.ts, Lexical: c.score})
	}
	for _, c := range recall.SourceHits(found) {
		if c.session != "" {
			sources = append(sources, c.uuid)
		}
	}
	links, near, err := g.neighbours(ctx, s, sources, params)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(cands))
	for _, c := range cands {
		known[c.UUID] = true
	}
	for _, c := range near {
		if !known[c.UUID] {
			known[c.UUID] = true
			cands = append(cands, c)
		}
	}
	// Every candidate's record is read in one batch: the rule needs its
	// text (whether it names a time, which query terms it holds).
	uuids := make([]string, len(cands))
	for i, c := range cands {
		uuids[i] = c.UUID
	}
	nodes, err := g.Get(ctx, uuids)
	if err != nil {
		return nil, err
	}
	for i := range cands {
		text := nodes[cands[i].UUID].Text
		cands[i].Timed = recall.Timed(text)
		if cands[i].Lexical > 0 {
			cands[i].Match = recall.Matched(rq, text)
		}
	}
	ranked := recall.Hybrid(rq, cands, links, sims)
	ranked = ranked[:min(limit, len(ranked))]
	var missing []string
	for _, r := range ranked {
		if _, ok := nodes[r.UUID]; !ok {
			missing = append(missing, r.UUID)
		}
	}
	if len(missing) > 0 {
		more, err := g.Get(ctx, missing)
		if err != nil {
			return nil, err
		}
		maps.Copy(nodes, more)
	}
	hits := make([]memsync.Hit, 0, len(ranked))
	for _, r := range ranked {
		if n, ok := nodes[r.UUID]; ok {
			hits = append(hits, memsync.Hit{Node: n, Score: r.Score, Match: r.Match, Parts: r.Parts})
		}
	}
	return hits, nil
}

// neighbours links each of sources (lexical hits with a session) to its
// neighbours (package recall), and returns those as candidates.
func (g *Graph) neighbours(ctx context.Context, s neo4jdrv.SessionWithContext, sources []string, params map[string]any) ([]recall.Link, []recall.Candidate, error) {
	if len(sources) == 0 {
		return nil, nil, nil
	}
	p := maps.Clone(params)
	p["sources"], p["w"] = sources, int64(recall.Window)
	type answer struct {
		links []recall.Link
		near  []recall.Candidate
	}
	a, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (answer, error) {
		res, err := tx.Run(ctx, neighboursQuery, p)
		if err != nil {
			return answer{}, err
		}
		var a answer
		for res.Next(ctx) {
			v := res.Record().Values
			src, _ := v[0].(string)
			before, after := pairs(v[1]), pairs(v[2])
			a.near = append(append(a.near, before...), after...)
			a.links = append(a.links, recall.Links(src, candUUIDs(before), candUUIDs(after))...)
		}
		return a, res.Err()
	})
	if err != nil {
		return nil, nil, wrap("search: neighbours", err)
	}
	return a.links, a.near, nil
}

// pairs reads a list of [uuid, ts] values as candidates.
func pairs(v any) []recall.Candidate {
	list, _ := v.([]any)
	out := make([]recall.Candidate, 0, len(list))
	for _, x := range list {
		row, _ := x.([]any)
		if len(row) != 2 {
			continue
		}
		var c recall.Candidate
		c.UUID, _ = row[0].(string)
		if t, ok := row[1].(time.Time); ok {
			c.TS = t.UTC()
		}
		if c.UUID != "" {
			out = append(out, c)
		}
	}
	return out
}

func candUUIDs(cs []recall.Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.UUID
	}
	return out
}

type candidate struct {
	uuid    string
	score   float64
	ts      time.Time
	session string
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
		if !ok || len(row) != 4 {
			return candidates{}, fmt.Errorf("unexpected search row %T", x)
		}
		var h candidate
		h.uuid, _ = row[0].(string)
		h.score, _ = row[1].(float64)
		if t, ok := row[2].(time.Time); ok {
			h.ts = t.UTC()
		}
		h.session, _ = row[3].(string)
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
