package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/recall"
)

// lexicalPair runs lexicalTerms (only the best matches tested against the
// filters) and lexicalAll (every match tested) for text with pool, and
// fails unless they give the same candidates in the same order with the
// same scores.
func lexicalPair(t *testing.T, g *Graph, text string, kinds []journal.Kind, pool int) []candidate {
	t.Helper()
	ctx := context.Background()
	groups := []string{journal.SharedGroup}
	gj, _ := json.Marshal(groups)
	f := filter{groups: string(gj)}
	if kinds != nil {
		kj, _ := json.Marshal(kinds)
		f.kinds = string(kj)
	}
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := g.lexicalTerms(ctx, recall.ParseQuery(text).Terms, f, pool)
	if err != nil {
		t.Fatal(err)
	}
	want, err := lexicalAll(ctx, g, recall.ParseQuery(text).Terms, f, pool)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(got)) != fmt.Sprint(ids(want)) {
		t.Fatalf("lexical = %v, ranking every match gives %v", ids(got), ids(want))
	}
	for i := range got {
		if got[i].score != want[i].score || !got[i].ts.Equal(want[i].ts) {
			t.Fatalf("candidate %d: %+v, ranking every match gives %+v", i, got[i], want[i])
		}
	}
	return got
}

// lexicalAll is lexicalTerms testing every match against the filters.
func lexicalAll(ctx context.Context, g *Graph, terms []string, f filter, pool int) ([]candidate, error) {
	visible, err := lexVisible(ctx, g.rdb, f.groups)
	if err != nil {
		return nil, err
	}
	hits, _, err := lexScores(ctx, g.rdb, visible, terms)
	if err != nil {
		return nil, err
	}
	out, settled, err := g.lexicalTop(ctx, g.rdb, hits, f, pool, len(hits)+1)
	if err == nil && !settled {
		err = fmt.Errorf("testing all %d matches did not settle", len(hits))
	}
	return out, err
}

func ids(cs []candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.uuid
	}
	return out
}

// TestLexicalTopSettles: testing the best pool×topFetch matches against
// the filters first gives what testing every match gives: when the
// matches tie across the cut (the newest of the tied ones were stored
// last, so the cut alone would drop them), when the filters reject the
// best matches (a second, larger fetch), and when they reject more than
// that one holds (every match ranked).
func TestLexicalTopSettles(t *testing.T) {
	const pool = 3
	kind := func(k journal.Kind) func(*journal.Record) { return func(r *journal.Record) { r.Kind = k } }
	for _, tc := range []struct {
		name   string
		strong int // facts "zebra zebra zebra"
		weak   int // decisions with zebra among other words
		tied   int // facts "zebra", same rank, stored oldest first
		text   string
		kinds  []journal.Kind
		want   int
	}{
		{name: "settled by the first fetch", strong: 10, weak: 3, text: "zebra", want: pool},
		{name: "ties across the cut", tied: 20, text: "zebra", want: pool},
		{name: "filters reject the first fetch", strong: 10, weak: 3, text: "zebra", kinds: []journal.Kind{journal.KindDecision}, want: 3},
		{name: "filters reject every fetch", strong: 60, weak: 2, text: "zebra", kinds: []journal.Kind{journal.KindDecision}, want: 2},
		{name: "fewer matches than the pool", weak: 2, text: "zebra", want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := openTest(t)
			sec := 0
			var batch []memsync.Memory
			for i := 0; i < tc.strong; i++ {
				sec++
				batch = append(batch, mem(fmt.Sprintf("s%03d", i), sec, "zebra zebra zebra"))
			}
			for i := 0; i < tc.weak; i++ {
				sec++
				batch = append(batch, mem(fmt.Sprintf("w%03d", i), sec, "a zebra among many other words of a decision", kind(journal.KindDecision)))
			}
			for i := 0; i < tc.tied; i++ {
				sec++
				batch = append(batch, mem(fmt.Sprintf("t%03d", i), sec, "zebra"))
			}
			apply(t, g, batch...)
			got := lexicalPair(t, g, tc.text, tc.kinds, pool)
			if len(got) != tc.want {
				t.Fatalf("%d candidates %v, want %d", len(got), ids(got), tc.want)
			}
		})
	}
}

