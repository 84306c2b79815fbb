package neo4j

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

// maxChunk is the most records written in one transaction: larger batches
// are split, which is safe because every write is idempotent.
const maxChunk = 5000

// Statements of the write path. Each takes a list parameter and UNWINDs it,
// so one round trip handles a whole chunk.
const (
	// lookupMemories returns the memories of the chunk that exist, with
	// their hash (null for a placeholder).
	lookupMemories = `
UNWIND $uuids AS u
MATCH (m:Memory {uuid: u})
RETURN u AS uuid, m.hash AS hash`

	// fillMemories writes new memories and fills placeholders. The hash
	// guard keeps a memory that a concurrent writer created since the
	// lookup: the rows it skips are counted and the chunk is looked up again.
	fillMemories = `
UNWIND $rows AS r
MERGE (m:Memory {uuid: r.uuid})
WITH m, r WHERE m.hash IS NULL
SET m += r.props
RETURN count(*) AS n`

	mergeAgents = `
UNWIND $agents AS name
MERGE (:Agent {name: name})`

	mergeWrote = `
UNWIND $rows AS r
MATCH (m:Memory {uuid: r.uuid})
MATCH (a:Agent {name: r.agent})
MERGE (a)-[:WROTE]->(m)`

	mergeMentions = `
UNWIND $rows AS r
MATCH (m:Memory {uuid: r.uuid})
MERGE (e:Entity {group_id: r.group_id, name: r.name})
MERGE (m)-[:MENTIONS]->(e)`

	mergeLinks = `
UNWIND $rows AS r
MATCH (a:Memory {uuid: r.from})
MERGE (b:Memory {uuid: r.to})
MERGE (a)-[:LINKS_TO]->(b)`

	mergeSupersedes = `
UNWIND $rows AS r
MATCH (a:Memory {uuid: r.from})
MERGE (b:Memory {uuid: r.to})
MERGE (a)-[:SUPERSEDES]->(b)`

	mergeConflicts = `
UNWIND $rows AS r
MATCH (a:Memory {uuid: r.from})
MERGE (b:Memory {uuid: r.to})
MERGE (a)-[:CONFLICTS_WITH]->(b)`

	// retire recomputes invalid_at/replaced_by of projected memories from
	// every record superseding them: the earliest ts wins, the smallest
	// uuid on a tie. Superseders are never removed, so a retirement only
	// ever moves earlier; rows that would not change are not written.
	retire = `
UNWIND $uuids AS u
MATCH (m:Memory {uuid: u}) WHERE m.hash IS NOT NULL
MATCH (s:Memory)-[:SUPERSEDES]->(m)
WITH m, collect(s) AS ss
WITH m, reduce(best = null, s IN ss |
  CASE WHEN best IS NULL OR s.ts < best.ts OR (s.ts = best.ts AND s.uuid < best.uuid) THEN s ELSE best END) AS first
WHERE m.replaced_by IS NULL OR m.replaced_by <> first.uuid
SET m.invalid_at = first.ts, m.replaced_by = first.uuid`
)

// prepared is one record ready to be written.
type prepared struct {
	mem   *memsync.Memory
	uuid  string
	hash  string
	group string
	props map[string]any
	ents  []string
}

func prepare(m *memsync.Memory) prepared {
	rec := &m.Record
	hash := rec.Hash()
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
		"record":     string(rec.Canonical()),
	}
	optional := map[string]string{
		"confidence": rec.Confidence,
		"max_age":    rec.MaxAge,
		"tier":       rec.Tier,
		"session":    rec.Session,
		"task":       rec.Task,
		"why":        rec.Why,
	}
	for k, v := range optional {
		if v != "" {
			props[k] = v
		}
	}
	if rec.Source != nil {
		for k, v := range map[string]string{"source_type": rec.Source.Type, "source_actor": rec.Source.Actor} {
			if v != "" {
				props[k] = v
			}
		}
	}
	if len(rec.Tags) > 0 {
		props["tags"] = rec.Tags
	}
	// keywords feeds the fulltext index with what the text does not say.
	if kw := strings.TrimSpace(strings.Join(append(append([]string(nil), rec.Tags...), rec.Entities...), " ")); kw != "" {
		props["keywords"] = kw
	}
	return prepared{mem: m, uuid: rec.UUID, hash: hash, group: group, props: props, ents: ents}
}

