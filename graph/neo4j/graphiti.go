package neo4j

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// The Graphiti shape (issue 57, docs/design/graphiti.md): an opt-in second
// projection, beside memsync's own, in the schema graphiti-core's readers
// (search, retrieve_episodes, the Graphiti MCP server's read tools) expect:
//
//	(:Episodic {uuid, name, group_id, source, source_description, content, entity_edges, created_at, valid_at})
//	  -[:MENTIONS {uuid, group_id, created_at}]->(:Entity {uuid, name, group_id, created_at, summary})
//	(:Entity)-[:RELATES_TO {uuid, name, fact, group_id, episodes, created_at, valid_at, invalid_at, expired_at, reference_time}]->(:Entity)
//
// It is derived from memsync's own projection in the current slot (which
// is derived from the journals), never written through an LLM. Every node
// and relationship it writes carries memsync_owned: true (GraphitiMarker)
// and the id of the pass that wrote it; every delete it makes matches that
// marker, so what Graphiti itself wrote into the same database is never
// touched.
//
// Its statements do not go through forSlot: their labels (:Entity in
// particular) are Graphiti's, the same in both slots. They run in sessions
// of their own (rawSession); the memories they derive from are read in
// the current slot as every read is.

// GraphitiMarker is the property, true, on every node and relationship of
// the Graphiti shape memsync writes. Cleanup matches it and nothing else.
const GraphitiMarker = "memsync_owned"

// GraphitiSharedGroup is the Graphiti group_id of memsync's shared group
// (journal.SharedGroup). It is not Graphiti MCP's default "main" on
// purpose: a Graphiti that writes its own episodes into "main" never
// shares a group (nor an entity name, see docs/design/graphiti.md) with
// memsync's projection.
const GraphitiSharedGroup = "memsync"

// GraphitiPrivatePrefix prefixes an agent's name in the Graphiti group_id
// of its private group: AGENT:planner is AGENT_planner.
const GraphitiPrivatePrefix = "AGENT_"

// The fulltext indexes graphiti-core queries by name, with the fields it
// creates them with (graphiti_core/graph_queries.py, get_fulltext_indices,
// 0.29–0.31). IF NOT EXISTS: a Graphiti that created them first keeps its.
var graphitiSchema = []string{
	"CREATE FULLTEXT INDEX episode_content IF NOT EXISTS FOR (e:Episodic) ON EACH [e.content, e.source, e.source_description, e.group_id]",
	"CREATE FULLTEXT INDEX node_name_and_summary IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.summary, n.group_id]",
	"CREATE FULLTEXT INDEX community_name IF NOT EXISTS FOR (n:Community) ON EACH [n.name, n.group_id]",
	"CREATE FULLTEXT INDEX edge_name_and_fact IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON EACH [e.name, e.fact, e.group_id]",
	"CREATE INDEX memsync_graphiti_episodic_uuid IF NOT EXISTS FOR (e:Episodic) ON (e.uuid)",
	"CREATE INDEX memsync_graphiti_entity_uuid IF NOT EXISTS FOR (n:Entity) ON (n.uuid)",
	"CREATE INDEX memsync_graphiti_episodic_group IF NOT EXISTS FOR (e:Episodic) ON (e.group_id)",
	"CREATE INDEX memsync_graphiti_entity_group IF NOT EXISTS FOR (n:Entity) ON (n.group_id)",
}

