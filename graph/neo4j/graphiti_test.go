package neo4j_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// graphitiBatch: a shared fact about Postgres, superseded by a second; a
// private memory of bob's; a shared memory linking to the first.
func graphitiBatch() []memsync.Memory {
	ents := func(e ...string) func(*journal.Record) { return func(r *journal.Record) { r.Entities = e } }
	return []memsync.Memory{
		rec("g_old", 1, "the database is postgres 14", ents("postgres")),
		rec("g_new", 2, "the database is postgres 16", ents("postgres"), func(r *journal.Record) { r.Supersedes = []string{"g_old"} }),
		rec("g_priv", 3, "bob's secret plan zebra", func(r *journal.Record) { r.Agent, r.Scope = "bob", journal.ScopePrivate }),
		rec("g_link", 4, "see the database note", func(r *journal.Record) { r.Links = []string{"g_old"} }),
	}
}

// graphitiCounts counts the Graphiti shape memsync wrote, by kind.
func graphitiCounts(t *testing.T) map[string]int64 {
	exec := cypher(t)
	out := map[string]int64{}
	for k, q := range map[string]string{
		"episodic":   "MATCH (n:Episodic {memsync_owned: true}) RETURN count(n)",
		"entity":     "MATCH (n:Entity {memsync_owned: true}) RETURN count(n)",
		"mentions":   "MATCH ()-[r:MENTIONS {memsync_owned: true}]->() RETURN count(r)",
		"relates_to": "MATCH ()-[r:RELATES_TO {memsync_owned: true}]->() RETURN count(r)",
	} {
		out[k] = exec(q)[0].Values[0].(int64)
	}
	return out
}

