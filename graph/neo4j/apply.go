package neo4j

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/analysis"
)

// maxChunk is the most records written in one transaction: larger batches
// are split, which is safe because every write is idempotent.
const maxChunk = 5000

// Statements of the write path. Each takes list parameters and UNWINDs
// them, so one round trip handles a whole chunk; every value travels in
// one map parameter, $p (see one).
//
// Each starts with CYPHER replan=skip: every lookup in them is a seek on a
// uniqueness constraint, a plan that no statistic changes, while the
// planner would otherwise re-plan them again and again as a fresh or
// emptied graph grows, stalling a write for ~100 ms each time. Measured
// (append → visible at 500 records/s, warm server, back-to-back runs):
// p99 674–1,235 ms without, 155–475 ms with. A schema change still
// invalidates the cached plans.
const (
	// lookupMemories returns the memories of the chunk that exist, with
	// their hash (null for a placeholder).
	lookupMemories = `CYPHER replan=skip
UNWIND $p.uuids AS u
MATCH (m:Memory {uuid: u})
RETURN u AS uuid, m.hash AS hash, m.scope AS scope, m.ts AS ts, m.agent AS agent, m.path AS path, m.line AS line`

	// replaceMemories puts a version that won its uuid (journal.ClashWins)
	// in place of the stored one: the memory keeps its node, loses its
	// outgoing relationships (createEdges adds the new version's) and all
	// its properties, and gets the new ones, its author and its mentions.
	// It returns the uuids the old version pointed at, whose supersession
	// (reretire) and placeholders (dropOrphans) may have changed.
	replaceMemories = `CYPHER replan=skip
UNWIND $p.rows AS r
MATCH (m:Memory {uuid: r.props.uuid})
CALL {
  WITH m
  OPTIONAL MATCH (m)-[e:LINKS_TO|SUPERSEDES|CONFLICTS_WITH|SUPPORTS]->(t)
  WITH e, t.uuid AS target
  DELETE e
  RETURN collect(DISTINCT target) AS targets
}
CALL {
  WITH m
  MATCH (m)-[x:MENTIONS]->()
  DELETE x
}
CALL {
  WITH m
  MATCH ()-[w:WROTE]->(m)
  DELETE w
}
SET m = r.props
WITH m, r, targets
MERGE (a:Agent {name: r.agent})
CREATE (a)-[:WROTE]->(m)
WITH m, r, targets
CALL {
  WITH m, r
  UNWIND r.ents AS name
  MERGE (e:MemsyncEntity {group_id: r.group, name: name})
  CREATE (m)-[:MENTIONS]->(e)
}
RETURN targets`

	// superseders lists, for each projected memory of $p.uuids, its group,
	// its stored retirement and every record superseding it, for
	// retireAll to judge with journal.Retires.
	superseders = `CYPHER replan=skip
UNWIND $p.uuids AS u
MATCH (m:Memory {uuid: u}) WHERE m.hash IS NOT NULL
OPTIONAL MATCH (s:Memory)-[:SUPERSEDES]->(m) WHERE s.hash IS NOT NULL
WITH m, collect(s) AS ss
RETURN m.uuid, m.group_id, m.invalid_at, m.replaced_by, [s IN ss | [s.ts, s.uuid, s.agent, s.group_id]]`

	// setRetired writes the retirements retireAll decided (a null ts and
	// uuid clear one).
	setRetired = `CYPHER replan=skip
UNWIND $p.rows AS r
MATCH (m:Memory {uuid: r.uuid})
SET m.invalid_at = r.ts, m.replaced_by = r.by`

	// dropOrphans deletes the placeholders among $p.uuids that no edge
	// points at any more (a replaced version's targets).
	dropOrphans = `CYPHER replan=skip
UNWIND $p.uuids AS u
MATCH (m:Memory {uuid: u}) WHERE m.hash IS NULL AND NOT (m)--()
DELETE m`

	// createMemories merges the chunk's agents and entities once each, then
	// creates the memories the lookup did not find and fills the
	// placeholders it found (nodes that edges of earlier records created,
	// with no properties but the uuid and no edges of their own yet), each
	// with its WROTE and MENTIONS edges, and last the outgoing edges of
	// all of them. Rows name their agent and entities by position in
	// $p.agents and $p.entities, and edges their source by position among
	// the memories written ($p.rows, then $p.filled), so no row looks a node up
	// again: on a rebuild that reads agent after agent, most links point to
	// another agent's record not read yet, and many memories fill a
	// placeholder. An edge's target not projected yet becomes a
	// placeholder; the edges come after every memory of the chunk, so a
	// target in the chunk is found, not doubled. CREATE, not MERGE: a
	// concurrent writer that created one of these uuids since the lookup
	// makes the statement fail on the uniqueness constraint, and the chunk
	// is classified again (errRaced). The hash guard keeps a placeholder
	// that a concurrent writer filled since the lookup: the statement
	// returns how many it filled (no edge is made then), and a shortfall
	// sends the chunk round again too. It also returns the filled
	// placeholders that a record supersedes: only their retirement can
	// have changed.
	createMemories = `CYPHER replan=skip
CALL {
  UNWIND range(0, size($p.agents) - 1) AS i
  MERGE (a:Agent {name: $p.agents[i]})
  WITH i, a ORDER BY i
  RETURN collect(a) AS agents
}
CALL {
  UNWIND range(0, size($p.entities) - 1) AS i
  MERGE (e:MemsyncEntity {group_id: $p.entities[i][0], name: $p.entities[i][1]})
  WITH i, e ORDER BY i
  RETURN collect(e) AS entities
}
CALL {
  WITH agents, entities
  UNWIND range(0, size($p.rows) - 1) AS i
  WITH agents[$p.rows[i].agent] AS a, entities, i, $p.rows[i] AS r
  CREATE (a)-[:WROTE]->(m:Memory)
  SET m = r.props
  WITH entities, i, m, r
  CALL {
    WITH entities, m, r
    UNWIND r.ents AS j
    WITH m, entities[j] AS e
    CREATE (m)-[:MENTIONS]->(e)
  }
  WITH i, m ORDER BY i
  RETURN collect(m) AS created
}
CALL {
  WITH agents, entities
  UNWIND range(0, size($p.filled) - 1) AS i
  WITH agents, entities, i, $p.filled[i] AS r
  MERGE (m:Memory {uuid: r.props.uuid})
  WITH agents, entities, i, m, r WHERE m.hash IS NULL
  SET m += r.props
  WITH agents[r.agent] AS a, entities, i, m, r
  CREATE (a)-[:WROTE]->(m)
  WITH entities, i, m, r
  CALL {
    WITH entities, m, r
    UNWIND r.ents AS j
    WITH m, entities[j] AS e
    CREATE (m)-[:MENTIONS]->(e)
  }
  WITH i, m ORDER BY i
  RETURN collect(m) AS filled,
    [x IN collect(CASE WHEN EXISTS { (m)<-[:SUPERSEDES]-() } THEN m.uuid END) WHERE x IS NOT NULL] AS superseded
}
WITH created + filled AS nodes, size(filled) AS n, superseded
CALL {
  WITH nodes, n
  WITH nodes WHERE n = size($p.filled)
  UNWIND $p.links AS r
  WITH nodes[r[0]] AS a, r[1] AS u
  MERGE (b:Memory {uuid: u})
  CREATE (a)-[:LINKS_TO]->(b)
}
CALL {
  WITH nodes, n
  WITH nodes WHERE n = size($p.filled)
  UNWIND $p.supersedes AS r
  WITH nodes[r[0]] AS a, r[1] AS u
  MERGE (b:Memory {uuid: u})
  CREATE (a)-[:SUPERSEDES]->(b)
}
CALL {
  WITH nodes, n
  WITH nodes WHERE n = size($p.filled)
  UNWIND $p.conflicts AS r
  WITH nodes[r[0]] AS a, r[1] AS u
  MERGE (b:Memory {uuid: u})
  CREATE (a)-[:CONFLICTS_WITH]->(b)
}
CALL {
  WITH nodes, n
  WITH nodes WHERE n = size($p.filled)
  UNWIND $p.supports AS r
  WITH nodes[r[0]] AS a, r[1] AS u
  MERGE (b:Memory {uuid: u})
  CREATE (a)-[:SUPPORTS]->(b)
}
RETURN n AS filled, superseded`

	// createEdges adds the outgoing edges of the memories a chunk replaced
	// (replaceMemories deleted their old ones), so each edge is created,
	// not merged; a target not projected yet becomes a placeholder. Rows
	// are [from, to], duplicate-free.
	createEdges = `CYPHER replan=skip
CALL {
  UNWIND $p.links AS r
  MATCH (a:Memory {uuid: r[0]})
  MERGE (b:Memory {uuid: r[1]})
  CREATE (a)-[:LINKS_TO]->(b)
}
CALL {
  UNWIND $p.supersedes AS r
  MATCH (a:Memory {uuid: r[0]})
  MERGE (b:Memory {uuid: r[1]})
  CREATE (a)-[:SUPERSEDES]->(b)
}
CALL {
  UNWIND $p.conflicts AS r
  MATCH (a:Memory {uuid: r[0]})
  MERGE (b:Memory {uuid: r[1]})
  CREATE (a)-[:CONFLICTS_WITH]->(b)
}
CALL {
  UNWIND $p.supports AS r
  MATCH (a:Memory {uuid: r[0]})
  MERGE (b:Memory {uuid: r[1]})
  CREATE (a)-[:SUPPORTS]->(b)
}`
)