// GraphitiGroup maps a memsync group to its Graphiti group_id, which
// matches ^[a-zA-Z0-9_-]+$ (graphiti-core's validate_group_id): the shared
// group is GraphitiSharedGroup, AGENT:<name> is AGENT_<name> with every
// other character replaced by '_'. private says the group is an agent's.
func GraphitiGroup(group string) (id string, private bool) {
	if group == journal.SharedGroup {
		return GraphitiSharedGroup, false
	}
	name := strings.TrimPrefix(group, "AGENT:")
	var b strings.Builder
	b.WriteString(GraphitiPrivatePrefix)
	for _, r := range name {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String(), true
}

// The shape's statements skip re-planning (CYPHER replan=skip), as
// memsync's own writes do (apply.go): while a projection grows the graph
// its statistics change at every batch, and re-planning these statements
// cost more than running them (BenchmarkApplyGraphiti: about half of
// the shape's time went to planning). Every lookup is a seek by uuid, the
// plan the statistics of an empty graph give too.

// graphitiRead lists the visible memories among $uuids and those whose
// edges end on them (their facts name the target), in the current slot.
const graphitiRead = `CYPHER replan=skip
UNWIND $uuids AS u
MATCH (x:Memory {uuid: u})
OPTIONAL MATCH (x)<-[:LINKS_TO|SUPERSEDES|CONFLICTS_WITH|SUPPORTS]-(s:Memory)
WITH collect(DISTINCT x) + collect(DISTINCT s) AS ms
UNWIND ms AS m
WITH DISTINCT m WHERE m.hash IS NOT NULL` + graphitiColumns

// graphitiPage lists a page of every visible memory, by uuid, for a full
// projection.
const graphitiPage = `CYPHER replan=skip
MATCH (m:Memory) WHERE m.hash IS NOT NULL AND m.uuid > $after
WITH m ORDER BY m.uuid LIMIT $limit` + graphitiColumns

const graphitiColumns = `
RETURN m.uuid AS uuid, m.group_id AS group_id, m.text AS text, m.ts AS ts, m.invalid_at AS invalid_at,
  m.session AS session, m.kind AS kind,
  [(m)-[:MENTIONS]->(e) | e.name] AS entities,
  [(m)-[r:LINKS_TO|SUPERSEDES|CONFLICTS_WITH|SUPPORTS]->(t) WHERE t.hash IS NOT NULL AND t.group_id = m.group_id | [type(r), t.uuid]] AS edges`

// graphitiNodes writes the nodes of memories' Graphiti shape: each one's
// episode, its memory entity, its named entities and MENTIONS from the
// episode to them. A re-projection first deletes the memory's own marked
// relationships (its facts too: graphitiFacts writes them again), so an
// edited record leaves no stale one. It MERGEs and deletes only marked
// nodes, by uuid (:Entity:MemsyncGraphiti).
const graphitiNodes = `CYPHER replan=skip
UNWIND $rows AS r
MERGE (ep:Episodic {uuid: r.uuid})
SET ep.memsync_owned = true, ep.memsync_pass = $pass, ep.name = r.name, ep.group_id = r.group,
    ep.source = r.source, ep.source_description = 'memsync', ep.content = r.text,
    ep.entity_edges = [f IN r.facts | f.uuid], ep.created_at = r.ts, ep.valid_at = r.ts
WITH r, ep
MERGE (me:Entity:MemsyncGraphiti {uuid: r.me})
SET me.memsync_owned = true, me.memsync_pass = $pass, me.name = r.me_name,
    me.group_id = r.group, me.created_at = r.ts, me.summary = r.text
WITH r, ep, me
CALL {
  WITH ep
  MATCH (ep)-[old:MENTIONS {memsync_owned: true}]->()
  DELETE old
}
CALL {
  WITH me
  MATCH (me)-[old:RELATES_TO {memsync_owned: true}]->()
  DELETE old
}
CREATE (ep)-[:MENTIONS {uuid: r.me_mention, group_id: r.group, created_at: r.ts, memsync_owned: true, memsync_pass: $pass}]->(me)
FOREACH (n IN r.named |
  MERGE (e:Entity:MemsyncGraphiti {uuid: n.uuid})
  ON CREATE SET e.created_at = r.ts, e.summary = ''
  SET e.memsync_owned = true, e.memsync_pass = $pass, e.name = n.name, e.group_id = r.group
  CREATE (ep)-[:MENTIONS {uuid: n.mention, group_id: r.group, created_at: r.ts, memsync_owned: true, memsync_pass: $pass}]->(e))`

// graphitiFacts writes memories' facts, after graphitiNodes in the same
// transaction, so a fact finds a target of the same chunk whatever the
// order of the rows. A target memory not written yet (a later chunk of
// the same pass: its group is the fact's, so the pass writes it) is made
// a marked memory entity with Graphiti's required fields, which its own
// graphitiNodes fills.
const graphitiFacts = `CYPHER replan=skip
UNWIND $rows AS r
MATCH (me:Entity:MemsyncGraphiti {uuid: r.me})
UNWIND r.facts AS f
MERGE (t:Entity:MemsyncGraphiti {uuid: f.target})
ON CREATE SET t.memsync_owned = true, t.memsync_pass = $pass, t.group_id = r.group, t.name = '', t.summary = '', t.created_at = r.ts
CREATE (me)-[:RELATES_TO {uuid: f.uuid, name: f.name, fact: r.text, group_id: r.group, episodes: [r.uuid],
  created_at: r.ts, valid_at: r.ts, invalid_at: r.invalid_at, expired_at: r.invalid_at, reference_time: r.ts,
  memsync_owned: true, memsync_pass: $pass}]->(t)`

// graphitiDelete removes the Graphiti shape of memories that are no longer
// visible (or no longer projected: a private group without the opt-in).
const graphitiDelete = `CYPHER replan=skip
UNWIND $uuids AS u
CALL {
  WITH u MATCH (n:Episodic {uuid: u}) WHERE n.memsync_owned = true RETURN n
  UNION
  WITH u MATCH (n:Entity {uuid: u}) WHERE n.memsync_owned = true RETURN n
}
DETACH DELETE n`

// graphitiSweepNodes delete the marked nodes a full pass did not write,
// each one scan committing every few hundred rows (CALL IN TRANSACTIONS,
// in an auto-commit transaction): episodes first, then the facts out of
// stale entities, then those entities, so no transaction holds a named
// entity's thousands of MENTIONS and facts at once. Deleting 5,000 stale
// nodes a transaction in any order ran out of the server's transaction
// memory (1.4 GiB) on a 1M-record shape (Drop after a --graphiti rebuild).
// graphitiSweepRels deletes the marked relationships between nodes the
// pass kept.
var graphitiSweepNodes = []string{`
MATCH (n:Episodic) WHERE n.memsync_owned = true AND coalesce(n.memsync_pass, '') <> $pass
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 500 ROWS`, `
MATCH (n:Entity:MemsyncGraphiti)-[r:RELATES_TO]->() WHERE n.memsync_owned = true AND coalesce(n.memsync_pass, '') <> $pass
CALL (r) { DELETE r } IN TRANSACTIONS OF 2000 ROWS`, `
MATCH (n:Entity:MemsyncGraphiti) WHERE n.memsync_owned = true AND coalesce(n.memsync_pass, '') <> $pass
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 500 ROWS`,
}

const (
	graphitiSweepRels = `
MATCH ()-[r:MENTIONS|RELATES_TO]->() WHERE r.memsync_owned = true AND coalesce(r.memsync_pass, '') <> $pass
WITH r LIMIT $limit DELETE r RETURN count(*) AS n`
	// The private sweeps run at every open with the shape on: each seeks
	// the group_id index of its label (graphitiSchema) instead of scanning.
	graphitiSweepPrivateEpisodes = `
MATCH (n:Episodic) WHERE n.group_id STARTS WITH 'AGENT_' AND n.memsync_owned = true
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n`
	graphitiSweepPrivateEntities = `
MATCH (n:Entity) WHERE n.group_id STARTS WITH 'AGENT_' AND n.memsync_owned = true
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n`
)

// graphitiChunk is how many memories one transaction of the Graphiti
// projection writes.
const graphitiChunk = 500

// graphitiUUID is a stable name-based UUID (the version 5 layout over
// SHA-1) for a node or relationship of the Graphiti shape, so that every
// projection of the same record writes the same uuids.
func graphitiUUID(parts ...string) string {
	h := sha1.New()
	h.Write([]byte("memsync-graphiti"))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	b := h.Sum(nil)[:16]
	b[6] = (b[6] & 0x0f) | 0x50
	b[8] = (b[8] & 0x3f) | 0x80
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// graphitiFactNames names memsync's relations as Graphiti facts.
var graphitiFactNames = map[string]string{
	"LINKS_TO":       "LINKS_TO",
	"SUPERSEDES":     "SUPERSEDES",
	"CONFLICTS_WITH": "CONFLICTS_WITH",
	"SUPPORTS":       "SUPPORTS",
}

// graphitiName is a memory's episode name and the stem of its memory
// entity's: the text's first line, at most 80 runes.
func graphitiName(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > 80 {
		line = string(r[:80]) + "…"
	}
	return line
}

// graphitiRows turns memory rows read by graphitiColumns into the rows
// graphitiWrite takes. Rows of private groups are dropped unless private;
// their uuids are returned in skipped, to delete what an earlier
// projection with the opt-in wrote.
func graphitiRows(recs []*neo4jdrv.Record, private bool) (rows []any, skipped []string) {
	for _, rec := range recs {
		get := func(k string) any { v, _ := rec.Get(k); return v }
		uuid, _ := get("uuid").(string)
		group, _ := get("group_id").(string)
		text, _ := get("text").(string)
		gid, isPrivate := GraphitiGroup(group)
		if isPrivate && !private {
			skipped = append(skipped, uuid, graphitiUUID("memory", uuid))
			continue
		}
		ts := get("ts")
		invalid := get("invalid_at")
		source := "text"
		me := graphitiUUID("memory", uuid)
		var named []any
		var facts []any
		ents, _ := get("entities").([]any)
		for _, e := range ents {
			name, _ := e.(string)
			if name == "" {
				continue
			}
			eu := graphitiUUID("entity", gid, name)
			named = append(named, map[string]any{"uuid": eu, "name": name, "mention": graphitiUUID("mention", uuid, eu)})
			facts = append(facts, map[string]any{"uuid": graphitiUUID("fact", uuid, "ABOUT", eu), "name": "ABOUT", "target": eu})
		}
		edges, _ := get("edges").([]any)
		for _, e := range edges {
			pair, _ := e.([]any)
			if len(pair) != 2 {
				continue
			}
			typ, _ := pair[0].(string)
			target, _ := pair[1].(string)
			name, ok := graphitiFactNames[typ]
			if !ok || target == "" {
				continue
			}
			facts = append(facts, map[string]any{"uuid": graphitiUUID("fact", uuid, name, target), "name": name, "target": graphitiUUID("memory", target)})
		}
		if len(facts) == 0 {
			// Every memory states one fact, so a keyword search of facts
			// finds it even when it names no entity and no other memory.
			facts = append(facts, map[string]any{"uuid": graphitiUUID("fact", uuid, "STATES"), "name": "STATES", "target": me})
		}
		name := graphitiName(text)
		rows = append(rows, map[string]any{
			"uuid":       uuid,
			"group":      gid,
			"name":       name,
			"source":     source,
			"text":       text,
			"ts":         ts,
			"invalid_at": invalid,
			"me":         me,
			// The uuid tells two memories of the same first line apart
			// in Graphiti's answers, and leads back to the memory.
			"me_name":    name + " [" + uuid + "]",
			"me_mention": graphitiUUID("mention", uuid, me),
			"named":      nonNil(named),
			"facts":      nonNil(facts),
		})
	}
	return rows, skipped
}

// rawSession opens a session whose statements are not rewritten for a
// slot: the Graphiti shape's labels are the same in both.
func (g *Graph) rawSession(ctx context.Context) neo4jdrv.SessionWithContext {
	return g.driver.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: g.database, AccessMode: neo4jdrv.AccessModeWrite})
}

