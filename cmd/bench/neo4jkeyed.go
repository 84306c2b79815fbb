package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/analysis"
)

// The keyed ceiling's labels and schema: what SPEC §4 asks of every
// memory (a uuid that is unique, a WROTE edge from its agent, MENTIONS
// edges to its entities, List's index on group and time, the fulltext
// index), on labels of the bench's own, so that nothing of memsync's
// graph is touched.
const (
	keyedLabel       = "BenchKeyed"
	keyedAgentLabel  = "BenchKeyedAgent"
	keyedEntityLabel = "BenchKeyedEntity"
)

// keyedSchema is the keyed ceiling's schema: each piece's kind as CREATE
// names it, its name, and the rest of its CREATE statement.
var keyedSchema = []struct{ kind, name, create string }{
	{"CONSTRAINT", "bench_keyed_uuid", "FOR (m:" + keyedLabel + ") REQUIRE m.uuid IS UNIQUE"},
	{"CONSTRAINT", "bench_keyed_agent", "FOR (a:" + keyedAgentLabel + ") REQUIRE a.name IS UNIQUE"},
	{"CONSTRAINT", "bench_keyed_entity", "FOR (e:" + keyedEntityLabel + ") REQUIRE (e.group_id, e.name) IS UNIQUE"},
	{"INDEX", "bench_keyed_group_ts", "FOR (m:" + keyedLabel + ") ON (m.group_id, m.ts)"},
	{"FULLTEXT INDEX", "bench_keyed_terms", "FOR (m:" + keyedLabel + ") ON EACH [m.terms, m.keywords]" +
		" OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true, `fulltext.analyzer`: 'whitespace'}}"},
}

// keyedCreates are keyedSchema's CREATE statements.
func keyedCreates() []string {
	out := make([]string, len(keyedSchema))
	for i, k := range keyedSchema {
		out[i] = "CREATE " + k.kind + " " + k.name + " IF NOT EXISTS " + k.create
	}
	return out
}

// keyedAgents merges a batch's agents, once each; keyedCreate then writes
// its memories, each with its WROTE and MENTIONS edges: the plainest
// statements that do the work SPEC §4 asks of a memory.
const (
	keyedAgents = "UNWIND $agents AS n MERGE (:" + keyedAgentLabel + " {name: n})"
	keyedCreate = "UNWIND $rows AS r MATCH (a:" + keyedAgentLabel + " {name: r.agent})" +
		" CREATE (a)-[:WROTE]->(m:" + keyedLabel + ") SET m = r.props" +
		" FOREACH (e IN r.ents | MERGE (x:" + keyedEntityLabel + " {group_id: e[0], name: e[1]}) CREATE (m)-[:MENTIONS]->(x))"
)

// neo4jKeyedRows are the ceiling's property maps (neo4jRows) with what the
// fulltext index reads (terms, analyzed as graph/neo4j does), each with its
// agent and its entities, computed before the clock starts.
func neo4jKeyedRows(props []any, mems []memsync.Memory) []any {
	out := make([]any, len(props))
	for i, p := range props {
		m := &mems[i]
		withTerms := maps.Clone(p.(map[string]any))
		withTerms["terms"] = analysis.Text(m.Text)
		if kw, ok := withTerms["keywords"].(string); ok {
			withTerms["keywords"] = analysis.Text(kw)
		}
		var ents []any
		for _, e := range m.AllEntities() {
			ents = append(ents, []any{m.GroupID(), e})
		}
		out[i] = map[string]any{"agent": m.Agent, "props": withTerms, "ents": ents}
	}
	return out
}