// one wraps a write statement's values in its one parameter, $p.
//
// The server caches a statement's plan per shape of its parameters: the
// size of each list or string parameter, in buckets (empty, 1, 2–10,
// 11–100, …), and the types of a list's elements are part of the cache
// key, while a map parameter is one shape whatever it holds. With its
// eight list parameters given separately, createMemories was planned
// again for each combination of empty, one and several links, entities,
// filled placeholders… that a batch happened to have: a run of one-record
// transactions (the daemon's small batches, the naive baseline) kept
// compiling new plans of it, about 40 plans of the write path where one
// per statement is enough (TestApplyPlansOnePerStatement). No plan of these
// statements depends on the sizes: every lookup is a seek on a uniqueness
// constraint.
func one(values map[string]any) map[string]any { return map[string]any{"p": values} }

var _ memsync.ReadOrderer = (*Graph)(nil)

// ReadOrder asks the engine for journals agent after agent: a transaction
// then mostly writes WROTE edges of one agent, where day by day across 40
// agents every transaction touches all 40 agents' relationship chains
// (200,000 records: 57.9 s and 81 server CPU-s day by day, 48.8 s and 68
// agent after agent).
func (g *Graph) ReadOrder() memsync.ReadOrder { return memsync.ByAgent }

// prepared is one record ready to be written.
type prepared struct {
	mem   *memsync.Memory
	uuid  string
	hash  string
	group string
	props map[string]any
	ents  []string
	err   error // the record is invalid; nothing else is set
}

