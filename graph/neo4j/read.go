package neo4j

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// walkPage is how many memories Walk reads per transaction.
const walkPage = 1000

// dropChunk is how many nodes Drop deletes per transaction.
const dropChunk = 5000

// nodeColumns projects a Memory m into the columns toNode reads.
const nodeColumns = `
RETURN m.uuid AS uuid, m.record AS record, m.rest AS rest, m.text AS text, m.scope AS scope, m.tags AS tags,
  m.confidence AS confidence, m.max_age AS max_age, m.tier AS tier, m.session AS session, m.task AS task, m.why AS why,
  m.path AS path, m.line AS line, m.hash AS hash,
  m.group_id AS group_id, m.invalid_at AS invalid_at, m.replaced_by AS replaced_by, m.importance AS importance,
  [(m)-[:LINKS_TO]->(t) | t.uuid] AS links,
  [(m)-[:SUPERSEDES]->(t) | t.uuid] AS supersedes,
  [(m)-[:CONFLICTS_WITH]->(t) | t.uuid] AS conflicts,
  [(m)-[:MENTIONS]->(e) | e.name] AS mentions`

const (
	walkQuery = `
MATCH (m:Memory) WHERE m.uuid > $after AND m.hash IS NOT NULL
WITH m ORDER BY m.uuid LIMIT $limit` + nodeColumns

	// getQuery skips re-planning for the reason the write statements do
	// (see apply.go): a uuid seek whatever the statistics.
	getQuery = `CYPHER replan=skip
UNWIND $uuids AS u
MATCH (m:Memory {uuid: u}) WHERE m.hash IS NOT NULL` + nodeColumns

	statsQuery = `
MATCH (m:Memory) WHERE m.hash IS NOT NULL
RETURN m.agent AS agent, count(*) AS n`
)

// dropQueries delete memsync's nodes (and with them every relationship)
// a chunk at a time; memories first, so agents and entities are light by
// the time they go.
var dropQueries = []string{
	"MATCH (n:Memory) WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n",
	// :MemsyncEntity is memsync's alone (slot 1's :Entity1 too), never
	// Graphiti's :Entity (neo4j.go, ConstraintEntityKey).
	"MATCH (n:MemsyncEntity) WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n",
	"MATCH (n:Agent) WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n",
}

// Drop deletes every Memory, Entity and Agent node and their relationships,
// of both slots (generation.go), in bounded transactions, and ends any
// rebuild. The schema stays.
func (g *Graph) Drop(ctx context.Context) error {
	g.stopDropper()
	g.genMu.Lock()
	g.build = nil
	g.genMu.Unlock()
	total := int64(0)
	for _, slot := range []int{0, 1} {
		n, err := g.dropSlot(ctx, slot, nil)
		total += n
		if err != nil {
			return wrap("drop", err)
		}
	}
	// Every daemon sharing the graph compares its cursors' generation
	// with this one (memsync.Generations): a new one, written once the
	// nodes are gone, makes each re-project its journals.
	gen, err := newGeneration()
	if err != nil {
		return fmt.Errorf("neo4j: drop: %w", err)
	}
	if err := g.write(ctx, setGenerationQuery, map[string]any{"key": generationKey, "id": gen}); err != nil {
		return wrap("drop: mark generation", err)
	}
	if err := g.ReprojectGraphiti(ctx); err != nil {
		return fmt.Errorf("neo4j: drop: %w", err)
	}
	g.lg.Info("neo4j graph dropped", zap.String("identity", g.identity), zap.Int64("nodes", total), zap.String("generation", gen))
	return nil
}

// The generation marker: one node that Drop's queries leave alone.
const (
	generationKey      = "graph"
	generationQuery    = "MATCH (g:MemsyncGeneration {key: $key}) RETURN g.id AS id"
	setGenerationQuery = `MERGE (g:MemsyncGeneration {key: $key})
SET g.id = $id, g.slot = 0, g.building = null, g.build_id = null, g.dropping = null`
	generationIDEntropy = 12 // random bytes of a generation id
)

