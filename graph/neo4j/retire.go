package neo4j

import (
	"context"
	"fmt"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.uber.org/zap"
)

// retireRule names the rule that the memories' invalid_at and replaced_by
// follow (journal.Retires: SPEC §7, references cross no privacy line),
// kept on a (:MemsyncMeta {key: 'retire_rule'}) node. A graph without it
// was projected by an earlier rule, under which any superseder retired its
// target; Open recomputes every supersession once (upgradeRetirement).
const retireRule = "journal.Retires/1"

const (
	readRetireRule = `OPTIONAL MATCH (x:MemsyncMeta {key: 'retire_rule'}) RETURN x.value`
	setRetireRule  = `MERGE (x:MemsyncMeta {key: 'retire_rule'}) SET x.value = $value`
	// supersededUUIDs lists every projected memory a record supersedes.
	supersededUUIDs = `MATCH (m:Memory)<-[:SUPERSEDES]-(:Memory) WHERE m.hash IS NOT NULL RETURN DISTINCT m.uuid`
)

// retireChunk is how many memories one transaction of upgradeRetirement
// recomputes.
const retireChunk = 1000

// upgradeRetirement recomputes the supersession of every memory that a
// record supersedes when the graph does not record retireRule, then
// records it. Concurrent openers may both recompute: the result is the same.
func (g *Graph) upgradeRetirement(ctx context.Context) error {
	rule, err := g.readValue(ctx, readRetireRule, nil)
	if err != nil {
		return fmt.Errorf("read retire rule: %w", err)
	}
	if rule == retireRule {
		return nil
	}
	s := g.session(ctx, neo4jdrv.AccessModeRead)
	uuids, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]string, error) {
		res, err := tx.Run(ctx, supersededUUIDs, nil)
		if err != nil {
			return nil, err
		}
		var out []string
		for res.Next(ctx) {
			if u, ok := res.Record().Values[0].(string); ok {
				out = append(out, u)
			}
		}
		return out, res.Err()
	})
	s.Close(ctx)
	if err != nil {
		return fmt.Errorf("list superseded memories: %w", err)
	}
	for lo := 0; lo < len(uuids); lo += retireChunk {
		chunk := uuids[lo:min(lo+retireChunk, len(uuids))]
		s := g.session(ctx, neo4jdrv.AccessModeWrite)
		_, err := s.ExecuteWrite(ctx, func(tx neo4jdrv.ManagedTransaction) (any, error) {
			return nil, retireAll(ctx, tx, chunk)
		})
		s.Close(ctx)
		if err != nil {
			return fmt.Errorf("recompute supersession: %w", err)
		}
	}
	if err := g.write(ctx, setRetireRule, map[string]any{"value": retireRule}); err != nil {
		return fmt.Errorf("record retire rule: %w", err)
	}
	if len(uuids) > 0 {
		g.lg.Info("supersession recomputed under the privacy rule", zap.Int("memories", len(uuids)))
	}
	return nil
}