func prepare(m *memsync.Memory) prepared {
	rec := &m.Record
	_, hash := m.CanonicalHash()
	group := rec.GroupID()
	ents := rec.AllEntities()
	props := map[string]any{
		"uuid":       rec.UUID,
		"ts":         rec.TS.UTC(),
		"valid_at":   rec.TS.UTC(),
		"agent":      rec.Agent,
		"scope":      string(rec.Scope),
		"group_id":   group,
		"kind":       string(rec.Kind),
		"text":       rec.Text,
		"path":       m.Path,
		"line":       int64(m.Line),
		"importance": 0.5,
		"hash":       hash,
		"rest":       rest(rec),
	}
	optional := map[string]string{
		"confidence": rec.Confidence,
		"tier":       rec.Tier,
		"session":    rec.Session,
		"task":       rec.Task,
	}
	for k, v := range optional {
		if v != "" {
			props[k] = v
		}
	}
	setTerms(props, rec)
	return prepared{mem: m, uuid: rec.UUID, hash: hash, group: group, props: props, ents: ents}
}

// rest is the canonical encoding of what the other properties of a memory
// do not hold (refs, entities, links, supersedes, conflicts_with, source,
// tags, why, max_age and unknown fields), with uuid, ts, agent and kind,
// which Parse needs (without a uuid it would derive one), and a
// one-character stand-in for the text that Parse requires.
// Storing the whole record again beside its properties repeated the text
// and every field: about 380 bytes a memory that the server unpacked, set
// and logged for nothing. toNode puts the record back together.
//
// A field is a property of its own only when a read filters on it or SPEC
// §4 names it (scope, confidence, tier, session, task, the text); tags,
// why, max_age and the source's type and actor, which no statement reads
// apart from the record, live in rest only: each property costs the
// server a property record to write and log (issue 30; memories written
// before hold them as properties too, which storedRecord still reads).
func rest(rec *journal.Record) string {
	r := *rec
	r.Scope, r.Text = "", restText
	r.Confidence, r.Tier, r.Session, r.Task = "", "", "", ""
	return string(r.Canonical())
}

