package neo4j

import (
	"context"
	"fmt"

	"go.uber.org/zap"
)

// memsync's entities in slot 0 were :Entity until issue 57, with the
// constraint legacyEntityKey making (group_id, name) unique among every
// :Entity node. :Entity is Graphiti's label too: a Graphiti writing into
// the same database an entity of a name memsync held failed on that
// constraint, memsync's MERGE by (group_id, name) took Graphiti's node for
// its own, and the Graphiti shape failed on Graphiti's entities. Slot 0's
// entities are now :MemsyncEntity (ConstraintEntityKey); slot 1's keep
// :Entity1, which was never Graphiti's.

// legacyEntityKey is the constraint of earlier versions on
// (:Entity) (group_id, name); slot 1's is legacyEntityKey+"_1", kept.
const legacyEntityKey = "memsync_entity_group_name"

const (
	// hasLegacyEntityKey counts the constraint of earlier versions.
	hasLegacyEntityKey = `SHOW CONSTRAINTS YIELD name WHERE name = $name RETURN count(*)`

	// mergeLegacyEntities folds an earlier version's entity into the
	// :MemsyncEntity of its key, when there is one (a database this
	// version opened, then an earlier one wrote to): its memories mention
	// that one instead. memsync's entities never had a uuid; Graphiti's
	// (its own, and the Graphiti shape's) always have one.
	mergeLegacyEntities = `
MATCH (e:Entity) WHERE e.uuid IS NULL
MATCH (m:MemsyncEntity {group_id: e.group_id, name: e.name})
WITH e, m LIMIT $limit
CALL {
  WITH e, m
  MATCH (x:Memory)-[:MENTIONS]->(e)
  MERGE (x)-[:MENTIONS]->(m)
}
DETACH DELETE e
RETURN count(*) AS n`

	// relabelLegacyEntities moves the rest to slot 0's label.
	relabelLegacyEntities = `
MATCH (e:Entity) WHERE e.uuid IS NULL
WITH e LIMIT $limit
SET e:MemsyncEntity REMOVE e:Entity
RETURN count(*) AS n`

	dropLegacyEntityKey = "DROP CONSTRAINT " + legacyEntityKey + " IF EXISTS"
)

// upgradeEntities moves slot 0's entities of an earlier version to
// :MemsyncEntity, a chunk per transaction, then drops that version's
// constraint on :Entity. It runs when that constraint exists, after
// createSchema made ConstraintEntityKey (so the fold seeks by it); a
// crash midway leaves the constraint, and the next Open goes on. An
// earlier version opening the database again makes its constraint again,
// and the next Open of this one moves what it wrote.
func (g *Graph) upgradeEntities(ctx context.Context) error {
	n, err := g.readValue(ctx, hasLegacyEntityKey, map[string]any{"name": legacyEntityKey})
	if err != nil {
		return fmt.Errorf("read constraint %s: %w", legacyEntityKey, err)
	}
	if k, _ := n.(int64); k == 0 {
		return nil
	}
	params := map[string]any{"limit": int64(dropChunk)}
	merged, err := g.rawChunks(ctx, mergeLegacyEntities, params)
	if err != nil {
		return fmt.Errorf("fold the entities of an earlier version: %w", err)
	}
	moved, err := g.rawChunks(ctx, relabelLegacyEntities, params)
	if err != nil {
		return fmt.Errorf("relabel the entities of an earlier version: %w", err)
	}
	if err := g.rawWrite(ctx, dropLegacyEntityKey, nil); err != nil {
		return fmt.Errorf("%s: %w", dropLegacyEntityKey, err)
	}
	g.lg.Info("moved the entities of an earlier version off Graphiti's label :Entity",
		zap.Int64("relabelled", moved), zap.Int64("folded", merged), zap.String("dropped_constraint", legacyEntityKey))
	return nil
}
