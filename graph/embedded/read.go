package embedded

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

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
// edges are the ones Apply derived from that same record, its mentions
// the record's entities.
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
const DefaultLimit = memsync.DefaultSearchLimit

// sqlNodesByID reads the memories with the ids in the JSON list ?1.
const sqlNodesByID = `SELECT ` + nodeCols + `, m.id FROM ` + nodeFrom + `
	WHERE m.id IN (SELECT value FROM json_each(?1))`

// sqlNeighbours finds, for each source in the JSON list ?1 ([agent,
// session, ts, uuid] each; session "" for one that names none), the ids of
// the memories of the same agent and session nearest to it in time, up to
// two before and two after (comma-separated, in no promised order), among
// those the search may return (the filters of sqlSearch: ?2 to ?5). The
// turns table's key orders them: each side is one seek and a short walk.
var sqlNeighbours = `WITH src AS (
		SELECT key AS k, value ->> 0 AS agent, value ->> 1 AS session, value ->> 2 AS ts, value ->> 3 AS uuid
		FROM json_each(?1))
	SELECT k,` + neighbourCol(`<`, `DESC`) + `,` + neighbourCol(`>`, `ASC`) + `
	FROM src`

// neighbourCol is the sqlNeighbours column of the neighbours on the side
// of cmp.
func neighbourCol(cmp, order string) string {
	return `(SELECT group_concat(id) FROM (SELECT t.id AS id FROM search.turns AS t CROSS JOIN memories AS m ON m.id = t.id
		WHERE t.agent = src.agent AND t.session = src.session
		  AND (t.ts ` + cmp + ` src.ts OR t.ts = src.ts AND t.uuid ` + cmp + ` src.uuid)
		  AND m.group_id IN (SELECT value FROM json_each(?2))
		  AND (?3 OR NOT EXISTS (SELECT 1 FROM superseded AS x WHERE x.id = m.id))
		  AND (?4 IS NULL OR m.kind IN (SELECT value FROM json_each(?4)))
		  AND (?5 IS NULL OR m.ts >= ?5)
		ORDER BY t.ts ` + order + `, t.uuid ` + order + ` LIMIT ` + strconv.Itoa(recall.Window) + `))`
}

// A search of this store is read.Search(ctx, g, q): the one recipe
// over the primitives below (memsync.Retriever): the recall.PoolSize best
// bm25 matches of any term, and the neighbours in their session of the
// strongest. Query text is never read as query syntax.

// sqlFilter is f as the search queries take it (?2 to ?5 of sqlLexFilter
// and sqlNeighbours).
func sqlFilter(f memsync.Filter) (filter, error) {
	groups, err := json.Marshal(f.Groups)
	if err != nil {
		return filter{}, fmt.Errorf("embedded: search: %w", err)
	}
	out := filter{groups: string(groups), all: f.All}
	if len(f.Kinds) > 0 {
		b, err := json.Marshal(f.Kinds)
		if err != nil {
			return filter{}, fmt.Errorf("embedded: search: %w", err)
		}
		out.kinds = string(b)
	}
	if !f.Since.IsZero() {
		out.since = formatTS(f.Since)
	}
	return out, nil
}