// TestGraphitiShape: with the shape on, every visible shared memory is an
// :Episodic with Graphiti's non-null fields, in group "memsync"; a
// superseded memory's facts carry invalid_at and expired_at; a private
// group is absent without the second opt-in; re-projecting (Apply again,
// then ReprojectGraphiti) changes no count.
func TestGraphitiShape(t *testing.T) {
	g := neo4jtest.OpenWith(t, func(c *neo4j.Config) { c.Graphiti = true })
	ctx := context.Background()
	if _, err := g.Apply(ctx, graphitiBatch()); err != nil {
		t.Fatal(err)
	}
	exec := cypher(t)
	rows := exec(`MATCH (e:Episodic {memsync_owned: true}) RETURN e.uuid, e.group_id, e.source, e.source_description,
	  e.created_at IS NOT NULL AND e.valid_at IS NOT NULL, size(e.entity_edges) ORDER BY e.valid_at`)
	var got []string
	for _, r := range rows {
		got = append(got, r.Values[0].(string))
		if r.Values[1] != "memsync" || r.Values[2] != "text" || r.Values[3] != "memsync" || r.Values[4] != true || r.Values[5].(int64) < 1 {
			t.Errorf("episode %v: want group memsync, source text, source_description memsync, dates set, entity_edges", r.Values)
		}
	}
	if want := []string{"g_old", "g_new", "g_link"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("episodes %v, want %v in time order (bob's private memory absent)", got, want)
	}
	if n := exec("MATCH (n) WHERE (n:Episodic OR n:Entity) AND n.group_id STARTS WITH 'AGENT_' RETURN count(n)")[0].Values[0].(int64); n != 0 {
		t.Fatalf("%d nodes of a private group projected without graphiti_private", n)
	}
	old := exec(`MATCH (:Episodic {uuid: 'g_old'})-[:MENTIONS]->(me:Entity)-[f:RELATES_TO]->(:Entity {name: 'postgres'})
	  RETURN f.invalid_at IS NOT NULL, f.expired_at IS NOT NULL, f.fact`)
	if len(old) != 1 || old[0].Values[0] != true || old[0].Values[1] != true || old[0].Values[2] != "the database is postgres 14" {
		t.Fatalf("superseded memory's fact: %v, want invalid_at and expired_at set", old)
	}
	cur := exec(`MATCH ()-[f:RELATES_TO {fact: 'the database is postgres 16'}]->() RETURN f.name, f.invalid_at IS NULL ORDER BY f.name`)
	if len(cur) != 2 || cur[0].Values[0] != "ABOUT" || cur[1].Values[0] != "SUPERSEDES" || cur[0].Values[1] != true {
		t.Fatalf("current memory's facts: %v, want ABOUT and SUPERSEDES, valid", cur)
	}
	before := graphitiCounts(t)
	if _, err := g.Apply(ctx, graphitiBatch()); err != nil {
		t.Fatal(err)
	}
	if again := graphitiCounts(t); again != nil && !equalCounts(before, again) {
		t.Fatalf("re-applying changed the shape: %v then %v", before, again)
	}
	if err := g.ReprojectGraphiti(ctx); err != nil {
		t.Fatal(err)
	}
	if again := graphitiCounts(t); !equalCounts(before, again) {
		t.Fatalf("reprojecting changed the shape: %v then %v", before, again)
	}
	// 3 episodes; 3 memory entities and postgres; a MENTIONS per memory
	// entity plus 2 of postgres; facts: 2 ABOUT, SUPERSEDES, LINKS_TO.
	if want := map[string]int64{"episodic": 3, "entity": 4, "mentions": 5, "relates_to": 4}; !equalCounts(before, want) {
		t.Fatalf("shape %v, want %v", before, want)
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestGraphitiPrivateOptIn: graphiti_private projects an agent's private
// group as AGENT_<name>; reopening without it deletes that group again.
func TestGraphitiPrivateOptIn(t *testing.T) {
	g := neo4jtest.OpenWith(t, func(c *neo4j.Config) { c.Graphiti, c.GraphitiPrivate = true, true })
	ctx := context.Background()
	if _, err := g.Apply(ctx, graphitiBatch()); err != nil {
		t.Fatal(err)
	}
	exec := cypher(t)
	priv := exec("MATCH (e:Episodic {uuid: 'g_priv'}) RETURN e.group_id")
	if len(priv) != 1 || priv[0].Values[0] != "AGENT_bob" {
		t.Fatalf("private memory: %v, want one episode in AGENT_bob", priv)
	}
	cfg := neo4jtest.Config(t)
	cfg.Graphiti = true
	g2, err := neo4j.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if n := exec("MATCH (n) WHERE (n:Episodic OR n:Entity) AND n.group_id = 'AGENT_bob' RETURN count(n)")[0].Values[0].(int64); n != 0 {
		t.Fatalf("%d nodes of AGENT_bob left after reopening without graphiti_private", n)
	}
}

// TestGraphitiLeavesForeignNodes: what Graphiti itself wrote (unmarked
// Episodic and Entity nodes, an Entity of the shared group's name, a fact)
// survives ReprojectGraphiti, a rebuild and Drop; memsync's marked shape
// goes with Drop and comes back with a rebuild.
func TestGraphitiLeavesForeignNodes(t *testing.T) {
	g := neo4jtest.OpenWith(t, func(c *neo4j.Config) { c.Graphiti = true })
	ctx := context.Background()
	exec := cypher(t)
	exec(`CREATE (ep:Episodic {uuid: 'foreign-ep', group_id: 'main', name: 'x', content: 'graphiti wrote this', source: 'text',
	  source_description: 'graphiti', entity_edges: [], created_at: datetime(), valid_at: datetime()})
	  -[:MENTIONS {uuid: 'foreign-m', group_id: 'main', created_at: datetime()}]->(a:Entity {uuid: 'foreign-a', name: 'alpha', group_id: 'main', summary: '', created_at: datetime()})
	  CREATE (a)-[:RELATES_TO {uuid: 'foreign-f', name: 'KNOWS', fact: 'alpha knows beta', group_id: 'main', episodes: ['foreign-ep'], created_at: datetime()}]->
	  (:Entity {uuid: 'foreign-b', name: 'beta', group_id: 'main', summary: '', created_at: datetime()})`)
	foreign := func(when string) {
		t.Helper()
		n := exec(`MATCH (n) WHERE n.uuid IN ['foreign-ep', 'foreign-a', 'foreign-b'] RETURN count(n)`)[0].Values[0].(int64)
		r := exec(`MATCH ()-[r]->() WHERE r.uuid IN ['foreign-m', 'foreign-f'] RETURN count(r)`)[0].Values[0].(int64)
		if n != 3 || r != 2 {
			t.Fatalf("%s: %d of 3 foreign nodes and %d of 2 foreign relationships left", when, n, r)
		}
	}
	if _, err := g.Apply(ctx, graphitiBatch()); err != nil {
		t.Fatal(err)
	}
	if err := g.ReprojectGraphiti(ctx); err != nil {
		t.Fatal(err)
	}
	foreign("after ReprojectGraphiti")
	want := graphitiCounts(t)
	if err := g.BeginRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(ctx, graphitiBatch()[:2]); err != nil { // the rebuild drops g_link
		t.Fatal(err)
	}
	if err := g.FinishRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	foreign("after a rebuild")
	if n := exec("MATCH (e:Episodic {uuid: 'g_link'}) RETURN count(e)")[0].Values[0].(int64); n != 0 {
		t.Fatalf("a memory the rebuild no longer has is still an episode")
	}
	if got := graphitiCounts(t); got["episodic"] != want["episodic"]-1 {
		t.Fatalf("after rebuild: %v, want one episode fewer than %v", got, want)
	}
	if err := g.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	foreign("after Drop")
	if got := graphitiCounts(t); got["episodic"]+got["entity"] != 0 {
		t.Fatalf("after Drop: %v, want memsync's shape gone", got)
	}
	exec("MATCH (n) WHERE n.uuid STARTS WITH 'foreign-' DETACH DELETE n")
}

// TestGraphitiOffWritesNothing: without the option nothing of the shape
// is written.
func TestGraphitiOffWritesNothing(t *testing.T) {
	g := neo4jtest.Open(t)
	if _, err := g.Apply(context.Background(), graphitiBatch()); err != nil {
		t.Fatal(err)
	}
	if got := graphitiCounts(t); got["episodic"]+got["entity"]+got["mentions"]+got["relates_to"] != 0 {
		t.Fatalf("shape written with the option off: %v", got)
	}
}

// TestGraphitiGroup maps memsync groups to Graphiti group ids that match
// ^[a-zA-Z0-9_-]+$.
func TestGraphitiGroup(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    string
		private bool
	}{
		{journal.SharedGroup, "memsync", false},
		{"AGENT:planner", "AGENT_planner", true},
		{"AGENT:a.b c", "AGENT_a_b_c", true},
		{"AGENT:x-y_z9", "AGENT_x-y_z9", true},
	} {
		got, p := neo4j.GraphitiGroup(c.in)
		if got != c.want || p != c.private {
			t.Errorf("GraphitiGroup(%q) = %q, %v; want %q, %v", c.in, got, p, c.want, c.private)
		}
	}
}

// FuzzGraphitiGroup: every memsync group maps to a group id graphiti-core
// accepts (^[a-zA-Z0-9_-]+$), private exactly when it is not the shared
// group, and two agents' groups never map onto the shared one.
func FuzzGraphitiGroup(f *testing.F) {
	for _, s := range []string{journal.SharedGroup, "AGENT:planner", "AGENT:", "AGENT:é/ü", "AGENT:memsync"} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	f.Fuzz(func(t *testing.T, group string) {
		id, private := neo4j.GraphitiGroup(group)
		if !valid.MatchString(id) {
			t.Fatalf("GraphitiGroup(%q) = %q: not a Graphiti group id", group, id)
		}
		if private != (group != journal.SharedGroup) {
			t.Fatalf("GraphitiGroup(%q): private %v", group, private)
		}
		if private && (id == neo4j.GraphitiSharedGroup || !strings.HasPrefix(id, neo4j.GraphitiPrivatePrefix)) {
			t.Fatalf("GraphitiGroup(%q) = %q: a private group outside AGENT_", group, id)
		}
		// A valid agent name maps to itself, so two agents never share a
		// Graphiti group.
		if name, ok := strings.CutPrefix(group, "AGENT:"); ok && journal.ValidAgent(name) && id != "AGENT_"+name {
			t.Fatalf("GraphitiGroup(%q) = %q, want AGENT_%s", group, id, name)
		}
	})
}

// TestGraphitiFailureKeepsProjection: when the shape's write fails for
// a reason other than unavailability (here a constraint a Graphiti user
// put on :Episodic content, which an episode Graphiti wrote holds), the
// batch's own projection is written all the same, and the foreign node is
// left as it was.
func TestGraphitiFailureKeepsProjection(t *testing.T) {
	g := neo4jtest.OpenWith(t, func(c *neo4j.Config) { c.Graphiti = true })
	ctx := context.Background()
	exec := cypher(t)
	exec("CREATE CONSTRAINT test_graphiti_unique_content IF NOT EXISTS FOR (e:Episodic) REQUIRE e.content IS UNIQUE")
	defer exec("DROP CONSTRAINT test_graphiti_unique_content IF EXISTS")
	exec("CREATE (:Episodic {uuid: 'foreign-ep', content: 'the database is postgres 14', group_id: 'main', source_description: 'graphiti wrote this'})")
	defer exec("MATCH (e:Episodic {uuid: 'foreign-ep'}) DETACH DELETE e")
	if _, err := g.Apply(ctx, graphitiBatch()); err != nil {
		t.Fatalf("Apply failed with the Graphiti shape's write: %v", err)
	}
	nodes, err := g.Get(ctx, []string{"g_old", "g_new", "g_link"})
	if err != nil || len(nodes) != 3 {
		t.Fatalf("memsync's projection: %d of 3 memories (%v)", len(nodes), err)
	}
	if got := graphitiCounts(t); got["episodic"] != 0 {
		t.Fatalf("shape %v: want the failed batch's episodes absent", got)
	}
	if got := exec("MATCH (e:Episodic {uuid: 'foreign-ep'}) RETURN e.source_description, e.memsync_owned"); len(got) != 1 || got[0].Values[0] != "graphiti wrote this" || got[0].Values[1] != nil {
		t.Fatalf("foreign episode: %v, want it untouched", got)
	}
}

// The statements graphiti-core 0.31.2 saves with on Neo4j
// (graphiti_core/models/nodes/node_db_queries.py and
// models/edges/edge_db_queries.py; EntityNode.save passes labels "Entity").
const (
	graphitiSaveEpisode = `
MERGE (n:Episodic {uuid: $uuid})
SET n = {uuid: $uuid, name: $name, group_id: $group_id, source_description: $source_description, source: $source, content: $content,
entity_edges: $entity_edges, created_at: $created_at, valid_at: $valid_at}
RETURN n.uuid AS uuid`
	graphitiSaveEntity = `
MERGE (n:Entity {uuid: $entity_data.uuid})
SET n:Entity
SET n = $entity_data
WITH n CALL db.create.setNodeVectorProperty(n, "name_embedding", $entity_data.name_embedding)
RETURN n.uuid AS uuid`
	graphitiSaveMention = `
MATCH (episode:Episodic {uuid: $episode_uuid})
MATCH (node:Entity {uuid: $entity_uuid})
MERGE (episode)-[e:MENTIONS {uuid: $uuid}]->(node)
SET
    e.group_id = $group_id,
    e.created_at = $created_at
RETURN e.uuid AS uuid`
	graphitiSaveFact = `
MATCH (source:Entity {uuid: $edge_data.source_uuid})
MATCH (target:Entity {uuid: $edge_data.target_uuid})
MERGE (source)-[e:RELATES_TO {uuid: $edge_data.uuid}]->(target)
SET e = $edge_data
WITH e CALL db.create.setRelationshipVectorProperty(e, "fact_embedding", $edge_data.fact_embedding)
RETURN e.uuid AS uuid`
)

// graphitiClient writes, as graphiti-core's add_episode saves its
// results, an episode of group mentioning two entities named names[0]
// and names[1], with a fact between them; every uuid starts with
// "foreign-"+tag. It returns the first error of the server, nil when
// every statement succeeded.
func graphitiClient(t *testing.T, tag, group string, names [2]string) error {
	t.Helper()
	cfg := neo4jtest.Config(t)
	drv, err := neo4jdrv.NewDriverWithContext(cfg.URI, neo4jdrv.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	now := time.Now().UTC()
	vec := []float64{0.1, 0.2, 0.3}
	id := func(s string) string { return "foreign-" + tag + "-" + s }
	stmts := []struct {
		q string
		p map[string]any
	}{
		{graphitiSaveEpisode, map[string]any{"uuid": id("ep"), "name": "episode " + tag, "group_id": group, "source_description": "graphiti",
			"source": "message", "content": names[0] + " runs on " + names[1], "entity_edges": []any{id("fact")}, "created_at": now, "valid_at": now}},
	}
	for i, n := range names {
		u := id(fmt.Sprint("entity", i))
		stmts = append(stmts,
			struct {
				q string
				p map[string]any
			}{graphitiSaveEntity, map[string]any{"entity_data": map[string]any{"uuid": u, "name": n, "name_embedding": vec,
				"group_id": group, "summary": "graphiti wrote " + n, "created_at": now}}},
			struct {
				q string
				p map[string]any
			}{graphitiSaveMention, map[string]any{"episode_uuid": id("ep"), "entity_uuid": u, "uuid": id(fmt.Sprint("mention", i)),
				"group_id": group, "created_at": now}})
	}
	stmts = append(stmts, struct {
		q string
		p map[string]any
	}{graphitiSaveFact, map[string]any{"edge_data": map[string]any{"uuid": id("fact"), "source_uuid": id("entity0"), "target_uuid": id("entity1"),
		"name": "RUNS_ON", "fact": names[0] + " runs on " + names[1], "group_id": group, "episodes": []any{id("ep")},
		"created_at": now, "valid_at": now, "invalid_at": nil, "expired_at": nil, "fact_embedding": vec}}})
	for _, s := range stmts {
		_, err := neo4jdrv.ExecuteQuery(context.Background(), drv, s.q, s.p, neo4jdrv.EagerResultTransformer,
			neo4jdrv.ExecuteQueryWithDatabase(cfg.Database))
		if err != nil {
			return fmt.Errorf("graphiti-core's save %q: %w", strings.Fields(s.q)[0]+" "+strings.Fields(s.q)[1], err)
		}
	}
	return nil
}

// foreignIntact fails unless every node and relationship graphitiClient
// wrote with tag is there as it wrote it: its properties unmarked, and
// no relationship between them and anything memsync wrote.
func foreignIntact(t *testing.T, tag, when string) {
	t.Helper()
	exec := cypher(t)
	p := map[string]any{"prefix": "foreign-" + tag + "-"}
	nodes := exec(`MATCH (n) WHERE n.uuid STARTS WITH $prefix
	  RETURN count(n), count(n.memsync_owned), sum(size([l IN labels(n) WHERE NOT l IN ['Episodic', 'Entity']]))`, p)[0].Values
	rels := exec(`MATCH (n)-[r]-(m) WHERE n.uuid STARTS WITH $prefix
	  RETURN count(DISTINCT r), count(DISTINCT CASE WHEN NOT coalesce(m.uuid, '') STARTS WITH $prefix OR r.memsync_owned IS NOT NULL THEN r END)`, p)[0].Values
	if nodes[0].(int64) != 3 || nodes[1].(int64) != 0 || nodes[2].(int64) != 0 || rels[0].(int64) != 3 || rels[1].(int64) != 0 {
		t.Fatalf("%s: Graphiti's own writes (%s): %v nodes (of 3; marked, other labels) and %v relationships (of 3; to memsync's nodes)", when, tag, nodes, rels)
	}
}

// TestGraphitiEntityNamesShared is issue 57's entity-name clash: Graphiti
// writing, through graphiti-core's own statements, entities whose
// (group_id, name) memsync's projection also holds, before memsync
// projects and after it, in memsync's shared group CONSTELLATION (the
// seed design's Graphiti group) and in the shape's group memsync: neither
// side's writes fail, the shape is all there, memsync's memories mention
// only memsync's entities, and what Graphiti wrote survives untouched
// re-projection, two rebuilds (into slot 1, then back into slot 0) and
// Drop.
func TestGraphitiEntityNamesShared(t *testing.T) {
	g := neo4jtest.OpenWith(t, func(c *neo4j.Config) { c.Graphiti = true })
	ctx := context.Background()
	exec := cypher(t)
	defer exec("MATCH (n) WHERE n.uuid STARTS WITH 'foreign-' DETACH DELETE n")
	for _, c := range []struct{ tag, group string }{{"before-c", journal.SharedGroup}, {"before-m", neo4j.GraphitiSharedGroup}} {
		if err := graphitiClient(t, c.tag, c.group, [2]string{"postgres", "the database is postgres 14 [g_old]"}); err != nil {
			t.Fatalf("Graphiti writing first into %s: %v", c.group, err)
		}
	}
	if _, err := g.Apply(ctx, graphitiBatch()); err != nil {
		t.Fatal(err)
	}
	if want, got := map[string]int64{"episodic": 3, "entity": 4, "mentions": 5, "relates_to": 4}, graphitiCounts(t); !equalCounts(got, want) {
		t.Fatalf("shape %v with Graphiti's entities of the same names, want %v", got, want)
	}
	for _, c := range []struct{ tag, group string }{{"after-c", journal.SharedGroup}, {"after-m", neo4j.GraphitiSharedGroup}} {
		if err := graphitiClient(t, c.tag, c.group, [2]string{"postgres", "the database is postgres 14 [g_old]"}); err != nil {
			t.Fatalf("Graphiti writing into %s after memsync projected: %v", c.group, err)
		}
	}
	check := func(when string) {
		t.Helper()
		for _, tag := range []string{"before-c", "before-m", "after-c", "after-m"} {
			foreignIntact(t, tag, when)
		}
		ents := exec(`MATCH (:Memory {uuid: 'g_new'})-[:MENTIONS]->(e) RETURN e.name, e.uuid, labels(e)`)
		if len(ents) != 1 || ents[0].Values[0] != "postgres" || ents[0].Values[1] != nil {
			t.Fatalf("%s: g_new mentions %v, want memsync's own entity postgres only", when, ents)
		}
	}
	check("after Apply")
	if err := g.ReprojectGraphiti(ctx); err != nil {
		t.Fatal(err)
	}
	check("after ReprojectGraphiti")
	for i := 0; i < 2; i++ {
		if err := g.BeginRebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Apply(ctx, graphitiBatch()); err != nil {
			t.Fatal(err)
		}
		if err := g.FinishRebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if want, got := map[string]int64{"episodic": 3, "entity": 4, "mentions": 5, "relates_to": 4}, graphitiCounts(t); !equalCounts(got, want) {
			t.Fatalf("rebuild %d: shape %v, want %v", i+1, got, want)
		}
		check(fmt.Sprint("after rebuild ", i+1))
	}
	if err := g.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"before-c", "before-m", "after-c", "after-m"} {
		foreignIntact(t, tag, "after Drop")
	}
}

// TestGraphitiFactsAcrossPages: a full projection (a rebuild into a graph
// with no shape yet) pages through the memories by uuid; a memory's fact
// whose target comes pages later is written all the same, and no memory
// entity is left without its name.
func TestGraphitiFactsAcrossPages(t *testing.T) {
	g := neo4jtest.OpenWith(t, func(c *neo4j.Config) { c.Graphiti = true })
	ctx := context.Background()
	const n = 1200 // pages of 500
	var batch []memsync.Memory
	for i := 0; i < n; i++ {
		m := rec(fmt.Sprintf("p-%04d", i), i%60, fmt.Sprintf("note %d of the page test", i))
		if i < n/2 {
			m.Record.Links = []string{fmt.Sprintf("p-%04d", i+n/2)}
		}
		batch = append(batch, m)
	}
	if err := g.BeginRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := g.FinishRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	exec := cypher(t)
	if got := exec("MATCH (:Entity:MemsyncGraphiti)-[f:RELATES_TO {name: 'LINKS_TO'}]->(:Entity:MemsyncGraphiti) RETURN count(f)")[0].Values[0].(int64); got != n/2 {
		t.Errorf("%d LINKS_TO facts, want %d", got, n/2)
	}
	if got := exec("MATCH (e:Entity:MemsyncGraphiti) WHERE e.name = '' RETURN count(e)")[0].Values[0].(int64); got != 0 {
		t.Errorf("%d memory entities without a name", got)
	}
	if got := graphitiCounts(t); got["episodic"] != n || got["entity"] != n {
		t.Errorf("shape %v, want %d episodes and memory entities", got, n)
	}
}