// Apply projects batch idempotently. Records are validated first; an invalid
// one is skipped and reported as a *memsync.RecordError after the rest of the
// batch is written. A uuid already projected with other content, or repeated
// in the batch with other content, is left as it is and listed in
// Mismatched. An error wrapping memsync.ErrUnavailable means the batch (or
// part of it) was not written and may be retried as a whole.
func (g *Graph) Apply(ctx context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	start := time.Now()
	var res memsync.ApplyResult
	var firstBad error
	seen := make(map[string]string, len(batch)) // uuid -> hash of the first occurrence
	rows := make([]prepared, 0, len(batch))
	for i := range batch {
		m := &batch[i]
		if err := m.Record.Validate(); err != nil || m.UUID == "" {
			if err == nil {
				err = errors.New("record has no uuid")
			}
			if firstBad == nil {
				firstBad = &memsync.RecordError{UUID: m.UUID, Err: fmt.Errorf("invalid record (%s:%d): %w", m.Path, m.Line, err)}
			}
			continue
		}
		p := prepare(m)
		if h, ok := seen[p.uuid]; ok {
			if h != p.hash {
				res.Mismatched = append(res.Mismatched, p.uuid)
			}
			continue
		}
		seen[p.uuid] = p.hash
		rows = append(rows, p)
	}
	for start := 0; start < len(rows); start += maxChunk {
		end := min(start+maxChunk, len(rows))
		mis, err := g.applyLocating(ctx, rows[start:end])
		res.Mismatched = append(res.Mismatched, mis...)
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
func (g *Graph) applyLocating(ctx context.Context, rows []prepared) ([]string, error) {
	mis, err := g.applyChunk(ctx, rows)
	if err == nil {
		return mis, nil
	}
	if unavailable(err) || ctx.Err() != nil {
		return nil, wrap(fmt.Sprintf("apply %d records", len(rows)), err)
	}
	if len(rows) == 1 {
		m := rows[0].mem
		g.lg.Error("record refused by neo4j", zap.String("uuid", m.UUID), zap.String("path", m.Path), zap.Int("line", m.Line), zap.Error(err))
		return nil, &memsync.RecordError{UUID: m.UUID, Err: wrap(fmt.Sprintf("project %s:%d", m.Path, m.Line), err)}
	}
	g.lg.Warn("batch refused; bisecting to find the record at fault", zap.Int("records", len(rows)), zap.Error(err))
	half := len(rows) / 2
	var firstBad error
	for _, part := range [][]prepared{rows[:half], rows[half:]} {
		m, err := g.applyLocating(ctx, part)
		mis = append(mis, m...)
		if err != nil {
			var re *memsync.RecordError
			if !errors.As(err, &re) {
				return mis, err
			}
			if firstBad == nil {
				firstBad = err
			}
		}
	}
	return mis, firstBad
}

// errRaced means a concurrent writer projected some uuid of the chunk
// between its lookup and its write; the chunk is classified again.
var errRaced = errors.New("a concurrent writer projected part of the chunk")

// applyChunk writes rows in one managed transaction and returns the uuids
// that were already projected with a different hash.
func (g *Graph) applyChunk(ctx context.Context, rows []prepared) ([]string, error) {
	s := g.session(ctx, neo4jdrv.AccessModeWrite)
	defer s.Close(ctx)
	for attempt := 0; ; attempt++ {
		mis, err := neo4jdrv.ExecuteWrite(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]string, error) {
			return writeChunk(ctx, tx, rows)
		})
		if errors.Is(err, errRaced) && attempt < 3 {
			continue
		}
		return mis, err
	}
}

// writeChunk is the body of applyChunk's transaction: nodes first, then
// relationships, then the retirement of superseded memories.
func writeChunk(ctx context.Context, tx neo4jdrv.ManagedTransaction, rows []prepared) ([]string, error) {
	uuids := make([]string, len(rows))
	for i, p := range rows {
		uuids[i] = p.uuid
	}
	res, err := tx.Run(ctx, lookupMemories, map[string]any{"uuids": uuids})
	if err != nil {
		return nil, err
	}
	existing := map[string]any{} // uuid -> hash, nil for a placeholder
	for res.Next(ctx) {
		rec := res.Record()
		u, _ := rec.Values[0].(string)
		existing[u] = rec.Values[1]
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	var mismatched []string
	var nodes, wrote, mentions, links, supersedes, conflicts []any
	var retired []string
	agents := map[string]bool{}
	for _, p := range rows {
		old, ok := existing[p.uuid]
		if old != nil {
			if old.(string) != p.hash {
				mismatched = append(mismatched, p.uuid)
			}
			continue
		}
		if ok {
			// A placeholder: superseders may have come first.
			retired = append(retired, p.uuid)
		}
		nodes = append(nodes, map[string]any{"uuid": p.uuid, "props": p.props})
		wrote = append(wrote, map[string]any{"uuid": p.uuid, "agent": p.mem.Agent})
		agents[p.mem.Agent] = true
		for _, e := range p.ents {
			mentions = append(mentions, map[string]any{"uuid": p.uuid, "group_id": p.group, "name": e})
		}
		rec := &p.mem.Record
		for _, t := range rec.Links {
			links = append(links, map[string]any{"from": p.uuid, "to": t})
		}
		for _, t := range rec.Supersedes {
			supersedes = append(supersedes, map[string]any{"from": p.uuid, "to": t})
			retired = append(retired, t)
		}
		for _, t := range rec.ConflictsWith {
			conflicts = append(conflicts, map[string]any{"from": p.uuid, "to": t})
		}
	}
	if len(nodes) == 0 {
		return mismatched, nil
	}
	res, err = tx.Run(ctx, fillMemories, map[string]any{"rows": nodes})
	if err != nil {
		return nil, err
	}
	rec, err := res.Single(ctx)
	if err != nil {
		return nil, err
	}
	if n, _ := rec.Values[0].(int64); n != int64(len(nodes)) {
		return nil, errRaced
	}
	names := make([]string, 0, len(agents))
	for a := range agents {
		names = append(names, a)
	}
	if err := run(ctx, tx, mergeAgents, map[string]any{"agents": names}); err != nil {
		return nil, err
	}
	for _, st := range []struct {
		stmt string
		rows []any
	}{
		{mergeWrote, wrote},
		{mergeMentions, mentions},
		{mergeLinks, links},
		{mergeSupersedes, supersedes},
		{mergeConflicts, conflicts},
	} {
		if len(st.rows) == 0 {
			continue
		}
		if err := run(ctx, tx, st.stmt, map[string]any{"rows": st.rows}); err != nil {
			return nil, err
		}
	}
	if retired = sortedUnique(retired); len(retired) > 0 {
		if err := run(ctx, tx, retire, map[string]any{"uuids": retired}); err != nil {
			return nil, err
		}
	}
	return mismatched, nil
}

func run(ctx context.Context, tx neo4jdrv.ManagedTransaction, stmt string, params map[string]any) error {
	res, err := tx.Run(ctx, stmt, params)
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	return err
}