// Lexical is the recipe's lexical pool (memsync.Retriever): the pool best
// bm25 matches of any of terms that f lets through, best first, once the
// full-text index holds every memory applied so far (awaitIndex).
func (g *Graph) Lexical(ctx context.Context, terms []string, f memsync.Filter, pool int) ([]memsync.Found, error) {
	if len(f.Groups) == 0 || len(terms) == 0 {
		return nil, nil
	}
	sf, err := sqlFilter(f)
	if err != nil {
		return nil, err
	}
	if err := g.awaitIndex(ctx); err != nil {
		return nil, err
	}
	lexical, err := g.lexicalTerms(ctx, terms, sf, pool)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(lexical))
	for i, c := range lexical {
		ids[i] = c.id
	}
	nodes := map[int64]memsync.Node{}
	if err := g.readNodes(ctx, ids, nodes); err != nil {
		return nil, err
	}
	out := make([]memsync.Found, 0, len(lexical))
	for _, c := range lexical {
		if n, ok := nodes[c.id]; ok {
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
	sf, err := sqlFilter(f)
	if err != nil {
		return nil, err
	}
	return g.neighbours(ctx, sources, sf)
}

// Similar is the recipe's vector candidates (memsync.Retriever): none
// without an embedder.
func (g *Graph) Similar(ctx context.Context, text string, f memsync.Filter, pool int) ([]memsync.Found, error) {
	qv := memsync.QueryVector(g.emb, text)
	if qv == nil || len(f.Groups) == 0 {
		return nil, nil
	}
	sf, err := sqlFilter(f)
	if err != nil {
		return nil, err
	}
	vc, err := g.similarIndexed(ctx, qv, f.Groups, sf, pool)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(vc))
	for i, c := range vc {
		ids[i] = c.id
	}
	nodes := map[int64]memsync.Node{}
	if err := g.readNodes(ctx, ids, nodes); err != nil {
		return nil, err
	}
	out := make([]memsync.Found, 0, len(vc))
	for _, c := range vc {
		if n, ok := nodes[c.id]; ok {
			out = append(out, memsync.Found{Node: n, Score: c.sim.Cosine})
		}
	}
	return out, nil
}

// candidate is a memory the full-text index matched, or a neighbour of one.
type candidate struct {
	id    int64
	score float64 // lexical; 0 for a neighbour
	ts    time.Time
	uuid  string
}

// filter is what a search asks of the memories it may return, as sqlSearch
// and sqlNeighbours take it.
type filter struct {
	groups       string // JSON list
	all          bool
	kinds, since any
}

// sqlLexFilter reads the memories with the ids in the JSON list ?1 as a
// search filters and orders them: ts, uuid and whether they pass its
// filters (?2 to ?5: the groups, whether superseded ones count, the
// kinds, the oldest ts), a seek by id each (the unary + keeps SQLite from
// seeking once per group or kind).
const sqlLexFilter = `SELECT m.id, m.ts, m.uuid,
		+m.group_id IN (SELECT value FROM json_each(?2))
		AND (?3 OR NOT EXISTS (SELECT 1 FROM superseded AS x WHERE x.id = m.id))
		AND (?4 IS NULL OR +m.kind IN (SELECT value FROM json_each(?4)))
		AND (?5 IS NULL OR m.ts >= ?5)
	FROM memories AS m WHERE m.id IN (SELECT value FROM json_each(?1))`

// sqlLexVisible numbers the groups of the JSON list ?1 as the index does
// (groups it never saw have no number and match nothing).
const sqlLexVisible = `SELECT ord FROM search.lex_groups WHERE name IN (SELECT value FROM json_each(?1))`

// topFetch is how many more matches than the pool lexical tests against
// the filters at first, and by how much it multiplies them each time the
// filters left too few (until every match is tested).
const (
	topFetch  = 2
	topGrowth = 8
)

// lexicalTerms returns the best pool matches of any of terms that f lets
// through, best first: by bm25 (lexScores), then newest first, then uuid.
// Every match of the reader's groups is scored (the postings hold all bm25
// needs); only the best are tested against the filters (lexicalLevels).
// The index and the memories are read in one read transaction.
func (g *Graph) lexicalTerms(ctx context.Context, terms []string, f filter, pool int) ([]candidate, error) {
	tx, err := g.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, g.wrap("search", err)
	}
	defer tx.Rollback()
	visible, err := lexVisible(ctx, tx, f.groups)
	if err != nil {
		return nil, g.wrap("search: groups", err)
	}
	if len(visible) == 0 {
		return nil, nil
	}
	hits, rows, err := lexScores(ctx, tx, visible, terms)
	if err != nil {
		return nil, g.wrap("search: postings", err)
	}
	pass, err := g.lexicalLevels(ctx, tx, hits, rows, f, pool)
	if err != nil {
		return nil, err
	}
	return g.candidates(pass)
}

// lexVisible is the numbers of the groups of the JSON list groups.
func lexVisible(ctx context.Context, q querier, groups string) ([]uint32, error) {
	rows, err := q.QueryContext(ctx, sqlLexVisible, groups)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []uint32
	for rows.Next() {
		var ord int64
		if err := rows.Scan(&ord); err != nil {
			return nil, err
		}
		out = append(out, uint32(ord))
	}
	return out, rows.Err()
}