// restText stands in for the text in rest.
const restText = "."

// prepareSpan is the fewest records worth a goroutine of their own in
// prepareAll: below it, starting one costs more than it saves.
const prepareSpan = 128

// prepareAll validates and prepares every record of batch, in batch order,
// spreading the work over the CPUs: encoding and hashing the records is most
// of the client's time, and the server waits for it.
func (g *Graph) prepareAll(batch []memsync.Memory) []prepared {
	out := make([]prepared, len(batch))
	prep := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			m := &batch[i]
			if err := m.Record.Validate(); err != nil || m.UUID == "" {
				if err == nil {
					err = errors.New("record has no uuid")
				}
				out[i] = prepared{err: err}
				continue
			}
			out[i] = prepare(m)
			g.vectorProps(out[i].props, m.Text)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(batch)/prepareSpan)
	if workers <= 1 {
		prep(0, len(batch))
		return out
	}
	var wg sync.WaitGroup
	per := (len(batch) + workers - 1) / workers
	for lo := 0; lo < len(batch); lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			prep(lo, hi)
		}(lo, min(lo+per, len(batch)))
	}
	wg.Wait()
	return out
}

// Apply projects batch idempotently. Records are validated first; an invalid
// one is skipped and reported as a *memsync.RecordError after the rest of the
// batch is written. A uuid already projected with other content, or repeated
// in the batch with other content, is listed in Mismatched, and the graph
// keeps the version journal.ClashWins prefers: a record of the batch that
// wins replaces the stored memory (listed in Displaced). An error wrapping memsync.ErrUnavailable means the batch (or
// part of it) was not written and may be retried as a whole.
func (g *Graph) Apply(ctx context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	start := time.Now()
	var res memsync.ApplyResult
	var firstBad error
	seen := make(map[string]int, len(batch)) // uuid -> its row: the version the rule prefers so far
	rows := make([]prepared, 0, len(batch))
	for i, p := range g.prepareAll(batch) {
		if p.err != nil {
			if firstBad == nil {
				m := &batch[i]
				firstBad = &memsync.RecordError{UUID: m.UUID, Err: fmt.Errorf("invalid record (%s:%d): %w", m.Path, m.Line, p.err)}
			}
			continue
		}
		if j, ok := seen[p.uuid]; ok {
			if o := &rows[j]; o.hash != p.hash {
				res.Mismatched = append(res.Mismatched, p.uuid)
				if journal.ClashWins(journal.VersionOf(&p.mem.Record, p.hash), journal.VersionOf(&o.mem.Record, o.hash)) {
					rows[j] = p
				}
			}
			continue
		}
		seen[p.uuid] = len(rows)
		rows = append(rows, p)
	}
	for start := 0; start < len(rows); start += maxChunk {
		end := min(start+maxChunk, len(rows))
		done, err := g.applyLocating(ctx, rows[start:end])
		res.Mismatched = append(res.Mismatched, done.mismatched...)
		res.Displaced = append(res.Displaced, done.displaced...)
		if err != nil {
			var re *memsync.RecordError
			if !errors.As(err, &re) {
				return res, err
			}
			if firstBad == nil {
				firstBad = err
			}
		}
	}
	res.Mismatched = sortedUnique(res.Mismatched)
	if slot, _ := g.buildSlot(); g.graphiti && slot < 0 {
		// A rebuild projects the Graphiti shape once, at FinishRebuild.
		// Unavailable: the batch is retried as a whole (Apply is
		// idempotent). Any other failure of the derived shape (a
		// constraint a Graphiti user added, say) must not stop memsync's
		// own projection: it is logged, and a rebuild writes the shape
		// afresh.
		if err := g.projectGraphiti(ctx, graphitiAffected(rows)); errors.Is(err, memsync.ErrUnavailable) {
			return res, err
		} else if err != nil {
			g.lg.Error("graphiti shape not written for this batch; memsync's projection is; memsync rebuild writes it again", zap.Error(err))
		}
	}
	g.lg.Debug("applied batch", zap.Int("records", len(batch)), zap.Int("mismatched", len(res.Mismatched)),
		zap.Duration("took", time.Since(start)))
	if len(res.Mismatched) > 0 {
		g.lg.Warn("records conflict with projected ones of the same uuid", zap.Strings("uuids", res.Mismatched))
	}
	return res, firstBad
}