// neo4jKeyedCeiling writes rows (neo4jKeyedRows) with keyedAgents and
// keyedCreate, one transaction per batch, under keyedSchema, and returns
// rows/s: the engine's ceiling once every memory carries what SPEC §4
// asks of it (a diagnostic beside the bare ceiling). Its nodes and schema
// are removed before and after.
func neo4jKeyedCeiling(ctx context.Context, s *neo4jServer, rows []any, batch int) (float64, error) {
	if err := s.dropKeyed(ctx); err != nil {
		return 0, err
	}
	defer s.dropKeyed(context.WithoutCancel(ctx))
	rate, err := keyedWrites(ctx, s, rows, batch, keyedCreates(), keyedCreate)
	if err != nil {
		return 0, err
	}
	// Every row became a memory with its WROTE edge, or the figure is not
	// the work it claims.
	res, err := neo4jdrv.ExecuteQuery(ctx, s.drv, "MATCH (:"+keyedAgentLabel+")-[:WROTE]->(m:"+keyedLabel+") RETURN count(m) AS n",
		nil, neo4jdrv.EagerResultTransformer, neo4jdrv.ExecuteQueryWithDatabase(s.cfg.Database))
	if err != nil {
		return 0, unavailable(fmt.Errorf("keyed ceiling: count: %w", err))
	}
	if n, _ := res.Records[0].Values[0].(int64); n != int64(len(rows)) {
		return 0, fmt.Errorf("keyed ceiling: %d memories with their WROTE edge, want %d", n, len(rows))
	}
	return rate, nil
}

// keyedWrites creates schema, waits for its indexes, then writes rows
// with keyedAgents and create, one transaction per batch, and returns
// rows/s.
func keyedWrites(ctx context.Context, s *neo4jServer, rows []any, batch int, schema []string, create string) (float64, error) {
	sess := s.drv.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: s.cfg.Database, AccessMode: neo4jdrv.AccessModeWrite})
	defer sess.Close(ctx)
	for _, q := range append(slices.Clone(schema), "CALL db.awaitIndexes(300)") {
		if _, err := neo4jdrv.ExecuteQuery(ctx, s.drv, q, nil, neo4jdrv.EagerResultTransformer,
			neo4jdrv.ExecuteQueryWithDatabase(s.cfg.Database)); err != nil {
			return 0, unavailable(fmt.Errorf("keyed ceiling: %s: %w", q, err))
		}
	}
	start := time.Now()
	for i := 0; i < len(rows); i += batch {
		chunk := rows[i:min(i+batch, len(rows))]
		seen := map[string]bool{}
		var agents []any
		for _, r := range chunk {
			if a := r.(map[string]any)["agent"].(string); !seen[a] {
				seen[a] = true
				agents = append(agents, a)
			}
		}
		_, err := sess.ExecuteWrite(ctx, func(tx neo4jdrv.ManagedTransaction) (any, error) {
			for _, st := range []struct {
				q string
				p map[string]any
			}{{keyedAgents, map[string]any{"agents": agents}}, {create, map[string]any{"rows": chunk}}} {
				res, err := tx.Run(ctx, st.q, st.p)
				if err != nil {
					return nil, err
				}
				if _, err := res.Consume(ctx); err != nil {
					return nil, err
				}
			}
			return nil, nil
		})
		if err != nil {
			return 0, unavailable(fmt.Errorf("keyed ceiling rows %d..: %w", i, err))
		}
	}
	return float64(len(rows)) / time.Since(start).Seconds(), nil
}

// dropKeyed deletes the keyed ceiling's nodes, a bounded transaction at a
// time, then its schema.
func (s *neo4jServer) dropKeyed(ctx context.Context) error {
	for _, label := range []string{keyedLabel, keyedEntityLabel, keyedAgentLabel} {
		if err := s.deleteLabel(ctx, label); err != nil {
			return err
		}
	}
	for _, k := range keyedSchema {
		// A fulltext index is dropped as any index is.
		q := "DROP " + strings.TrimPrefix(k.kind, "FULLTEXT ") + " " + k.name + " IF EXISTS"
		if _, err := neo4jdrv.ExecuteQuery(ctx, s.drv, q, nil, neo4jdrv.EagerResultTransformer,
			neo4jdrv.ExecuteQueryWithDatabase(s.cfg.Database)); err != nil {
			return unavailable(fmt.Errorf("keyed ceiling: drop %s: %w", k.name, err))
		}
	}
	return nil
}