// TestLexicalEmpty: on a store with nothing indexed, or no memory of the
// reader's groups, a query finds nothing, without an error.
func TestLexicalEmpty(t *testing.T) {
	g := openTest(t)
	for _, text := range []string{"alpha", "alpha zeta"} {
		hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: text, Groups: []string{journal.SharedGroup}})
		if err != nil || len(hits) != 0 {
			t.Fatalf("Search(%q) on an empty store = %v, %v; want nothing, no error", text, hits, err)
		}
	}
	apply(t, g, mem("p", 1, "alpha zeta", func(r *journal.Record) { r.Scope = journal.ScopePrivate }))
	hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "alpha", Groups: []string{journal.SharedGroup}})
	if err != nil || len(hits) != 0 {
		t.Fatalf("Search of the shared group, only a private memory stored = %v, %v; want nothing", hits, err)
	}
}

// TestFilterIndexDropped: a store written with memories_filter (before
// memsync's own full-text index) loses it at Open, and Search still
// filters by group, kind and supersession.
func TestFilterIndexDropped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g := reopen(t, dir)
	apply(t, g, mem("a", 1, "zebra crossing"), mem("b", 2, "zebra decision", func(r *journal.Record) { r.Kind = journal.KindDecision }),
		mem("c", 3, "zebra newer", supers("a")))
	if _, err := g.w.conn.ExecContext(ctx, `CREATE INDEX memories_filter ON memories (id, group_id, kind, ts, uuid)`); err != nil {
		t.Fatal(err)
	}
	closeGraph(t, g)
	g = reopen(t, dir)
	var n int
	if err := g.rdb.QueryRowContext(ctx, `SELECT count(*) FROM main.sqlite_schema WHERE name = 'memories_filter'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("memories_filter after Open: %d (%v), want gone", n, err)
	}
	for _, tc := range []struct {
		q    memsync.SearchQuery
		want []string
	}{
		{memsync.SearchQuery{Text: "zebra", Groups: []string{journal.SharedGroup}}, []string{"b", "c"}},
		{memsync.SearchQuery{Text: "zebra", Groups: []string{journal.SharedGroup}, All: true}, []string{"a", "b", "c"}},
		{memsync.SearchQuery{Text: "zebra", Groups: []string{journal.SharedGroup}, Kinds: []journal.Kind{journal.KindDecision}}, []string{"b"}},
		{memsync.SearchQuery{Text: "zebra", Groups: []string{journal.PrivateGroup("alice")}}, nil},
	} {
		hits, err := read.Search(ctx, g, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.UUID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Search(%+v) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestGroupNumbersReadPerTransaction: another process's indexer may empty
// the search file's index and number the groups anew (here done by hand:
// bob's group becomes number 0, which was alice's). The next memory this
// indexer adds must carry its group's number as the file has it now, not
// as this process last read it, or it is found under another group's
// number (the SQL guard on group_id then hides it from everyone).
func TestGroupNumbersReadPerTransaction(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g := reopen(t, dir)
	private := func(agent string) func(*journal.Record) {
		return func(r *journal.Record) { r.Agent, r.Scope = agent, journal.ScopePrivate }
	}
	apply(t, g, mem("a1", 1, "zebra of alice", private("alice")), mem("b1", 2, "zebra of bob", private("bob")))
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, SearchFileName)))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(lexReset, `INSERT INTO lex_groups (ord, name) VALUES (0, 'AGENT:bob')`) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	apply(t, g, mem("a2", 3, "zebra of alice again", private("alice")))
	hits, err := read.Search(ctx, g, memsync.SearchQuery{Text: "zebra", Groups: []string{journal.PrivateGroup("alice")}})
	// a1, no longer in the emptied index, may join as a2's episode neighbour.
	if hits = lexicalHits(hits); err != nil || len(hits) != 1 || hits[0].UUID != "a2" {
		t.Fatalf("Search as alice = %v, %v; want a2", hits, err)
	}
	hits, err = read.Search(ctx, g, memsync.SearchQuery{Text: "zebra", Groups: []string{journal.PrivateGroup("bob")}})
	if err != nil || len(hits) != 0 {
		t.Fatalf("Search as bob = %v, %v; want nothing (the index was emptied)", hits, err)
	}
}