// querier is what lexicalTop reads through: the read pool or a read
// transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// lexicalTop tests the fetch best of hits against f, and returns the
// best pool that pass and whether they settle the answer: when every
// match was tested, or when pool of them passed and the pool-th ranks
// strictly better than the worst match tested (every match not tested
// ranks at best equal to that one). It is what lexicalLevels must equal
// when fetch covers every match.
func (g *Graph) lexicalTop(ctx context.Context, db querier, hits []lexHit, f filter, pool, fetch int) ([]candidate, bool, error) {
	best := lexBest(hits, fetch)
	if len(best) == 0 {
		return nil, true, nil
	}
	pass, err := g.passing(ctx, db, best, f)
	if err != nil {
		return nil, false, err
	}
	pass = pass[:min(pool, len(pass))]
	settled := len(best) == len(hits) || len(pass) == pool && pass[pool-1].rank < best[len(best)-1].rank
	if !settled {
		return nil, false, nil
	}
	out, err := g.candidates(pass)
	return out, err == nil, err
}

// readNodes reads the memories with ids that nodes does not hold yet into it.
func (g *Graph) readNodes(ctx context.Context, ids []int64, nodes map[int64]memsync.Node) error {
	var missing []int64
	for _, id := range ids {
		if _, ok := nodes[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	list, err := json.Marshal(missing)
	if err != nil {
		return fmt.Errorf("embedded: search: %w", err)
	}
	rows, err := g.rdb.QueryContext(ctx, sqlNodesByID, string(list))
	if err != nil {
		return g.wrap("search: read memories", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		n, err := scanNode(rows, &id)
		if err != nil {
			return g.wrap("search: read memories", err)
		}
		nodes[id] = n
	}
	if err := rows.Err(); err != nil {
		return g.wrap("search: read memories", err)
	}
	return nil
}

// neighbours finds, for each source (a lexical hit), the memories of its
// agent and session nearest to it in time that f lets through (package
// recall); for a source that names no session, its agent's memories that
// name none (session "" in the turns table).
func (g *Graph) neighbours(ctx context.Context, sources []memsync.Node, f filter) ([]memsync.Beside, error) {
	src := make([][4]string, len(sources))
	for i, n := range sources {
		src[i] = [4]string{n.Agent, n.Session, formatTS(n.TS), n.UUID}
	}
	list, err := json.Marshal(src)
	if err != nil {
		return nil, fmt.Errorf("embedded: search: %w", err)
	}
	rows, err := g.rdb.QueryContext(ctx, sqlNeighbours, string(list), f.groups, f.all, f.kinds, f.since)
	if err != nil {
		return nil, g.wrap("search: neighbours", err)
	}
	type side struct{ before, after []int64 }
	found := make([]side, len(sources))
	var ids []int64
	for rows.Next() {
		var k int
		var before, after sql.NullString
		if err := rows.Scan(&k, &before, &after); err != nil {
			rows.Close()
			return nil, g.wrap("search: neighbours", err)
		}
		if k < 0 || k >= len(found) {
			continue
		}
		var s side
		var errB, errA error
		s.before, errB = parseIDs(before.String)
		s.after, errA = parseIDs(after.String)
		if err := cmp.Or(errB, errA); err != nil {
			rows.Close()
			return nil, g.wrap("search: neighbours", err)
		}
		found[k] = s
		ids = append(append(ids, s.before...), s.after...)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, g.wrap("search: neighbours", err)
	}
	nodes := map[int64]memsync.Node{}
	if err := g.readNodes(ctx, ids, nodes); err != nil {
		return nil, err
	}
	// Nearest first on each side, in the turns key's order (ts, then uuid):
	// dir -1 before the source, +1 after it.
	pick := func(vs []int64, dir int) []memsync.Node {
		var out []memsync.Node
		for _, v := range vs {
			if n, ok := nodes[v]; ok {
				out = append(out, n)
			}
		}
		slices.SortFunc(out, func(a, b memsync.Node) int {
			return dir * cmp.Or(a.TS.Compare(b.TS), strings.Compare(a.UUID, b.UUID))
		})
		return out
	}
	out := make([]memsync.Beside, 0, len(sources))
	for k, s := range found {
		out = append(out, memsync.Beside{From: sources[k].UUID, Before: pick(s.before, -1), After: pick(s.after, 1)})
	}
	return out, nil
}

// awaitIndex waits until the search file holds every memory applied so
// far, so that whatever Get returns Search finds, and Incoming counts,
// too. When indexing failed the read goes on over what is indexed (recall
// and signals degrade, they do not fail) and the indexer tries again from
// the stored records.
func (g *Graph) awaitIndex(ctx context.Context) error {
	if g.ix == nil {
		return nil // read-only: OpenReadOnly found the search file at the memories
	}
	if err := g.ix.wait(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("embedded: waiting for the search index: %w", err)
		}
		g.lg.Warn("search index is behind: searching what it holds", zap.Error(err))
		g.ix.retry()
	}
	return nil
}

// Flush waits until every memory applied so far is in the full-text index,
// and returns the error of the indexing that failed, if the last one did.
func (g *Graph) Flush(ctx context.Context) error {
	if g.ix == nil {
		return nil
	}
	// The indexer first: a job that finds the vector log lost starts a
	// re-embedding, whose own jobs the second wait sees indexed.
	if err := g.ix.wait(ctx); err == nil {
		if err := g.awaitReembed(ctx); err != nil {
			return err
		}
	}
	if err := g.ix.wait(ctx); err != nil {
		return g.wrap("flush full-text index", err)
	}
	return nil
}

var _ memsync.PartHasher = (*Graph)(nil)

// HashParts is Hashes in parts at once: the ids are cut into parts
// ranges of equal width, each scanned on a read connection of its own
// (its own snapshot) by its own goroutine.
func (g *Graph) HashParts(ctx context.Context, parts int, fn func(part int, uuid, hash string) error) error {
	var lo, hi int64
	if err := g.rdb.QueryRowContext(ctx, `SELECT IFNULL(MIN(id), 0), IFNULL(MAX(id), 0) FROM memories`).Scan(&lo, &hi); err != nil {
		return g.wrap("hashes", err)
	}
	parts = max(1, min(parts, readConns))
	width := (hi-lo)/int64(parts) + 1
	eg, ctx := errgroup.WithContext(ctx)
	for i := range parts {
		from := lo + int64(i)*width
		to := from + width
		if i == parts-1 {
			to = hi + 1
		}
		eg.Go(func() error {
			// A scan reads each page once: a small page cache, not the
			// pool's, which every part would fill (16 MiB each).
			conn, err := g.rdb.Conn(ctx)
			if err != nil {
				return g.wrap("hashes", err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -2048`); err != nil {
				return g.wrap("hashes", err)
			}
			defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA cache_size = `+readCache) //nolint:errcheck // a smaller cache is only slower
			rows, err := conn.QueryContext(ctx, `SELECT uuid, hash FROM memories WHERE id >= ?1 AND id < ?2`, from, to)
			return g.eachHash(rows, err, func(uuid, hash string) error { return fn(i, uuid, hash) })
		})
	}
	return eg.Wait()
}

// Hashes calls fn with the uuid and hash of every projected memory, in
// the table's order (one sequential scan, not one row lookup per uuid), from
// a single consistent snapshot, without decoding the records. An error from
// fn stops the stream and is returned as is.
func (g *Graph) Hashes(ctx context.Context, fn func(uuid, hash string) error) error {
	rows, err := g.rdb.QueryContext(ctx, `SELECT uuid, hash FROM memories`)
	return g.eachHash(rows, err, fn)
}

// eachHash calls fn with each (uuid, hash) row of a query's rows (err: the
// query's error), and closes them.
func (g *Graph) eachHash(rows *sql.Rows, err error, fn func(uuid, hash string) error) error {
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

// parseIDs reads a comma-separated list of ids (sqlNeighbours' columns;
// "" is none).
func parseIDs(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	var out []int64
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("neighbour ids %q: %w", s, err)
		}
		out = append(out, id)
	}
	return out, nil
}