func newGeneration() (string, error) {
	b := make([]byte, generationIDEntropy)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generation id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

var _ memsync.Generations = (*Graph)(nil)

// Generation is the id the last Drop or FinishRebuild marked the graph
// with, "" before any; while this Graph builds a rebuild, the id of the
// generation it builds (memsync.Generations).
func (g *Graph) Generation(ctx context.Context) (string, error) {
	if slot, id := g.buildSlot(); slot >= 0 {
		return id, nil // the generation this Graph builds (BeginRebuild)
	}
	v, err := g.readValue(ctx, generationQuery, map[string]any{"key": generationKey})
	if err != nil {
		return "", wrap("generation", err)
	}
	id, _ := v.(string)
	return id, nil
}

// Stats counts projected memories, placeholders excluded.
func (g *Graph) Stats(ctx context.Context) (memsync.Stats, error) {
	st := memsync.Stats{ByAgent: map[string]int{}}
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	_, err := s.ExecuteRead(ctx, func(tx neo4jdrv.ManagedTransaction) (any, error) {
		st = memsync.Stats{ByAgent: map[string]int{}}
		res, err := tx.Run(ctx, statsQuery, nil)
		if err != nil {
			return nil, err
		}
		for res.Next(ctx) {
			agent, _ := res.Record().Values[0].(string)
			n, _ := res.Record().Values[1].(int64)
			st.ByAgent[agent] += int(n)
			st.Memories += int(n)
		}
		return nil, res.Err()
	})
	if err != nil {
		return memsync.Stats{}, wrap("stats", err)
	}
	return st, nil
}

// Walk calls fn for every projected memory in uuid order. It reads a page of
// memories per transaction and calls fn outside any transaction, so a slow
// fn holds nothing open; an error from fn stops the walk and is returned.
// Every page comes from one generation; if a rebuild switched the graph to
// another meanwhile, Walk returns an error wrapping memsync.ErrUnavailable
// (generation.go).
func (g *Graph) Walk(ctx context.Context, fn func(memsync.Node) error) error {
	ctx = withPin(ctx)
	if err := g.walk(ctx, fn); err != nil {
		return err
	}
	return g.stillCurrent(ctx, "walk")
}

func (g *Graph) walk(ctx context.Context, fn func(memsync.Node) error) error {
	after := ""
	for {
		page, err := g.readNodes(ctx, walkQuery, map[string]any{"after": after, "limit": int64(walkPage)})
		if err != nil {
			return wrap("walk after "+after, err)
		}
		for _, n := range page {
			if err := fn(n); err != nil {
				return err
			}
		}
		if len(page) < walkPage {
			return nil
		}
		after = page[len(page)-1].UUID
	}
}

// Get returns the projected memories among uuids, keyed by uuid.
func (g *Graph) Get(ctx context.Context, uuids []string) (map[string]memsync.Node, error) {
	out := make(map[string]memsync.Node, len(uuids))
	if len(uuids) == 0 {
		return out, nil
	}
	nodes, err := g.readNodes(ctx, getQuery, map[string]any{"uuids": uuids})
	if err != nil {
		return nil, wrap(fmt.Sprintf("get %d memories", len(uuids)), err)
	}
	for _, n := range nodes {
		out[n.UUID] = n
	}
	return out, nil
}

// incomingQuery lists the projected records naming any of $uuids through
// an edge that carries a signal, with the target and the edge's type.
const incomingQuery = `CYPHER replan=skip
UNWIND $uuids AS u
MATCH (:Memory {uuid: u})<-[r:LINKS_TO|SUPPORTS|CONFLICTS_WITH]-(m:Memory) WHERE m.hash IS NOT NULL
WITH u AS target, type(r) AS relation, m` + nodeColumns + `, target, relation`

// Incoming returns every projected record naming one of uuids through
// LINKS_TO, SUPPORTS or CONFLICTS_WITH, whatever its group. An edge to a
// uuid not projected yet lands on a placeholder that the memory fills, so
// it counts once the target arrives.
func (g *Graph) Incoming(ctx context.Context, uuids []string) ([]memsync.Reference, error) {
	if len(uuids) == 0 {
		return nil, nil
	}
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	refs, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]memsync.Reference, error) {
		res, err := tx.Run(ctx, incomingQuery, map[string]any{"uuids": uuids})
		if err != nil {
			return nil, err
		}
		var out []memsync.Reference
		for res.Next(ctx) {
			rec := res.Record()
			n, err := toNode(rec)
			if err != nil {
				return nil, err
			}
			ref := memsync.Reference{Source: n}
			if v, ok := rec.Get("target"); ok {
				ref.Target, _ = v.(string)
			}
			if v, ok := rec.Get("relation"); ok {
				ref.Relation, _ = v.(string)
			}
			out = append(out, ref)
		}
		return out, res.Err()
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("incoming of %d memories", len(uuids)), err)
	}
	return refs, nil
}

// readNodes runs a query ending in nodeColumns and decodes every row.
func (g *Graph) readNodes(ctx context.Context, query string, params map[string]any) ([]memsync.Node, error) {
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	return neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]memsync.Node, error) {
		res, err := tx.Run(ctx, query, params)
		if err != nil {
			return nil, err
		}
		var nodes []memsync.Node
		for res.Next(ctx) {
			n, err := toNode(res.Record())
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, n)
		}
		return nodes, res.Err()
	})
}

