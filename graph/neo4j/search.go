package neo4j

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memsync/memsync/memsync"
)

// maxQueryTerms bounds the words of a search (Lucene refuses too many clauses).
const maxQueryTerms = 64

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

// Search ranks the memories of q.Groups against the words of q.Text: score
// descending, then newest first, then uuid. q.Text is split into words
// (letters and digits) and each is quoted, so nothing a user types acts as
// index query syntax. Superseded memories are left out unless q.All.
//
// Search sees every write committed before it was called, by this Graph or
// any other client: it first waits for the eventually consistent fulltext
// index to catch up with them (see the package documentation).
func (g *Graph) Search(ctx context.Context, q memsync.SearchQuery) ([]memsync.Hit, error) {
	terms := queryTerms(q.Text)
	if len(terms) == 0 || len(q.Groups) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	kinds := make([]string, len(q.Kinds))
	for i, k := range q.Kinds {
		kinds[i] = string(k)
	}
	params := map[string]any{
		"index":  IndexMemoryText,
		"query":  luceneQuery(terms),
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
	for k, first := max(8*limit, 200), true; ; k, first = k*8, false {
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
		if c.exact(k, limit) {
			found = c.hits
			break
		}
	}
	if len(found) > limit {
		found = found[:limit]
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
	hits := make([]memsync.Hit, 0, len(found))
	for _, c := range found {
		if n, ok := nodes[c.uuid]; ok {
			hits = append(hits, memsync.Hit{Node: n, Score: c.score})
		}
	}
	return hits, nil
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

// queryTerms splits text into its distinct words: runs of letters, digits
// and combining marks, lowercased, in order of first appearance.
func queryTerms(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	}) {
		w = strings.ToLower(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxQueryTerms {
			break
		}
	}
	return out
}

// luceneQuery ORs the terms, each as a quoted phrase with Lucene's specials
// escaped, so a term can only ever match words.
func luceneQuery(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		for _, r := range t {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	return b.String()
}
