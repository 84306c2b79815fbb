package neo4j_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

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

// TestGraphitiFailureKeepsProjection: an entity Graphiti wrote itself
// under the name memsync's shape needs in the same group breaks memsync's
// (group_id, name) key, so the shape's write fails; memsync's own
// projection of the batch is written all the same, and the foreign entity
// is left as it was.
func TestGraphitiFailureKeepsProjection(t *testing.T) {
	g := neo4jtest.OpenWith(t, func(c *neo4j.Config) { c.Graphiti = true })
	ctx := context.Background()
	exec := cypher(t)
	exec("CREATE (:Entity {uuid: 'foreign-pg', name: 'postgres', group_id: 'memsync', summary: 'graphiti wrote this', created_at: datetime()})")
	if _, err := g.Apply(ctx, graphitiBatch()); err != nil {
		t.Fatalf("Apply failed with the Graphiti shape's write: %v", err)
	}
	nodes, err := g.Get(ctx, []string{"g_old", "g_new", "g_link"})
	if err != nil || len(nodes) != 3 {
		t.Fatalf("memsync's projection: %d of 3 memories (%v)", len(nodes), err)
	}
	if got := exec("MATCH (e:Entity {uuid: 'foreign-pg'}) RETURN e.summary, e.memsync_owned"); len(got) != 1 || got[0].Values[0] != "graphiti wrote this" || got[0].Values[1] != nil {
		t.Fatalf("foreign entity: %v, want it untouched", got)
	}
	exec("MATCH (e:Entity {uuid: 'foreign-pg'}) DETACH DELETE e")
}
