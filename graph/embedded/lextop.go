package embedded

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// lexPass is a match that passed a search's filters: its rank (lexHit),
// and the ts (as stored: formatTS sorts as time does) and uuid that order
// the matches of one rank.
type lexPass struct {
	id   int64
	rank float64
	ts   string
	uuid string
}

// lexPassOrder is the order of a search's lexical pool: rank, then ts
// descending, then uuid.
func lexPassOrder(a, b lexPass) int {
	switch {
	case a.rank != b.rank:
		return cmp.Compare(a.rank, b.rank)
	case a.ts != b.ts:
		return strings.Compare(b.ts, a.ts)
	}
	return strings.Compare(a.uuid, b.uuid)
}

// passing is those of hits that pass f, in lexPassOrder: a seek by id each
// (sqlLexFilter).
func (g *Graph) passing(ctx context.Context, db querier, hits []lexHit, f filter) ([]lexPass, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	rankOf := make(map[int64]float64, len(hits))
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.id
		rankOf[h.id] = h.rank
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("embedded: search: %w", err)
	}
	rows, err := db.QueryContext(ctx, sqlLexFilter, string(list), f.groups, f.all, f.kinds, f.since)
	if err != nil {
		return nil, g.wrap("search", err)
	}
	defer rows.Close()
	var pass []lexPass
	for rows.Next() {
		var (
			p  lexPass
			ok bool
		)
		if err := rows.Scan(&p.id, &p.ts, &p.uuid, &ok); err != nil {
			return nil, g.wrap("search", err)
		}
		if ok {
			p.rank = rankOf[p.id]
			pass = append(pass, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, g.wrap("search", err)
	}
	slices.SortFunc(pass, lexPassOrder)
	return pass, nil
}

// candidates is pass as the search's candidates (its ts parsed, its score
// the bm25 the rank negates).
func (g *Graph) candidates(pass []lexPass) ([]candidate, error) {
	out := make([]candidate, 0, len(pass))
	for _, p := range pass {
		ts, err := time.Parse(time.RFC3339Nano, p.ts)
		if err != nil {
			return nil, g.wrap("search", fmt.Errorf("%s: ts: %w", p.uuid, err))
		}
		out = append(out, candidate{id: p.id, score: -p.rank, ts: ts, uuid: p.uuid})
	}
	return out, nil
}

// lexicalLevels is the best pool of hits (of a store of rows memories) that pass f, in lexPassOrder,
// testing as few as it can. It takes the best matches by rank a fetch at a
// time (pool×topFetch, then topGrowth times more): those that rank
// strictly better than the fetch's worst rank are tested by id, and so is
// every match of that worst rank (its level), in or out of the fetch, so a
// fetch settles its level whatever the ties; a level too large to seek by
// id (walkPays) is walked newest first instead, which finds its first
// passes without reading the rest. Every match a later fetch takes ranks
// worse than all the earlier ones, so the passes found are in order as
// they come.
func (g *Graph) lexicalLevels(ctx context.Context, db querier, hits []lexHit, rows int64, f filter, pool int) ([]lexPass, error) {
	var got []lexPass
	rest := hits
	for fetch := pool * topFetch; len(got) < pool && len(rest) > 0; fetch *= topGrowth {
		best := lexBest(rest, fetch)
		if len(best) == len(rest) {
			p, err := g.passing(ctx, db, best, f)
			if err != nil {
				return nil, err
			}
			got = append(got, p...)
			break
		}
		worst := best[len(best)-1].rank
		better := best[:slices.IndexFunc(best, func(h lexHit) bool { return h.rank == worst })]
		var level []lexHit
		for _, h := range rest {
			if h.rank == worst {
				level = append(level, h)
			}
		}
		if len(level) <= fetch {
			p, err := g.passing(ctx, db, append(slices.Clip(better), level...), f)
			if err != nil {
				return nil, err
			}
			got = append(got, p...)
		} else {
			p, err := g.passing(ctx, db, better, f)
			if err != nil {
				return nil, err
			}
			if got = append(got, p...); len(got) >= pool {
				break
			}
			if p, err = g.level(ctx, db, level, rows, f, pool-len(got)); err != nil {
				return nil, err
			}
			got = append(got, p...)
		}
		kept := rest[:0]
		for _, h := range rest {
			if h.rank > worst {
				kept = append(kept, h)
			}
		}
		rest = kept
	}
	return got[:min(pool, len(got))], nil
}

// level is the first need matches of level (hits of one rank) that pass
// f, in lexPassOrder: walked newest first when walkPays, else tested by id.
func (g *Graph) level(ctx context.Context, db querier, level []lexHit, rows int64, f filter, need int) ([]lexPass, error) {
	if walkPays(len(level), need, rows) {
		p, done, err := g.walkLevel(ctx, db, level, f, need, len(level)*walkRowsPerMatch)
		if err != nil || done {
			return p, err
		}
	}
	p, err := g.passing(ctx, db, level, f)
	return p[:min(need, len(p))], err
}

// walkRowsPerMatch bounds a level's walk: it reads at most this many
// memories per match of the level before giving up for the seeks by id
// (which read one per match), so a walk costs at worst a few times what it
// replaces.
const walkRowsPerMatch = 2

// walkPays is whether walking the memories newest first finds need passes
// among level matches of a store of rows memories sooner than seeking each
// match by id: about need × rows / level memories read against level
// seeks. A variable so that tests can force either.
var walkPays = func(level, need int, rows int64) bool {
	return float64(need)*float64(rows) < float64(level)*float64(level)
}

// sqlLexWalk reads the memories of group ?1 newest first (then by uuid),
// no older than ?4, with whether they pass a search's other filters (?2:
// superseded ones count, ?3: the kinds): memories_recent in order.
const sqlLexWalk = `SELECT m.id, m.ts, m.uuid,
		(?2 OR NOT EXISTS (SELECT 1 FROM superseded AS x WHERE x.id = m.id))
		AND (?3 IS NULL OR +m.kind IN (SELECT value FROM json_each(?3)))
	FROM memories AS m WHERE m.group_id = ?1 AND m.ts >= coalesce(?4, '')
	ORDER BY m.ts DESC, m.uuid`

// walkLevel walks the memories of f's groups newest first (sqlLexWalk for
// each group, merged) and keeps those of level that pass f until it holds
// need; done is false when it read limit memories first (its passes are then
// not the answer). The level's matches are all of one rank and of f's
// groups, so the walk's order is lexPassOrder among them.
func (g *Graph) walkLevel(ctx context.Context, db querier, level []lexHit, f filter, need, limit int) (pass []lexPass, done bool, err error) {
	var groups []string
	if err := json.Unmarshal([]byte(f.groups), &groups); err != nil {
		return nil, false, fmt.Errorf("embedded: search: groups: %w", err)
	}
	var top int64
	for _, h := range level {
		top = max(top, h.id)
	}
	member := make([]uint64, top/64+1)
	for _, h := range level {
		member[h.id/64] |= 1 << (h.id % 64)
	}
	rank := level[0].rank
	type cursor struct {
		next func() (lexPass, bool, bool, error) // row, whether it passes, whether there was one
		row  lexPass
		ok   bool
	}
	var cursors []*cursor
	for _, group := range groups {
		rows, err := db.QueryContext(ctx, sqlLexWalk, group, f.all, f.kinds, f.since)
		if err != nil {
			return nil, false, g.wrap("search", err)
		}
		defer rows.Close()
		c := &cursor{next: func() (lexPass, bool, bool, error) {
			if !rows.Next() {
				return lexPass{}, false, false, rows.Err()
			}
			var (
				p  lexPass
				ok bool
			)
			err := rows.Scan(&p.id, &p.ts, &p.uuid, &ok)
			p.rank = rank
			return p, ok, true, err
		}}
		cursors = append(cursors, c)
	}
	// heads holds each group's next memory; the walk takes the newest.
	heads := make([]*cursor, 0, len(cursors))
	advance := func(c *cursor) error {
		p, ok, more, err := c.next()
		if err != nil {
			return g.wrap("search", err)
		}
		if more {
			c.row, c.ok = p, ok
			heads = append(heads, c)
		}
		return nil
	}
	for _, c := range cursors {
		if err := advance(c); err != nil {
			return nil, false, err
		}
	}
	for read := 0; len(heads) > 0 && len(pass) < need; read++ {
		if read == limit {
			return nil, false, nil
		}
		i := 0
		for j := 1; j < len(heads); j++ {
			if lexPassOrder(heads[j].row, heads[i].row) < 0 {
				i = j
			}
		}
		c := heads[i]
		heads = slices.Delete(heads, i, i+1)
		if id := c.row.id; c.ok && id <= top && member[id/64]&(1<<(id%64)) != 0 {
			pass = append(pass, c.row)
		}
		if err := advance(c); err != nil {
			return nil, false, err
		}
	}
	return pass, true, nil
}
