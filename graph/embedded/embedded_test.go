package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

func openTest(t testing.TB) *Graph {
	t.Helper()
	g, err := Open(t.TempDir(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	})
	return g
}

func TestConformance(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) memsync.Graph { return openTest(t) })
}

var clock = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func mem(uuid string, sec int, text string, opts ...func(*journal.Record)) memsync.Memory {
	r := journal.Record{
		UUID: uuid, TS: clock.Add(time.Duration(sec) * time.Second), Agent: "alice",
		Kind: journal.KindFact, Scope: journal.ScopeShared, Text: text,
	}
	for _, o := range opts {
		o(&r)
	}
	return memsync.Memory{Record: r, Path: "agents/alice/memory/journal/2026-11-20.jsonl", Line: sec + 1}
}

func supers(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.Supersedes = ids }
}

func apply(t testing.TB, g *Graph, batch ...memsync.Memory) memsync.ApplyResult {
	t.Helper()
	res, err := g.Apply(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestQueryNeverSyntax: a query's words are looked up as terms, whatever
// the query holds: what would be syntax to a full-text engine finds the
// memories holding its words.
func TestQueryNeverSyntax(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("a", 1, "drop the table of memories"), mem("b", 2, "foo and bar near the lag"), mem("c", 3, "café naïve 日本語"))
	for _, tc := range []struct{ in, want string }{
		{`foo:bar AND (`, "b"},
		{`NEAR(`, "b"},
		{`'; DROP TABLE memories; --`, "a"},
		{"LAG lag", "b"},
		{"cafe naive", "c"},
		{"日本語*", "c"},
	} {
		hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: tc.in, Groups: []string{journal.SharedGroup}})
		if err != nil || len(hits) == 0 || hits[0].UUID != tc.want {
			t.Errorf("Search(%q) = %v, %v; want %s first", tc.in, hits, err, tc.want)
		}
	}
}

// Words that are only symbols to this tokenizer but letters or digits to
// FTS5, or the reverse, must still search without an error.
func TestSearchOddWords(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("a", 1, "x² ½ Ⅻ ǅ e\u0301 ﬁ"))
	for _, q := range []string{"x²", "½", "Ⅻ", "ǅ", "e\u0301", "\u0301", "ﬁ", "fi", `""""`, "a\x00b"} {
		if _, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: q, Groups: []string{journal.SharedGroup}}); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
	hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "e", Groups: []string{journal.SharedGroup}})
	if err != nil || len(hits) != 1 {
		t.Errorf("diacritics removed: %v, %v", hits, err)
	}
	// Words after a NUL byte are indexed too.
	apply(t, g, mem("nul", 2, "before \x00 afterwards <&> \u2028 end"))
	for _, q := range []string{"afterwards", "end"} {
		hits, err = read.Search(context.Background(), g, memsync.SearchQuery{Text: q, Groups: []string{journal.SharedGroup}})
		if hits = lexicalHits(hits); err != nil || len(hits) != 1 || hits[0].UUID != "nul" {
			t.Errorf("Search(%q) = %v, %v", q, hits, err)
		}
	}
}

func TestStemming(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("a", 1, "we deployed the release"), mem("b", 2, "nothing here"))
	hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "deploying", Groups: []string{journal.SharedGroup}})
	if hits = lexicalHits(hits); err != nil || len(hits) != 1 || hits[0].UUID != "a" {
		t.Fatalf("porter stemming: %v, %v", hits, err)
	}
	// Entity names and tags are indexed too.
	apply(t, g, mem("c", 3, "see the page", func(r *journal.Record) { r.Entities = []string{"Globex"}; r.Tags = []string{"billing"} }))
	for _, q := range []string{"globex", "billing"} {
		hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: q, Groups: []string{journal.SharedGroup}})
		if hits = lexicalHits(hits); err != nil || len(hits) != 1 || hits[0].UUID != "c" {
			t.Errorf("Search(%q) = %v, %v", q, hits, err)
		}
	}
}

func TestSearchTiesNewestFirst(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("b", 1, "same words"), mem("a", 1, "same words"), mem("c", 5, "same words"))
	hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "words", Groups: []string{journal.SharedGroup}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.UUID)
	}
	if strings.Join(ids, ",") != "c,a,b" {
		t.Fatalf("ties = %v, want c,a,b (ts desc, then uuid)", ids)
	}
}