// rawWrite runs stmt in its own write transaction, outside the slots.
func (g *Graph) rawWrite(ctx context.Context, stmt string, params map[string]any) error {
	s := g.rawSession(ctx)
	defer s.Close(ctx)
	_, err := s.ExecuteWrite(ctx, func(tx neo4jdrv.ManagedTransaction) (any, error) {
		res, err := tx.Run(ctx, stmt, params)
		if err != nil {
			return nil, err
		}
		return res.Consume(ctx)
	})
	return err
}

// rawWriteAll runs stmts in order, with params, in one write
// transaction outside the slots.
func (g *Graph) rawWriteAll(ctx context.Context, params map[string]any, stmts ...string) error {
	s := g.rawSession(ctx)
	defer s.Close(ctx)
	_, err := s.ExecuteWrite(ctx, func(tx neo4jdrv.ManagedTransaction) (any, error) {
		for _, stmt := range stmts {
			if err := run(ctx, tx, stmt, params); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	return err
}

// rawBatched runs stmt, a delete that commits as it goes (CALL IN
// TRANSACTIONS), in an auto-commit transaction, again while it fails
// transiently (a deadlock with another writer, say: what it committed
// stays, and the statement is idempotent). It returns the nodes and
// relationships deleted.
func (g *Graph) rawBatched(ctx context.Context, stmt string, params map[string]any) (int64, error) {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var n int64
		n, err = g.rawAutoCommit(ctx, stmt, params)
		if err == nil || !unavailable(err) || ctx.Err() != nil {
			return n, err
		}
		g.lg.Warn("graphiti: batched delete failed transiently; again", zap.Int("attempt", attempt+1), zap.Error(err))
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return 0, err
}

func (g *Graph) rawAutoCommit(ctx context.Context, stmt string, params map[string]any) (int64, error) {
	s := g.rawSession(ctx)
	defer s.Close(ctx)
	res, err := s.Run(ctx, stmt, params)
	if err != nil {
		return 0, err
	}
	sum, err := res.Consume(ctx)
	if err != nil {
		return 0, err
	}
	c := sum.Counters()
	return int64(c.NodesDeleted() + c.RelationshipsDeleted()), nil
}

// rawChunks runs a chunked delete (a statement returning n) until it
// deletes nothing; it returns how many it deleted.
func (g *Graph) rawChunks(ctx context.Context, stmt string, params map[string]any) (int64, error) {
	total := int64(0)
	for {
		s := g.rawSession(ctx)
		n, err := neo4jdrv.ExecuteWrite(ctx, s, func(tx neo4jdrv.ManagedTransaction) (int64, error) {
			res, err := tx.Run(ctx, stmt, params)
			if err != nil {
				return 0, err
			}
			rec, err := res.Single(ctx)
			if err != nil {
				return 0, err
			}
			v, _ := rec.Values[0].(int64)
			return v, nil
		})
		s.Close(ctx)
		if err != nil {
			return total, err
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

// openGraphiti creates the fulltext indexes graphiti-core reads and, when
// private groups are not projected, deletes what an earlier opt-in wrote.
func (g *Graph) openGraphiti(ctx context.Context) error {
	if !g.graphiti {
		return nil
	}
	for _, stmt := range graphitiSchema {
		if err := g.rawWrite(ctx, stmt, nil); err != nil && !isConstraintViolation(err) {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	if !g.graphitiPrivate {
		n := int64(0)
		for _, stmt := range []string{graphitiSweepPrivateEpisodes, graphitiSweepPrivateEntities} {
			k, err := g.rawChunks(ctx, stmt, map[string]any{"limit": int64(dropChunk)})
			if err != nil {
				return fmt.Errorf("delete private groups from the Graphiti shape: %w", err)
			}
			n += k
		}
		if n > 0 {
			g.lg.Info("graphiti: private groups removed (graphiti_private is off)", zap.Int64("nodes", n))
		}
	}
	return nil
}

// newPass is the id of a projection pass.
func newPass() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// projectGraphiti writes the Graphiti shape of the memories uuids (and of
// those whose edges end on them), read in the current slot.
func (g *Graph) projectGraphiti(ctx context.Context, uuids []string) error {
	for lo := 0; lo < len(uuids); lo += graphitiChunk {
		chunk := uuids[lo:min(lo+graphitiChunk, len(uuids))]
		recs, err := g.readRecords(ctx, graphitiRead, map[string]any{"uuids": chunk})
		if err != nil {
			return wrap("graphiti: read memories", err)
		}
		if err := g.writeGraphiti(ctx, recs, g.pass); err != nil {
			return err
		}
	}
	return nil
}

func (g *Graph) writeGraphiti(ctx context.Context, recs []*neo4jdrv.Record, pass string) error {
	rows, skipped := graphitiRows(recs, g.graphitiPrivate)
	if len(skipped) > 0 {
		if err := g.rawWrite(ctx, graphitiDelete, map[string]any{"uuids": skipped}); err != nil {
			return wrap("graphiti: delete private memories", err)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if err := g.rawWriteAll(ctx, map[string]any{"rows": rows, "pass": pass}, graphitiNodes, graphitiFacts); err != nil {
		return wrap("graphiti: write", err)
	}
	return nil
}

// readRecords runs a read query in the current slot and collects its rows.
func (g *Graph) readRecords(ctx context.Context, query string, params map[string]any) ([]*neo4jdrv.Record, error) {
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	return neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]*neo4jdrv.Record, error) {
		res, err := tx.Run(ctx, query, params)
		if err != nil {
			return nil, err
		}
		return res.Collect(ctx)
	})
}

// ReprojectGraphiti writes the Graphiti shape of every visible memory of
// the current generation afresh, then deletes every marked node and
// relationship that this pass did not write (memories gone, private
// groups without the opt-in). With the shape off it only deletes every
// marked node. Nothing unmarked is read or written. rebuild and Drop run
// it; it is idempotent.
func (g *Graph) ReprojectGraphiti(ctx context.Context) error {
	start := time.Now()
	pass := newPass()
	n := 0
	if g.graphiti {
		if err := g.openGraphiti(ctx); err != nil {
			return wrap("graphiti: schema", err)
		}
		after := ""
		for {
			recs, err := g.readRecords(ctx, graphitiPage, map[string]any{"after": after, "limit": int64(graphitiChunk)})
			if err != nil {
				return wrap("graphiti: read memories", err)
			}
			if len(recs) == 0 {
				break
			}
			if err := g.writeGraphiti(ctx, recs, pass); err != nil {
				return err
			}
			n += len(recs)
			after, _ = recs[len(recs)-1].Values[0].(string)
		}
	}
	params := map[string]any{"pass": pass, "limit": int64(dropChunk)}
	swept := int64(0)
	for _, stmt := range graphitiSweepNodes {
		n, err := g.rawBatched(ctx, stmt, params)
		if err != nil {
			return wrap("graphiti: delete stale nodes", err)
		}
		swept += n
	}
	rels, err := g.rawChunks(ctx, graphitiSweepRels, params)
	if err != nil {
		return wrap("graphiti: delete stale relationships", err)
	}
	g.lg.Info("graphiti shape reprojected", zap.Bool("on", g.graphiti), zap.Int("memories", n),
		zap.Int64("stale_nodes_and_relationships_deleted", swept), zap.Int64("stale_relationships_deleted", rels), zap.Duration("took", time.Since(start)))
	return nil
}

// graphitiAffected lists the uuids a batch's Graphiti shape depends on:
// its records and the memories they point at (a supersession changes its
// target's invalid_at; every fact's target is written in the same pass,
// which fills the memory entity graphitiFacts may have made for it).
func graphitiAffected(rows []prepared) []string {
	seen := make(map[string]struct{}, len(rows))
	var out []string
	add := func(u string) {
		if _, ok := seen[u]; !ok && u != "" {
			seen[u] = struct{}{}
			out = append(out, u)
		}
	}
	for _, p := range rows {
		add(p.uuid)
		rec := &p.mem.Record
		for _, l := range [][]string{rec.Links, rec.Supersedes, rec.ConflictsWith, rec.Supports()} {
			for _, u := range l {
				add(u)
			}
		}
	}
	return out
}