// applyLocating writes rows in one transaction; if that fails for good
// (not for unavailability), it bisects to find the record at fault, writing
// everything else, and returns a *memsync.RecordError naming it.
func (g *Graph) applyLocating(ctx context.Context, rows []prepared) (chunkResult, error) {
	done, err := g.applyChunk(ctx, rows)
	if err == nil {
		return done, nil
	}
	if unavailable(err) || ctx.Err() != nil {
		return chunkResult{}, wrap(fmt.Sprintf("apply %d records", len(rows)), err)
	}
	if len(rows) == 1 {
		m := rows[0].mem
		g.lg.Error("record refused by neo4j", zap.String("uuid", m.UUID), zap.String("path", m.Path), zap.Int("line", m.Line), zap.Error(err))
		return chunkResult{}, &memsync.RecordError{UUID: m.UUID, Err: wrap(fmt.Sprintf("project %s:%d", m.Path, m.Line), err)}
	}
	g.lg.Warn("batch refused; bisecting to find the record at fault", zap.Int("records", len(rows)), zap.Error(err))
	half := len(rows) / 2
	var firstBad error
	done = chunkResult{}
	for _, part := range [][]prepared{rows[:half], rows[half:]} {
		d, err := g.applyLocating(ctx, part)
		done.mismatched = append(done.mismatched, d.mismatched...)
		done.displaced = append(done.displaced, d.displaced...)
		if err != nil {
			var re *memsync.RecordError
			if !errors.As(err, &re) {
				return done, err
			}
			if firstBad == nil {
				firstBad = err
			}
		}
	}
	return done, firstBad
}

// chunkResult is what writing a chunk did besides writing it: the uuids
// that clashed, and the stored memories a version of the chunk replaced.
type chunkResult struct {
	mismatched []string
	displaced  []memsync.Memory
}

// errRaced means a concurrent writer projected some uuid of the chunk
// between its lookup and its write; the chunk is classified again.
var errRaced = errors.New("a concurrent writer projected part of the chunk")

// applyChunk writes rows in one managed transaction and says which uuids
// were already projected with a different hash, and which of those it
// replaced.
//
// While this Graph builds a rebuild, a uuid the build has not written is
// not looked up: it is new to the slot (build.maybeWritten). A chunk that
// races anyway (errRaced: the slot held a uuid after all, e.g. a rebuild
// of another process took the slot over) is classified again with every
// uuid looked up.
func (g *Graph) applyChunk(ctx context.Context, rows []prepared) (chunkResult, error) {
	b := g.currentBuild()
	var s neo4jdrv.SessionWithContext
	if b != nil {
		s = g.sessionSlot(ctx, neo4jdrv.AccessModeWrite, b.slot)
	} else {
		s = g.session(ctx, neo4jdrv.AccessModeWrite)
	}
	defer s.Close(ctx)
	mayExist := b.maybeWritten
	for attempt := 0; ; attempt++ {
		done, err := neo4jdrv.ExecuteWrite(ctx, s, func(tx neo4jdrv.ManagedTransaction) (chunkResult, error) {
			return writeChunk(ctx, tx, rows, mayExist)
		})
		if errors.Is(err, errRaced) && attempt < 3 {
			mayExist = nil
			continue
		}
		if err == nil && b != nil {
			b.wrote(writtenUUIDs(rows))
		}
		return done, err
	}
}

