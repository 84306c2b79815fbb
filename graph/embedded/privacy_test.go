package embedded

import (
	"context"
	"testing"

	"github.com/memsync/memsync/journal"
)

// TestStaleSupersessionRecomputed: a store whose supersession an earlier
// rule computed (any superseder retired its target: here a's private
// record retiring c's shared memory) is recomputed under journal.Retires
// the first time a writer opens it, and only then.
func TestStaleSupersessionRecomputed(t *testing.T) {
	dir := t.TempDir()
	g, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	private := func(agent string) func(*journal.Record) {
		return func(r *journal.Record) { r.Agent, r.Scope = agent, journal.ScopePrivate }
	}
	shared := mem("c_shared", 1, "the deploy window is friday")
	shared.Agent = "c"
	ownRepl := mem("a_own_repl", 4, "a's plan", supers("a_own")) // shared, by a
	ownRepl.Agent = "a"
	apply(t, g, shared, mem("a_repl", 2, "tuesday", private("a"), supers("c_shared")),
		mem("a_own", 3, "a's draft", private("a")), ownRepl)
	// What the earlier rule left: c_shared retired by a's private record,
	// and no record of the rule.
	g.mu.Lock()
	ctx := context.Background()
	_, err = g.w.conn.ExecContext(ctx, `INSERT INTO superseded (id, invalid_at, replaced_by)
		SELECT id, '2026-11-20T09:00:02.000000000Z', 'a_repl' FROM memories WHERE uuid = 'c_shared'`)
	if err == nil {
		_, err = g.w.conn.ExecContext(ctx, `DELETE FROM meta WHERE key = 'retire_rule'`)
	}
	g.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	replacedBy := func(g *Graph) map[string]string {
		nodes, err := g.Get(ctx, []string{"c_shared", "a_own"})
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"c_shared": nodes["c_shared"].ReplacedBy, "a_own": nodes["a_own"].ReplacedBy}
	}
	if got := replacedBy(g); got["c_shared"] != "a_repl" {
		t.Fatalf("stale row not in place: %v", got)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	g, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := replacedBy(g); got["c_shared"] != "" || got["a_own"] != "a_own_repl" {
		t.Fatalf("after reopening: replaced_by %v, want c_shared current and a_own retired by a_own_repl", got)
	}
}
