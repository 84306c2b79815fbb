package neo4j

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/recall"
)

// searchQuery asks the fulltext index for its top $k candidates and returns,
// in one row, how many there were, the lowest score among them and the ones
// that pass the reader's filters and hold a query term (holdsTerm). Search
// widens k until the answer is exact.
const searchQuery = `
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH count(*) AS n, min(score) AS lowest,
  collect(CASE WHEN node.hash IS NOT NULL
      AND node.group_id IN $groups
      AND ($all OR node.invalid_at IS NULL)
      AND (size($kinds) = 0 OR node.kind IN $kinds)
      AND ($since IS NULL OR node.ts >= $since)
      AND ` + holdsTerm + `
    THEN [node.uuid, score, node.ts, node.session] END) AS hits
RETURN n, lowest, hits`

// holdsTerm is true when node's terms or keywords, as the node holds them
// now, contain one of $padded (the query's terms, each between spaces:
// paddedTerms). The fulltext index is eventually consistent and keyed by
// internal node ids, which the server reuses: under load (CI, a drop then
// a rebuild) it answered a query with nodes whose words it had indexed
// for a deleted node of the same id, scored above every true match. A
// hit the node does not bear out is no hit.
const holdsTerm = `any(t IN $padded WHERE (' ' + coalesce(node.terms, '') + ' ') CONTAINS t
        OR (' ' + coalesce(node.keywords, '') + ' ') CONTAINS t)`

// paddedTerms is terms as holdsTerm takes them: the index's whitespace
// analyzer matches a quoted term as those words, side by side.
func paddedTerms(terms []string) []string {
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = " " + t + " "
	}
	return out
}

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
var neighboursQuery = neighboursOf("n.session = h.session")

// episodeQuery is neighboursQuery for sources that name no session: the
// memories of the same agent that name none (the recipe cuts them at
// recall.EpisodeGap); the (group_id, ts) index orders them.
var episodeQuery = neighboursOf("n.session IS NULL")

func neighboursOf(same string) string {
	return `
UNWIND $sources AS src
MATCH (h:Memory {uuid: src})
CALL {
  WITH h
  MATCH (n:Memory)
  WHERE ` + same + ` AND n.ts <= h.ts AND n.agent = h.agent AND (n.ts < h.ts OR n.uuid < h.uuid)
    AND n.hash IS NOT NULL AND n.group_id IN $groups AND ($all OR n.invalid_at IS NULL)
    AND (size($kinds) = 0 OR n.kind IN $kinds) AND ($since IS NULL OR n.ts >= $since)
  WITH n ORDER BY n.ts DESC, n.uuid DESC LIMIT $w
  RETURN collect([n.uuid, n.ts]) AS before
}
CALL {
  WITH h
  MATCH (n:Memory)
  WHERE ` + same + ` AND n.ts >= h.ts AND n.agent = h.agent AND (n.ts > h.ts OR n.uuid > h.uuid)
    AND n.hash IS NOT NULL AND n.group_id IN $groups AND ($all OR n.invalid_at IS NULL)
    AND (size($kinds) = 0 OR n.kind IN $kinds) AND ($since IS NULL OR n.ts >= $since)
  WITH n ORDER BY n.ts, n.uuid LIMIT $w
  RETURN collect([n.uuid, n.ts]) AS after
}
RETURN src, before, after`
}

// A search of this graph is read.Search(ctx, g, q): the one recipe
// over the primitives below (memsync.Retriever): the recall.PoolSize best
// fulltext matches of any term, and the neighbours in their session of
// the strongest. Nothing a user types acts as index query syntax.
//
// A search sees every write committed before it was called, by this Graph
// or any other client: Lexical first waits for the eventually consistent
// fulltext index to catch up with them (see the package documentation).
// All its transactions read one generation: the recipe pins its context
// (Pin, generation.go).

// Pin holds every read under the context it returns to one generation
// (memsync.Pinner): the recipe's primitives and the signals ranking reads.
func (g *Graph) Pin(ctx context.Context) context.Context { return withPin(ctx) }

