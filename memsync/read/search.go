package read

import (
	"context"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/analysis"
	"github.com/memsync/memsync/memsync/recall"
)

// This file is the one search recipe: parse the query, take the lexical
// pool, bring in the session neighbours of its strongest hits, compute
// which query terms each holds and where, fuse with the vector
// candidates (package recall), cut, and return the memories. A backend
// (the embedded store, Neo4j) and the offline journal reader give only
// the primitives of memsync.Retriever, each with its own engine; the
// recipe is here, once, so that every path ranks the same candidates the
// same way. It lives here rather than in recall because it reads and
// returns Nodes, and because Rank (rank.go) fuses the same candidates
// again once it knows which are retired; recall stays the pure rule.

// Search is the one search recipe (package recall's rule) over r's
// primitives: the recall.PoolSize(limit) best lexical hits, the session
// neighbours of the strongest, fused with the vector candidates, cut to
// q.Limit. Superseded memories are left out unless q.All. No groups, or no
// terms (a query of stopwords only), give no hits.
func Search(ctx context.Context, r memsync.Retriever, q memsync.SearchQuery) ([]memsync.Hit, error) {
	c, err := gather(ctx, r, q)
	if err != nil || c == nil {
		return nil, err
	}
	ranked := c.fuse(nil, nil)
	return c.hits(ranked[:min(c.limit, len(ranked))]), nil
}

// candidates is what one search found, before fusion: the query, the
// candidates with what the rule needs of each, their links, the vector
// candidates and every memory among them.
type candidates struct {
	q     recall.Query
	limit int
	cands []recall.Candidate
	links []recall.Link
	sims  []recall.Similar
	nodes map[string]memsync.Node
}

// gather asks r for everything a search ranks (nil when the query can
// find nothing).
func gather(ctx context.Context, r memsync.Retriever, q memsync.SearchQuery) (*candidates, error) {
	if len(q.Groups) == 0 {
		return nil, nil
	}
	rq := recall.ParseQuery(q.Text)
	if len(rq.Terms) == 0 {
		return nil, nil
	}
	if p, ok := r.(memsync.Pinner); ok {
		ctx = p.Pin(ctx)
	}
	if o, ok := r.(memsync.SearchOpener); ok {
		var err error
		if r, err = o.OpenSearch(ctx, q); err != nil || r == nil {
			return nil, err
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = memsync.DefaultSearchLimit
	}
	pool := recall.PoolSize(limit)
	f := memsync.Filter{Groups: q.Groups, Kinds: q.Kinds, Since: q.Since, All: q.All}
	lexical, err := r.Lexical(ctx, rq.Terms, f, pool)
	if err != nil {
		return nil, err
	}
	c := &candidates{q: rq, limit: limit, nodes: make(map[string]memsync.Node, len(lexical))}
	var hits []memsync.Node
	for _, h := range lexical {
		if _, dup := c.nodes[h.UUID]; dup {
			continue
		}
		c.nodes[h.UUID] = h.Node
		hits = append(hits, h.Node)
		c.cands = append(c.cands, recall.Candidate{UUID: h.UUID, TS: h.TS, Lexical: h.Score})
	}
	if sources := recall.SourceHits(hits); len(sources) > 0 {
		near, err := r.Neighbours(ctx, sources, f)
		if err != nil {
			return nil, err
		}
		for _, b := range near {
			if src, ok := c.nodes[b.From]; ok && src.Session == "" {
				b = episode(src, b)
			}
			for _, n := range append(append([]memsync.Node(nil), b.Before...), b.After...) {
				if _, known := c.nodes[n.UUID]; !known {
					c.nodes[n.UUID] = n
					c.cands = append(c.cands, recall.Candidate{UUID: n.UUID, TS: n.TS})
				}
			}
			c.links = append(c.links, recall.Links(b.From, uuidsOf(b.Before), uuidsOf(b.After))...)
		}
	}
	for i := range c.cands {
		n := c.nodes[c.cands[i].UUID]
		// Only a "when" query reads it (recall.Rank's time boost).
		c.cands[i].Timed = rq.When && recall.Timed(n.Text)
		if c.cands[i].Lexical > 0 {
			c.cands[i].Fields = recall.Fields{
				Text:     analysis.Holds(rq.Terms, n.Text),
				Tags:     analysis.Holds(rq.Terms, n.Tags...),
				Entities: analysis.Holds(rq.Terms, n.Record.Entities...),
			}
			c.cands[i].Match = c.cands[i].Fields.All()
		}
	}
	similar, err := r.Similar(ctx, q.Text, f, pool)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, s := range similar {
		if seen[s.UUID] {
			continue
		}
		seen[s.UUID] = true
		if _, known := c.nodes[s.UUID]; !known {
			c.nodes[s.UUID] = s.Node
		}
		c.sims = append(c.sims, recall.Similar{UUID: s.UUID, TS: s.TS, Cosine: s.Score})
	}
	return c, nil
}

// episode keeps of b, the neighbours of the sessionless src, those of
// its implicit episode (recall.Episode).
func episode(src memsync.Node, b memsync.Beside) memsync.Beside {
	cut := func(side []memsync.Node) []memsync.Node {
		ts := make([]time.Time, len(side))
		for i, n := range side {
			ts[i] = n.TS
		}
		return side[:recall.Episode(src.TS, ts)]
	}
	return memsync.Beside{From: b.From, Before: cut(b.Before), After: cut(b.After)}
}

func uuidsOf(nodes []memsync.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.UUID
	}
	return out
}

// fuse ranks the candidates (recall.Hybrid), those in drop left out, and
// those in quiet lifting no neighbour: a superseded or wrong-flagged
// memory brings in nothing.
func (c *candidates) fuse(drop, quiet map[string]bool) []recall.Ranked {
	if len(drop) == 0 && len(quiet) == 0 {
		return recall.Hybrid(c.q, c.cands, c.links, c.sims)
	}
	cands := make([]recall.Candidate, 0, len(c.cands))
	for _, x := range c.cands {
		if !drop[x.UUID] {
			cands = append(cands, x)
		}
	}
	sims := make([]recall.Similar, 0, len(c.sims))
	for _, x := range c.sims {
		if !drop[x.UUID] {
			sims = append(sims, x)
		}
	}
	links := make([]recall.Link, 0, len(c.links))
	for _, l := range c.links {
		if !drop[l.From] && !quiet[l.From] {
			links = append(links, l)
		}
	}
	return recall.Hybrid(c.q, cands, links, sims)
}

// order is the uuids of every memory found, each once: the candidates,
// then the vector ones.
func (c *candidates) order() []string {
	out := make([]string, 0, len(c.nodes))
	seen := make(map[string]bool, len(c.nodes))
	for _, x := range c.cands {
		if !seen[x.UUID] {
			seen[x.UUID] = true
			out = append(out, x.UUID)
		}
	}
	for _, x := range c.sims {
		if !seen[x.UUID] {
			seen[x.UUID] = true
			out = append(out, x.UUID)
		}
	}
	return out
}

// hits are the ranked memories as Hits.
func (c *candidates) hits(ranked []recall.Ranked) []memsync.Hit {
	out := make([]memsync.Hit, 0, len(ranked))
	for _, r := range ranked {
		if n, ok := c.nodes[r.UUID]; ok {
			out = append(out, memsync.Hit{Node: n, Score: r.Score, Match: r.Match, Fields: r.Fields, From: r.From, Boosts: r.Boosts, Parts: r.Parts})
		}
	}
	return out
}