// writtenUUIDs lists the uuids a chunk of rows may leave in the slot:
// the records' own and their edges' targets (placeholders).
func writtenUUIDs(rows []prepared) []string {
	out := make([]string, 0, 2*len(rows))
	for _, p := range rows {
		rec := &p.mem.Record
		out = append(out, p.uuid)
		out = append(out, rec.Links...)
		out = append(out, rec.Supersedes...)
		out = append(out, rec.ConflictsWith...)
		out = append(out, rec.Supports()...)
	}
	return out
}

// storedVersion is what lookupMemories returned for a projected memory.
type storedVersion struct {
	version journal.Version
	agent   string
	path    string
	line    int
}

// writeChunk is the body of applyChunk's transaction: nodes with their
// WROTE and MENTIONS edges first, then the other relationships, then the
// retirement of superseded memories.
// Only the uuids for which mayExist says so (nil: all) are looked up.
func writeChunk(ctx context.Context, tx neo4jdrv.ManagedTransaction, rows []prepared, mayExist func(string) bool) (chunkResult, error) {
	uuids := make([]string, 0, len(rows))
	for _, p := range rows {
		if mayExist == nil || mayExist(p.uuid) {
			uuids = append(uuids, p.uuid)
		}
	}
	var done chunkResult
	existing := map[string]*storedVersion{} // nil for a placeholder
	var res neo4jdrv.ResultWithContext
	var err error
	if len(uuids) > 0 {
		res, err = tx.Run(ctx, lookupMemories, one(map[string]any{"uuids": uuids}))
		if err != nil {
			return done, err
		}
	}
	for res != nil && res.Next(ctx) {
		rec := res.Record()
		u, _ := rec.Values[0].(string)
		h, ok := rec.Values[1].(string)
		if !ok {
			existing[u] = nil
			continue
		}
		scope, _ := rec.Values[2].(string)
		ts, _ := rec.Values[3].(time.Time)
		agent, _ := rec.Values[4].(string)
		path, _ := rec.Values[5].(string)
		line, _ := rec.Values[6].(int64)
		existing[u] = &storedVersion{version: journal.Version{Scope: journal.Scope(scope), TS: ts, Hash: h},
			agent: agent, path: path, line: int(line)}
	}
	if res != nil {
		if err := res.Err(); err != nil {
			return done, err
		}
	}
	var (
		created, filled, replaced []any
		links, supers, conflicts  []any // of the replaced versions
		supports                  []any
		written                   []*prepared // created, then filled: their position names an edge's source
		nFilled                   int
		retired                   []string
		agents                    = map[string]int64{} // name -> position in agentList
		agentList                 []string
		entities                  = map[[2]string]int64{} // (group, name) -> position in entityList
		entityList                []any
	)
	for k := range rows {
		p := &rows[k]
		old, found := existing[p.uuid]
		if old != nil {
			if old.version.Hash == p.hash {
				continue
			}
			done.mismatched = append(done.mismatched, p.uuid)
			if !journal.ClashWins(journal.VersionOf(&p.mem.Record, p.hash), old.version) {
				continue
			}
			var d memsync.Memory
			d.UUID, d.Agent, d.Path, d.Line = p.uuid, old.agent, old.path, old.line
			done.displaced = append(done.displaced, d)
			replaced = append(replaced, map[string]any{"agent": p.mem.Agent, "group": p.group, "props": p.props, "ents": nonNilStrings(p.ents)})
			rec := &p.mem.Record
			links = appendEdges(links, p.uuid, rec.Links)
			supers = appendEdges(supers, p.uuid, rec.Supersedes)
			conflicts = appendEdges(conflicts, p.uuid, rec.ConflictsWith)
			retired = append(retired, rec.Supersedes...)
			continue
		}
		agent, ok := agents[p.mem.Agent]
		if !ok {
			agent = int64(len(agentList))
			agents[p.mem.Agent] = agent
			agentList = append(agentList, p.mem.Agent)
		}
		ents := make([]int64, len(p.ents))
		for i, e := range p.ents {
			key := [2]string{p.group, e}
			n, ok := entities[key]
			if !ok {
				n = int64(len(entityList))
				entities[key] = n
				entityList = append(entityList, []any{p.group, e})
			}
			ents[i] = n
		}
		row := map[string]any{"agent": agent, "props": p.props, "ents": ents}
		if found {
			// A placeholder: superseders may have come first (the
			// statement says which).
			filled = append(filled, row)
			nFilled++
		} else {
			created = append(created, row)
		}
		retired = append(retired, p.mem.Record.Supersedes...)
	}
	// Edges name their source by position: created rows, then filled ones.
	for _, p := range rows {
		if old, found := existing[p.uuid]; old == nil && !found {
			written = append(written, &p)
		}
	}
	for _, p := range rows {
		if old, found := existing[p.uuid]; old == nil && found {
			written = append(written, &p)
		}
	}
	var wLinks, wSupers, wConflicts, wSupports []any
	for i, p := range written {
		rec := &p.mem.Record
		wLinks = appendEdgesAt(wLinks, int64(i), rec.Links)
		wSupers = appendEdgesAt(wSupers, int64(i), rec.Supersedes)
		wConflicts = appendEdgesAt(wConflicts, int64(i), rec.ConflictsWith)
		wSupports = appendEdgesAt(wSupports, int64(i), rec.Supports())
	}
	if len(agentList) == 0 && len(replaced) == 0 {
		return done, nil
	}
	if len(agentList) > 0 {
		res, err = tx.Run(ctx, createMemories, one(map[string]any{"agents": agentList, "entities": nonNil(entityList),
			"rows": nonNil(created), "filled": nonNil(filled),
			"links": nonNil(wLinks), "supersedes": nonNil(wSupers), "conflicts": nonNil(wConflicts), "supports": nonNil(wSupports)}))
		var counts *neo4jdrv.Record
		if err == nil {
			counts, err = res.Single(ctx)
		}
		if isConstraintViolation(err) {
			return chunkResult{}, errRaced
		}
		if err != nil {
			return chunkResult{}, err
		}
		if n, _ := counts.Values[0].(int64); n != int64(nFilled) {
			return chunkResult{}, errRaced
		}
		sup, _ := counts.Values[1].([]any)
		for _, u := range sup {
			if s, ok := u.(string); ok {
				retired = append(retired, s)
			}
		}
	}
	// The uuids a replaced version pointed at: their supersession and
	// placeholders are looked at again once the new edges are in.
	var oldTargets []string
	if len(replaced) > 0 {
		res, err := tx.Run(ctx, replaceMemories, one(map[string]any{"rows": replaced}))
		if err != nil {
			return chunkResult{}, err
		}
		n := 0
		for ; res.Next(ctx); n++ {
			ts, _ := res.Record().Values[0].([]any)
			for _, t := range ts {
				if u, ok := t.(string); ok {
					oldTargets = append(oldTargets, u)
				}
			}
		}
		if err := res.Err(); err != nil {
			return chunkResult{}, err
		}
		if n != len(replaced) {
			return chunkResult{}, errRaced
		}
	}
	if len(links)+len(supers)+len(conflicts)+len(supports) > 0 {
		err := run(ctx, tx, createEdges, one(map[string]any{"links": nonNil(links), "supersedes": nonNil(supers),
			"conflicts": nonNil(conflicts), "supports": nonNil(supports)}))
		if err != nil {
			return chunkResult{}, err
		}
	}
	if retired = sortedUnique(retired); len(retired) > 0 {
		if err := retireAll(ctx, tx, retired); err != nil {
			return chunkResult{}, err
		}
	}
	if len(replaced) > 0 {
		again := sortedUnique(append(slices.Clone(oldTargets), done.replacedUUIDs()...))
		if err := retireAll(ctx, tx, again); err != nil {
			return chunkResult{}, err
		}
		if len(oldTargets) > 0 {
			if err := run(ctx, tx, dropOrphans, one(map[string]any{"uuids": sortedUnique(oldTargets)})); err != nil {
				return chunkResult{}, err
			}
		}
	}
	return done, nil
}