// searchParams is f as the search queries take it.
func searchParams(f memsync.Filter) map[string]any {
	kinds := make([]string, len(f.Kinds))
	for i, k := range f.Kinds {
		kinds[i] = string(k)
	}
	params := map[string]any{
		"index":  IndexMemoryText,
		"groups": f.Groups,
		"all":    f.All,
		"kinds":  kinds,
		"since":  nil,
	}
	if f.Groups == nil {
		params["groups"] = []string{}
	}
	if !f.Since.IsZero() {
		params["since"] = f.Since.UTC()
	}
	return params
}

// Lexical is the recipe's lexical pool (memsync.Retriever): the pool best
// fulltext matches of any of terms that f lets through, best first, once
// the index has caught up with every committed write.
func (g *Graph) Lexical(ctx context.Context, terms []string, f memsync.Filter, pool int) ([]memsync.Found, error) {
	if len(terms) == 0 || len(f.Groups) == 0 {
		return nil, nil
	}
	ctx = withPin(ctx)
	params := searchParams(f)
	params["query"] = luceneQuery(terms)
	params["padded"] = paddedTerms(terms)
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
	found = found[:min(pool, len(found))]
	uuids := make([]string, len(found))
	for i, c := range found {
		uuids[i] = c.uuid
	}
	nodes, err := g.Get(ctx, uuids)
	if err != nil {
		return nil, err
	}
	out := make([]memsync.Found, 0, len(found))
	for _, c := range found {
		if n, ok := nodes[c.uuid]; ok {
			out = append(out, memsync.Found{Node: n, Score: c.score})
		}
	}
	return out, nil
}

// Neighbours is the recipe's session neighbours (memsync.Retriever).
func (g *Graph) Neighbours(ctx context.Context, sources []memsync.Node, f memsync.Filter) ([]memsync.Beside, error) {
	if len(sources) == 0 {
		return nil, nil
	}
	ctx = withPin(ctx)
	var inSession, sessionless []string
	for _, n := range sources {
		if n.Session != "" {
			inSession = append(inSession, n.UUID)
		} else {
			sessionless = append(sessionless, n.UUID)
		}
	}
	type row struct {
		src           string
		before, after []string
	}
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	rows, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]row, error) {
		var out []row
		for _, part := range []struct {
			query string
			ids   []string
		}{{neighboursQuery, inSession}, {episodeQuery, sessionless}} {
			if len(part.ids) == 0 {
				continue
			}
			p := searchParams(f)
			p["sources"], p["w"] = part.ids, int64(recall.Window)
			res, err := tx.Run(ctx, part.query, p)
			if err != nil {
				return nil, err
			}
			for res.Next(ctx) {
				v := res.Record().Values
				src, _ := v[0].(string)
				out = append(out, row{src: src, before: candUUIDs(pairs(v[1])), after: candUUIDs(pairs(v[2]))})
			}
			if err := res.Err(); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, wrap("search: neighbours", err)
	}
	var want []string
	for _, r := range rows {
		want = append(append(want, r.before...), r.after...)
	}
	nodes, err := g.Get(ctx, want)
	if err != nil {
		return nil, err
	}
	pick := func(ids []string) []memsync.Node {
		var out []memsync.Node
		for _, id := range ids {
			if n, ok := nodes[id]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	out := make([]memsync.Beside, 0, len(rows))
	for _, r := range rows {
		out = append(out, memsync.Beside{From: r.src, Before: pick(r.before), After: pick(r.after)})
	}
	return out, nil
}

// Similar is the recipe's vector candidates (memsync.Retriever): none
// without an embedder.
func (g *Graph) Similar(ctx context.Context, text string, f memsync.Filter, pool int) ([]memsync.Found, error) {
	qv := memsync.QueryVector(g.emb, text)
	if qv == nil || len(f.Groups) == 0 {
		return nil, nil
	}
	ctx = withPin(ctx)
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	sims, err := g.similar(ctx, s, qv, searchParams(f), pool)
	if err != nil {
		return nil, err
	}
	uuids := make([]string, len(sims))
	for i, c := range sims {
		uuids[i] = c.UUID
	}
	nodes, err := g.Get(ctx, uuids)
	if err != nil {
		return nil, err
	}
	out := make([]memsync.Found, 0, len(sims))
	for _, c := range sims {
		if n, ok := nodes[c.UUID]; ok {
			out = append(out, memsync.Found{Node: n, Score: c.Cosine})
		}
	}
	return out, nil
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
