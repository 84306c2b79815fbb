package neo4j_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// TestEntitiesOfEarlierVersion: a database an earlier version projected
// (slot 0's entities :Entity, its constraint memsync_entity_group_name on
// them; Graphiti's own nodes beside them, one of a name memsync holds; a :MemsyncEntity of the same key
// left by this version before a downgrade) is refused by a read-only open,
// then upgraded by the next Open: memsync's entities are :MemsyncEntity,
// the duplicate folded into one, the old constraint gone; Graphiti's nodes
// are as they were, and Graphiti can then write an entity of a name
// memsync holds. Apply, search and two rebuilds work on the upgraded
// database.
func TestEntitiesOfEarlierVersion(t *testing.T) {
	g := neo4jtest.OpenWith(t, func(c *neo4j.Config) { c.Graphiti = true })
	ctx := context.Background()
	exec := cypher(t)
	defer exec("MATCH (n) WHERE n.uuid STARTS WITH 'foreign-' DETACH DELETE n")
	kafka := rec("g_kafka", 6, "kafka keeps seven days", func(r *journal.Record) { r.Entities = []string{"kafka"} })
	if _, err := g.Apply(ctx, append(graphitiBatch(), kafka)); err != nil {
		t.Fatal(err)
	}
	// The earlier version's schema and labels, and what Graphiti wrote
	// under them.
	exec("MATCH (e:MemsyncEntity) SET e:Entity REMOVE e:MemsyncEntity")
	exec("DROP CONSTRAINT " + neo4j.ConstraintEntityKey)
	exec("CREATE CONSTRAINT memsync_entity_group_name FOR (e:Entity) REQUIRE (e.group_id, e.name) IS UNIQUE")
	exec("CREATE (:MemsyncEntity {group_id: $g, name: 'postgres'})", map[string]any{"g": journal.SharedGroup})
	if err := graphitiClient(t, "old", "main", [2]string{"postgres", "kafka"}); err != nil {
		t.Fatal(err)
	}

	if r, err := neo4j.OpenReadOnly(ctx, neo4jtest.Config(t), nil); !errors.Is(err, neo4j.ErrNotReadable) {
		if err == nil {
			r.Close()
		}
		t.Fatalf("OpenReadOnly of an earlier version's schema = %v, want ErrNotReadable", err)
	}
	cfg := neo4jtest.Config(t)
	cfg.Graphiti = true
	up, err := neo4j.Open(ctx, cfg, zaptest.NewLogger(t, zaptest.Level(zapcore.InfoLevel)))
	if err != nil {
		t.Fatalf("Open of an earlier version's schema: %v", err)
	}
	defer up.Close()

	constraints := map[string]bool{}
	for _, r := range exec("SHOW CONSTRAINTS YIELD name RETURN name") {
		constraints[r.Values[0].(string)] = true
	}
	if constraints["memsync_entity_group_name"] || !constraints[neo4j.ConstraintEntityKey] || !constraints["memsync_entity_group_name_1"] {
		t.Fatalf("constraints after the upgrade: %v", constraints)
	}
	one := func(q string) int64 { t.Helper(); return exec(q)[0].Values[0].(int64) }
	entities := func(when string, mentions int64) {
		t.Helper()
		if n := one("MATCH (e:Entity) WHERE e.uuid IS NULL RETURN count(e)"); n != 0 {
			t.Fatalf("%s: %d of memsync's entities still :Entity", when, n)
		}
		if n := one("MATCH (e:MemsyncEntity {name: 'postgres'}) RETURN count(e)"); n != 1 {
			t.Fatalf("%s: %d entities postgres of memsync's, want 1", when, n)
		}
		if n := one("MATCH (:Memory)-[r:MENTIONS]->(:MemsyncEntity {name: 'postgres'}) RETURN count(r)"); n != mentions {
			t.Fatalf("%s: %d mentions of postgres, want %d", when, n, mentions)
		}
		if n := one("MATCH (:Memory {uuid: 'g_kafka'})-[:MENTIONS]->(e:MemsyncEntity {name: 'kafka'}) RETURN count(e)"); n != 1 {
			t.Fatalf("%s: g_kafka mentions %d entities kafka of memsync's, want 1", when, n)
		}
		foreignIntact(t, "old", when)
	}
	entities("after the upgrade", 2)
	if _, err := up.Apply(ctx, []memsync.Memory{rec("g_more", 5, "postgres 16 needs a vacuum", func(r *journal.Record) { r.Entities = []string{"postgres"} })}); err != nil {
		t.Fatal(err)
	}
	entities("after Apply", 3)
	if err := graphitiClient(t, "new", journal.SharedGroup, [2]string{"postgres", "vacuum"}); err != nil {
		t.Fatalf("Graphiti writing an entity of memsync's name after the upgrade: %v", err)
	}
	foreignIntact(t, "new", "after Graphiti wrote")
	r, err := neo4j.OpenReadOnly(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatalf("OpenReadOnly after the upgrade: %v", err)
	}
	hits, err := read.Search(ctx, r, memsync.SearchQuery{Text: "postgres vacuum", Groups: []string{journal.SharedGroup}})
	r.Close()
	if err != nil || len(hits) == 0 || hits[0].UUID != "g_more" {
		t.Fatalf("Search after the upgrade = %v, %v; want g_more first", hits, err)
	}
	for i := 0; i < 2; i++ { // into slot 1, then back into slot 0
		if err := up.BeginRebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := up.Apply(ctx, graphitiBatch()); err != nil {
			t.Fatal(err)
		}
		if err := up.FinishRebuild(ctx); err != nil {
			t.Fatal(err)
		}
		foreignIntact(t, "old", "after a rebuild")
		foreignIntact(t, "new", "after a rebuild")
	}
	if n := one("MATCH (:Memory)-[r:MENTIONS]->(:MemsyncEntity {name: 'postgres'}) RETURN count(r)"); n != 2 {
		t.Fatalf("after two rebuilds: %d mentions of postgres in slot 0, want 2", n)
	}
}