// retireAll recomputes invalid_at and replaced_by of the projected memories
// among uuids from every record superseding them: of those that retire the
// memory (journal.Retires: the store keeps every SUPERSEDES edge, the rule
// decides which take effect), the first by journal.RetiresFirst wins (the
// earliest ts, the smallest uuid on a tie); none clears them. The rule runs
// here in Go rather than as a Cypher ORDER BY, so it is the journal's. Only memories whose retirement changes are written.
func retireAll(ctx context.Context, tx neo4jdrv.ManagedTransaction, uuids []string) error {
	res, err := tx.Run(ctx, superseders, one(map[string]any{"uuids": uuids}))
	if err != nil {
		return err
	}
	var rows []any
	for res.Next(ctx) {
		v := res.Record().Values
		uuid, _ := v[0].(string)
		group, _ := v[1].(string)
		oldBy, _ := v[3].(string)
		var at time.Time
		by := ""
		ss, _ := v[4].([]any)
		for _, x := range ss {
			s, _ := x.([]any)
			if len(s) != 4 {
				continue
			}
			ts, _ := s[0].(time.Time)
			su, _ := s[1].(string)
			agent, _ := s[2].(string)
			sg, _ := s[3].(string)
			if !journal.Retires(agent, sg, group) {
				continue
			}
			if journal.RetiresFirst(ts, su, at, by) {
				at, by = ts, su
			}
		}
		oldAt, _ := v[2].(time.Time)
		if by == oldBy && (by == "" || at.Equal(oldAt)) {
			continue
		}
		row := map[string]any{"uuid": uuid, "ts": nil, "by": nil}
		if by != "" {
			row["ts"], row["by"] = at.UTC(), by
		}
		rows = append(rows, row)
	}
	if err := res.Err(); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	return run(ctx, tx, setRetired, one(map[string]any{"rows": rows}))
}

