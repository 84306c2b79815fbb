package embedded

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// TestListKindPlans: a list of one of sparseKinds reads that kind's own
// index (a store without such a memory answers without reading the
// group's memories), and the common kinds are read at once through
// memories_recent, the way SQLite plans the statements List runs.
func TestListKindPlans(t *testing.T) {
	g := openTest(t)
	ctx := context.Background()
	plan := func(query string) string {
		t.Helper()
		args := namedArgs(query, map[string]any{"group": journal.SharedGroup, "kinds": `["fact"]`, "until": nil, "limit": 10})
		rows, err := g.rdb.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail sql.NullString
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail.String)
		}
		return strings.Join(out, "; ")
	}
	for _, k := range sparseKinds {
		q := memsync.ListQuery{Groups: []string{journal.SharedGroup}, Kinds: []journal.Kind{k, journal.KindFact}}
		apart, rest := kindParts(q)
		if len(apart) != 1 || apart[0] != k || rest == nil || len(rest.Kinds) != 1 || rest.Kinds[0] != journal.KindFact {
			t.Fatalf("kindParts(%v) = %v, %+v", q.Kinds, apart, rest)
		}
		if p := plan(listSQL(q, k)); !strings.Contains(p, "memories_kind_"+string(k)) {
			t.Errorf("the list of %s: plan %q, want its index", k, p)
		}
		if p := plan(listSQL(*rest, "")); !strings.Contains(p, "memories_recent") {
			t.Errorf("the list of facts: plan %q, want memories_recent", p)
		}
	}
	if apart, rest := kindParts(memsync.ListQuery{Kinds: []journal.Kind{journal.KindDecision}, Task: "t"}); apart != nil || rest == nil {
		t.Errorf("a task's window: kinds read apart %v, want all at once", apart)
	}
}