func TestSupersessionTie(t *testing.T) {
	// Two superseders with the same ts: the smallest uuid wins, whatever the order.
	for _, order := range [][]string{{"x", "s2", "s1"}, {"s1", "s2", "x"}, {"s2", "x", "s1"}} {
		g := openTest(t)
		ms := map[string]memsync.Memory{
			"x":  mem("x", 1, "old"),
			"s1": mem("s1", 5, "new one", supers("x")),
			"s2": mem("s2", 5, "new two", supers("x")),
		}
		for _, id := range order {
			apply(t, g, ms[id])
		}
		n, err := g.Get(context.Background(), []string{"x"})
		if err != nil {
			t.Fatal(err)
		}
		if x := n["x"]; x.ReplacedBy != "s1" || !x.InvalidAt.Equal(clock.Add(5*time.Second)) {
			t.Errorf("order %v: replaced_by %q invalid_at %v", order, x.ReplacedBy, x.InvalidAt)
		}
	}
}

func TestRecordError(t *testing.T) {
	g := openTest(t)
	bad := mem("bad", 1, "fine text")
	bad.Kind = "gossip"
	_, err := g.Apply(context.Background(), []memsync.Memory{mem("ok", 0, "ok"), bad})
	var re *memsync.RecordError
	if !errors.As(err, &re) || re.UUID != "bad" {
		t.Fatalf("err = %v, want a RecordError for bad", err)
	}
	noID := mem("", 1, "x")
	if _, err := g.Apply(context.Background(), []memsync.Memory{noID}); !errors.As(err, &re) {
		t.Fatalf("no uuid: err = %v", err)
	}
	if st, _ := g.Stats(context.Background()); st.Memories != 0 {
		t.Fatalf("a refused batch must write nothing: %+v", st)
	}
}

// TestTables checks the rows behind the nodes: edges (also to uuids not yet
// projected), supersession, agents; and that the search file keeps no
// entities or mentions tables (a memory's mentions are its record's:
// graphtest checks every node's Mentions on both backends).
func TestTables(t *testing.T) {
	g := openTest(t)
	apply(t, g,
		mem("a", 1, "talked to @Mira about [[Q3 Plan]]", func(r *journal.Record) {
			r.Scope = journal.ScopePrivate
			r.Links = []string{"ghost", "ghost"}
			r.ConflictsWith = []string{"b"}
		}),
		mem("b", 2, "@Mira again", supers("a")))
	if err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	db := g.rdb // the main file, with the search file attached
	dump := func(q string) string {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []string
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, v := range vals {
				parts = append(parts, v.String)
			}
			out = append(out, strings.Join(parts, " "))
		}
		return strings.Join(out, "; ")
	}
	for q, want := range map[string]string{
		`SELECT src, type, dst FROM edges ORDER BY 1, 2, 3`:                                                         "b SUPERSEDES a",
		`SELECT m.uuid, s.type, s.dst FROM search.signals AS s JOIN memories AS m ON m.id = s.src ORDER BY 1, 2, 3`: "a CONFLICTS_WITH b; a LINKS_TO ghost",
		`SELECT count(*) FROM search.sqlite_schema WHERE name IN ('entities', 'mentions')`:                          "0",
		`SELECT m.uuid, x.invalid_at, x.replaced_by FROM superseded AS x JOIN memories AS m USING (id)`:             "a 2026-11-20T09:00:02.000000000Z b",
		`SELECT name, memories FROM agents`:                                                                         "alice 2",
		`SELECT uuid, importance FROM memories ORDER BY uuid`:                                                       "a 0.5; b 0.5",
		`PRAGMA user_version`: "4",
		`PRAGMA journal_mode`: "wal",
	} {
		if got := dump(q); got != want {
			t.Errorf("%s\n got %s\nwant %s", q, got, want)
		}
	}
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	g, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, graphtest.Corpus(9, 50)...)
	want := graphtest.Dump(t, g)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := g.Stats(context.Background()); err == nil {
		t.Error("Stats after Close must fail")
	}
	if _, err := g.Apply(context.Background(), graphtest.Corpus(9, 1)); err == nil {
		t.Error("Apply after Close must fail")
	}
	g, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := graphtest.Dump(t, g); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatal("reopened store differs")
	}
	abs, _ := filepath.Abs(filepath.Join(dir, FileName))
	if g.Identity() != "embedded:"+abs {
		t.Errorf("Identity = %q", g.Identity())
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	g, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	_, err = g.w.conn.ExecContext(context.Background(), `PRAGMA user_version = 99`)
	g.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if _, err := Open(dir, nil); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

func TestOddDirectoryName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%20chars&x=y")
	g, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	apply(t, g, mem("a", 1, "hello"))
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Fatalf("database not where it should be: %v", err)
	}
}