// toNode rebuilds a memsync.Node from the columns of nodeColumns. The record
// comes from rest (see apply.go) and the properties that hold the rest of
// it, so every field (unknown ones too) survives the round trip; a memory
// written before rest existed holds its whole canonical record instead.
func toNode(r *neo4jdrv.Record) (memsync.Node, error) {
	get := func(key string) any { v, _ := r.Get(key); return v }
	uuid, _ := get("uuid").(string)
	rec, err := storedRecord(get)
	if err != nil {
		return memsync.Node{}, fmt.Errorf("memory %s: stored record does not parse: %w", uuid, err)
	}
	n := memsync.Node{Memory: memsync.Memory{Record: rec}}
	n.Path, _ = get("path").(string)
	if line, ok := get("line").(int64); ok {
		n.Line = int(line)
	}
	n.Hash, _ = get("hash").(string)
	n.GroupID, _ = get("group_id").(string)
	if t, ok := get("invalid_at").(time.Time); ok {
		n.InvalidAt = t.UTC()
	}
	n.ReplacedBy, _ = get("replaced_by").(string)
	n.Importance, _ = get("importance").(float64)
	n.LinksTo = sortedStrings(get("links"))
	n.Supersedes = sortedStrings(get("supersedes"))
	n.ConflictsWith = sortedStrings(get("conflicts"))
	n.Mentions = sortedStrings(get("mentions"))
	return n, nil
}

// storedRecord reads a memory's record from the columns of nodeColumns.
func storedRecord(get func(string) any) (journal.Record, error) {
	if whole, ok := get("record").(string); ok {
		return journal.Parse([]byte(whole))
	}
	raw, _ := get("rest").(string)
	rec, err := journal.Parse([]byte(raw))
	if err != nil {
		return rec, err
	}
	str := func(key string) string { s, _ := get(key).(string); return s }
	rec.Text, rec.Scope = str("text"), journal.Scope(str("scope"))
	rec.Confidence, rec.Tier = str("confidence"), str("tier")
	rec.Session, rec.Task = str("session"), str("task")
	// Written before rest held them, these are properties of their own.
	if s, ok := get("why").(string); ok {
		rec.Why = s
	}
	if s, ok := get("max_age").(string); ok {
		rec.MaxAge = s
	}
	if tags, _ := get("tags").([]any); len(tags) > 0 {
		rec.Tags = make([]string, len(tags))
		for i, t := range tags {
			rec.Tags[i], _ = t.(string)
		}
	}
	return rec, nil
}

// sortedStrings turns a Cypher list of strings into a sorted, duplicate-free
// slice; nil when empty.
func sortedStrings(v any) []string {
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return sortedUnique(out)
}

// sortedUnique sorts out in place and drops duplicates; nil when empty.
func sortedUnique(out []string) []string {
	sort.Strings(out)
	j := 0
	for i, s := range out {
		if i == 0 || s != out[j-1] {
			out[j] = s
			j++
		}
	}
	if j == 0 {
		return nil
	}
	return out[:j]
}

// hashPage is how many (uuid, hash) pairs Hashes reads per transaction.
const hashPage = 10000

// hashesQuery pages through the memories in uuid order, reading the uuid
// index in order (no sort) and no more than the two properties.
const hashesQuery = `
MATCH (m:Memory) WHERE m.uuid > $after AND m.hash IS NOT NULL
RETURN m.uuid AS uuid, m.hash AS hash ORDER BY m.uuid LIMIT $limit`

// Hashes calls fn with the uuid and hash of every projected memory, in uuid
// order. Like Walk, it reads a page per transaction and calls fn outside
// any, from one generation; an error from fn stops it and is returned.
func (g *Graph) Hashes(ctx context.Context, fn func(uuid, hash string) error) error {
	ctx = withPin(ctx)
	if err := g.hashes(ctx, fn); err != nil {
		return err
	}
	return g.stillCurrent(ctx, "hashes")
}

func (g *Graph) hashes(ctx context.Context, fn func(uuid, hash string) error) error {
	after := ""
	for {
		page, err := g.readHashes(ctx, after)
		if err != nil {
			return wrap("hashes after "+after, err)
		}
		for _, p := range page {
			if err := fn(p[0], p[1]); err != nil {
				return err
			}
		}
		if len(page) < hashPage {
			return nil
		}
		after = page[len(page)-1][0]
	}
}

func (g *Graph) readHashes(ctx context.Context, after string) ([][2]string, error) {
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	defer s.Close(ctx)
	return neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([][2]string, error) {
		res, err := tx.Run(ctx, hashesQuery, map[string]any{"after": after, "limit": int64(hashPage)})
		if err != nil {
			return nil, err
		}
		page := make([][2]string, 0, hashPage)
		for res.Next(ctx) {
			v := res.Record().Values
			uuid, _ := v[0].(string)
			hash, _ := v[1].(string)
			page = append(page, [2]string{uuid, hash})
		}
		return page, res.Err()
	})
}
