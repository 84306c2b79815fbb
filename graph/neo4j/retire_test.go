package neo4j_test

import (
	"context"
	"testing"

	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// TestStaleSupersessionRecomputed: a graph whose supersession an earlier
// rule computed (any superseder retired its target: here a's private
// record retiring c's shared memory) is recomputed under journal.Retires
// at Open when it does not record the rule, and the rule is recorded.
func TestStaleSupersessionRecomputed(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	by := func(agent string, scope journal.Scope) func(*journal.Record) {
		return func(r *journal.Record) { r.Agent, r.Scope = agent, scope }
	}
	supers := func(id string) func(*journal.Record) { return func(r *journal.Record) { r.Supersedes = []string{id} } }
	batch := []memsync.Memory{
		rec("c_shared", 1, "the deploy window is friday", by("c", journal.ScopeShared)),
		rec("a_repl", 2, "tuesday", by("a", journal.ScopePrivate), supers("c_shared")),
		rec("a_own", 3, "a's draft", by("a", journal.ScopePrivate)),
		rec("a_own_repl", 4, "a's plan", by("a", journal.ScopeShared), supers("a_own")),
	}
	if _, err := g.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	exec := cypher(t)
	exec("MATCH (m:Memory {uuid: 'c_shared'}), (s:Memory {uuid: 'a_repl'}) SET m.invalid_at = s.ts, m.replaced_by = s.uuid")
	exec("MATCH (x:MemsyncMeta {key: 'retire_rule'}) DELETE x")
	replacedBy := func(g memsync.Graph) map[string]string {
		nodes, err := g.Get(ctx, []string{"c_shared", "a_own"})
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"c_shared": nodes["c_shared"].ReplacedBy, "a_own": nodes["a_own"].ReplacedBy}
	}
	if got := replacedBy(g); got["c_shared"] != "a_repl" {
		t.Fatalf("stale supersession not in place: %v", got)
	}
	g2, err := neo4j.Open(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if got := replacedBy(g2); got["c_shared"] != "" || got["a_own"] != "a_own_repl" {
		t.Fatalf("after Open: replaced_by %v, want c_shared current and a_own retired by a_own_repl", got)
	}
	if n := len(exec("MATCH (x:MemsyncMeta {key: 'retire_rule'}) RETURN x")); n != 1 {
		t.Fatalf("%d retire_rule markers, want 1", n)
	}
}