func TestDiskFull(t *testing.T) {
	g := openTest(t)
	// A page limit makes SQLite report SQLITE_FULL exactly as a full disk does.
	g.mu.Lock()
	_, err := g.w.conn.ExecContext(context.Background(), `PRAGMA max_page_count = 40`)
	g.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Apply(context.Background(), graphtest.Corpus(1, 2000))
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, memsync.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrDiskFull and ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), g.Path()) {
		t.Errorf("message does not name the problem: %v", err)
	}
	t.Log(err)
	if st, err := g.Stats(context.Background()); err != nil || st.Memories != 0 {
		t.Fatalf("the failed batch must leave nothing: %+v, %v", st, err)
	}
	// Room again: the same batch goes through.
	g.mu.Lock()
	_, err = g.w.conn.ExecContext(context.Background(), `PRAGMA max_page_count = 1000000`)
	g.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, graphtest.Corpus(1, 2000)...)
}

func TestCancelledApply(t *testing.T) {
	g := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Apply(ctx, graphtest.Corpus(1, 10)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	apply(t, g, graphtest.Corpus(1, 10)...)
}

// TestConcurrent runs writers, walkers and searchers at once (for -race), and
// a Walk whose callback reads and writes the graph.
func TestConcurrent(t *testing.T) {
	g := openTest(t)
	corpus := graphtest.Corpus(11, 2000)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w * 100; i < len(corpus); i += 200 {
				if _, err := g.Apply(ctx, corpus[i:i+100]); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := read.Search(ctx, g, memsync.SearchQuery{Text: "deploy cache", Groups: []string{journal.SharedGroup}}); err != nil {
					t.Error(err)
				}
				if err := g.Walk(ctx, func(memsync.Node) error { return nil }); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if st, err := g.Stats(ctx); err != nil || st.Memories != len(corpus) {
		t.Fatalf("Stats = %+v, %v", st, err)
	}
	stop := errors.New("stop")
	seen := 0
	err := g.Walk(ctx, func(n memsync.Node) error {
		if _, err := g.Get(ctx, []string{n.UUID}); err != nil {
			return err
		}
		if seen == 0 {
			if _, err := g.Apply(ctx, []memsync.Memory{mem("zzz", 1, "written during a walk")}); err != nil {
				return err
			}
		}
		if seen++; seen == 500 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Walk = %v, want fn's error", err)
	}
}

// A large batch is prepared in chunks on several goroutines: duplicates
// across chunks, and a bad record far into the batch, behave as in a small one.
func TestLargeBatch(t *testing.T) {
	g := openTest(t)
	corpus := graphtest.Corpus(21, 1000)
	batch := append([]memsync.Memory(nil), corpus...)
	same := corpus[10]    // an exact replay, in a later chunk
	changed := corpus[20] // same uuid, other text, in a later chunk
	changed.Text = "rewritten " + changed.Text
	batch = append(batch, same, changed)

	bad := append([]memsync.Memory(nil), batch...)
	bad[900].Kind = "gossip"
	bad[950].Agent = "not valid!"
	_, err := g.Apply(context.Background(), bad)
	var re *memsync.RecordError
	if !errors.As(err, &re) || re.UUID != bad[900].UUID {
		t.Fatalf("err = %v, want a RecordError for the first bad record %s", err, bad[900].UUID)
	}
	if st, _ := g.Stats(context.Background()); st.Memories != 0 {
		t.Fatalf("a refused batch must write nothing: %+v", st)
	}

	res := apply(t, g, batch...)
	if len(res.Mismatched) != 1 || res.Mismatched[0] != changed.UUID {
		t.Fatalf("Mismatched = %v, want [%s]", res.Mismatched, changed.UUID)
	}
	n, err := g.Get(context.Background(), []string{changed.UUID})
	if err != nil || n[changed.UUID].Text != corpus[20].Text {
		t.Fatalf("first occurrence must win: %v, %v", n[changed.UUID].Text, err)
	}
	want := graphtest.Dump(t, g)
	// The same set in small batches gives the same projection.
	if err := g.Drop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := len(corpus); i > 0; i -= 7 {
		apply(t, g, corpus[max(0, i-7):i]...)
	}
	if got := graphtest.Dump(t, g); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatal("batching changed the projection")
	}
}

// supersede_waiting holds exactly the SUPERSEDES edges whose target has not
// arrived yet. The target arrives alone (its uuid matched in SQLite) or in
// a batch of many (the waiting table read whole and matched in Go:
// waitedFor), and both retire it the same way.
func TestSupersedeWaiting(t *testing.T) {
	for _, pad := range []int{0, 12} {
		t.Run(fmt.Sprintf("pad%d", pad), func(t *testing.T) { testSupersedeWaiting(t, pad) })
	}
}

func testSupersedeWaiting(t *testing.T, pad int) {
	g := openTest(t)
	waiting := func() string {
		rows, err := g.rdb.Query(`SELECT dst || '<-' || src FROM supersede_waiting ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		return strings.Join(out, ",")
	}
	apply(t, g, mem("s1", 5, "one", supers("x", "y")), mem("y", 1, "y arrives with its superseder"))
	if w := waiting(); w != "x<-s1" {
		t.Fatalf("waiting = %q, want x<-s1", w)
	}
	apply(t, g, mem("s0", 3, "zero", supers("x")))
	if w := waiting(); w != "x<-s0,x<-s1" {
		t.Fatalf("waiting = %q", w)
	}
	last := []memsync.Memory{mem("x", 1, "x arrives last")}
	for i := range pad {
		last = append(last, mem(fmt.Sprintf("p%02d", i), 2, "padding"))
	}
	apply(t, g, last...)
	if w := waiting(); w != "" {
		t.Fatalf("waiting = %q, want empty", w)
	}
	n, err := g.Get(context.Background(), []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	if n["x"].ReplacedBy != "s0" || n["y"].ReplacedBy != "s1" {
		t.Fatalf("x replaced by %q, y by %q", n["x"].ReplacedBy, n["y"].ReplacedBy)
	}
}

// testdata/schema-v1/graph.db, schema-v2/graph.db and schema-v3/graph.db
// were written by the version 1, 2 and 3 schemas (Corpus(11, 150) in
// batches of 40; for version 3 a third of them of the core tier,
// tieredCorpus). Open migrates each in place: afterwards it holds what a
// fresh store holds, and searches it, lists it and reads its signals the
// same way (its search file built again from the records).
func TestMigrate(t *testing.T) {
	for _, fixture := range []string{"schema-v1", "schema-v2", "schema-v3"} {
		t.Run(fixture, func(t *testing.T) { testMigrate(t, fixture) })
	}
}

func testMigrate(t *testing.T, fixture string) {
	dir := t.TempDir()
	old, err := os.ReadFile(filepath.Join("testdata", fixture, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), old, 0o644); err != nil {
		t.Fatal(err)
	}
	migrated, err := Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer migrated.Close()
	fresh := openTest(t)
	corpus := graphtest.Corpus(11, 150)
	if fixture == "schema-v3" {
		corpus = tieredCorpus()
	}
	apply(t, fresh, corpus...)

	if got, want := graphtest.Dump(t, migrated), graphtest.Dump(t, fresh); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("migrated store differs from a fresh one (%d and %d memories)", len(got), len(want))
	}
	for _, q := range []string{"deploy", "kafka lag", "database migration rollback", "@Shaun"} {
		for _, agent := range []string{"alice", "bob"} {
			sq := memsync.SearchQuery{Text: q, Groups: []string{journal.SharedGroup, journal.PrivateGroup(agent)}, Limit: 20, All: true}
			got, err := read.Search(context.Background(), migrated, sq)
			if err != nil {
				t.Fatal(err)
			}
			want, err := read.Search(context.Background(), fresh, sq)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || len(got) != len(want) {
				t.Fatalf("Search(%q) as %s: %d hits after migration, %d fresh", q, agent, len(got), len(want))
			}
			for i := range got {
				if got[i].UUID != want[i].UUID || got[i].Score != want[i].Score {
					t.Fatalf("Search(%q) as %s, hit %d: %s %v after migration, %s %v fresh",
						q, agent, i, got[i].UUID, got[i].Score, want[i].UUID, want[i].Score)
				}
			}
		}
	}
	var v int
	if err := migrated.rdb.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version = %d, %v", v, err)
	}
	// What moved to the search file is gone from the main one.
	var moved, signals int
	if err := migrated.rdb.QueryRow(`SELECT count(*) FROM main.sqlite_schema
		WHERE name IN ('memories_fts', 'entities', 'mentions', 'edges_signals')`).Scan(&moved); err != nil || moved != 0 {
		t.Fatalf("main file still has %d of the moved tables (%v)", moved, err)
	}
	if err := migrated.rdb.QueryRow(`SELECT count(*) FROM main.edges WHERE type <> 'SUPERSEDES'`).Scan(&signals); err != nil || signals != 0 {
		t.Fatalf("main file still has %d edges that carry signals (%v)", signals, err)
	}
	var uuids []string
	if err := fresh.Walk(context.Background(), func(n memsync.Node) error {
		uuids = append(uuids, n.UUID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := incomingDump(t, migrated, uuids), incomingDump(t, fresh, uuids); got != want || !strings.Contains(want, "LINKS_TO") {
		t.Fatalf("signals after migration:\n%s\nfresh:\n%s", got, want)
	}
	for _, core := range []bool{false, true} {
		q := memsync.ListQuery{Groups: []string{journal.SharedGroup, journal.PrivateGroup("alice")}, Core: core, Limit: 100}
		got, want := listUUIDs(t, migrated, q), listUUIDs(t, fresh, q)
		if !slices.Equal(got, want) || len(want) == 0 && (!core || fixture == "schema-v3") {
			t.Fatalf("List(core %t) after migration: %v; fresh: %v", core, got, want)
		}
	}
	// Writes go on where the migrated file left off.
	apply(t, migrated, mem("after", 1, "xylophone written after the migration"))
	if hits, err := read.Search(context.Background(), migrated, memsync.SearchQuery{Text: "xylophone", Groups: []string{journal.SharedGroup}}); err != nil || len(hits) != 1 {
		t.Fatalf("search after migration: %v, %v", hits, err)
	}
}

// tieredCorpus is Corpus(11, 150) with every third memory of the core tier.
func tieredCorpus() []memsync.Memory {
	c := graphtest.Corpus(11, 150)
	for i := range c {
		if i%3 == 0 {
			c[i].Tier = "core"
		}
	}
	return c
}

func listUUIDs(t *testing.T, g *Graph, q memsync.ListQuery) []string {
	t.Helper()
	nodes, err := g.List(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes {
		out = append(out, n.UUID)
	}
	return out
}

// A group name is never read as query syntax, whatever its bytes, and sees
// only its own memories.
func TestSearchOddGroups(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("shared", 1, "zebra crossing"), mem("priv", 2, "zebra private", func(r *journal.Record) { r.Scope = journal.ScopePrivate }))
	for _, grp := range []string{`"`, `grp : (`, "\x00", "\xff\xfe", `AGENT:alice" OR "x`, "CONSTELLATION ", "constellation", "AGENT:*", ""} {
		hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "zebra", Groups: []string{grp}, All: true})
		if err != nil || len(hits) != 0 {
			t.Errorf("Search as group %q = %v, %v; want nothing", grp, hits, err)
		}
	}
	hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "zebra", Groups: []string{"\x00", journal.PrivateGroup("alice")}})
	if err != nil || len(hits) != 1 || hits[0].UUID != "priv" {
		t.Errorf("Search as alice = %v, %v; want priv", hits, err)
	}
}

// Words ANDed rank alone when there are enough of them; otherwise every
// memory holding any word is ranked.
func TestSearchAllWordsFirst(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("both1", 1, "kafka lag"), mem("both2", 2, "kafka lag again"), mem("one", 3, "kafka kafka kafka"))
	ids := func(limit int) string {
		return strings.Join(searchIDs(t, g, memsync.SearchQuery{Text: "kafka lag", Groups: []string{journal.SharedGroup}, Limit: limit}), ",")
	}
	if got := ids(2); got != "both1,both2" {
		t.Errorf("limit 2: %s, want both1,both2", got)
	}
	if got := ids(3); got != "both1,both2,one" {
		t.Errorf("limit 3: %s, want all three", got)
	}
}