// replacedUUIDs are the uuids whose stored version the chunk replaced.
func (d chunkResult) replacedUUIDs() []string {
	out := make([]string, len(d.displaced))
	for i, m := range d.displaced {
		out[i] = m.UUID
	}
	return out
}

// nonNilStrings makes an empty list a Cypher list rather than null.
func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// appendEdges appends a [from, to] row for each distinct target.
func appendEdges(rows []any, from string, targets []string) []any {
	for i, t := range targets {
		if !slices.Contains(targets[:i], t) {
			rows = append(rows, []any{from, t})
		}
	}
	return rows
}

// appendEdgesAt appends a [position, to] row for each distinct target.
func appendEdgesAt(rows []any, from int64, targets []string) []any {
	for i, t := range targets {
		if !slices.Contains(targets[:i], t) {
			rows = append(rows, []any{from, t})
		}
	}
	return rows
}

// nonNil makes an empty list a Cypher list rather than null.
func nonNil(rows []any) []any {
	if rows == nil {
		return []any{}
	}
	return rows
}

// isConstraintViolation reports whether err is a uniqueness constraint
// refusing a node: the only one a chunk can break is the memory uuid's,
// when a concurrent writer created it first.
func isConstraintViolation(err error) bool {
	var ne *neo4jdrv.Neo4jError
	return errors.As(err, &ne) && ne.Code == "Neo.ClientError.Schema.ConstraintValidationFailed"
}

func run(ctx context.Context, tx neo4jdrv.ManagedTransaction, stmt string, params map[string]any) error {
	res, err := tx.Run(ctx, stmt, params)
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	return err
}

// setTerms sets what the fulltext index reads: terms, the analyzed text,
// and keywords, the analyzed tags and entities (what the text does not say).
// Both are package analysis's terms, space-separated, for the index's
// whitespace analyzer, so that the index splits them as every other
// search path does.
func setTerms(props map[string]any, rec *journal.Record) {
	props["terms"] = analysis.Text(rec.Text)
	if kw := analysis.Text(strings.Join(append(append([]string(nil), rec.Tags...), rec.Entities...), " ")); kw != "" {
		props["keywords"] = kw
	}
}
