package neo4j_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

func TestConformance(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) memsync.Graph { return neo4jtest.Open(t) })
}

// The conformance suite again with every write inside a rebuild, where
// Apply does not look up the uuids the build has not written yet: clashes,
// replays, placeholders filled in any order and supersessions come out
// as they do outside one.
func TestConformanceWhileBuilding(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) memsync.Graph {
		g := neo4jtest.Open(t)
		if err := g.BeginRebuild(context.Background()); err != nil {
			t.Fatalf("begin rebuild: %v", err)
		}
		return g
	})
}

func TestUnreachableIsUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	g, err := neo4j.Open(ctx, neo4j.Config{
		URI: "bolt://127.0.0.1:1", User: "neo4j", Password: "s3cret-never-shown",
		ConnectTimeout: time.Second, MaxRetryTime: time.Second,
	}, nil)
	if err == nil {
		g.Close()
		t.Fatal("Open of a closed port succeeded")
	}
	t.Logf("Open: %v", err)
	if !errors.Is(err, memsync.ErrUnavailable) {
		t.Fatalf("error %v does not wrap memsync.ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error leaks the password: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failing took %v", d)
	}
}

func TestCredentialsInURIRefused(t *testing.T) {
	_, err := neo4j.Open(context.Background(), neo4j.Config{URI: "bolt://neo4j:hunter2@127.0.0.1:1"}, nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v", err)
	}
}

func TestIdentity(t *testing.T) {
	g := neo4jtest.Open(t)
	id := g.Identity()
	if !strings.HasPrefix(id, "neo4j:") || !strings.Contains(id, ":7687/") && !strings.Contains(id, "/") {
		t.Fatalf("Identity = %q", id)
	}
	if cfg := neo4jtest.Config(t); cfg.Password != "" && strings.Contains(id, cfg.Password) {
		t.Fatalf("Identity leaks the password")
	}
}

func rec(uuid string, sec int, text string, opts ...func(*journal.Record)) memsync.Memory {
	r := journal.Record{
		UUID: uuid, TS: time.Date(2026, 11, 20, 9, 0, sec, 123456789, time.UTC), Agent: "alice",
		Kind: journal.KindFact, Scope: journal.ScopeShared, Text: text,
	}
	for _, o := range opts {
		o(&r)
	}
	return memsync.Memory{Record: r, Path: "agents/alice/memory/journal/2026-11-20.jsonl", Line: sec + 1}
}

func TestNanosecondsAndSupersessionTie(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	sup := func(ids ...string) func(*journal.Record) { return func(r *journal.Record) { r.Supersedes = ids } }
	// b and a supersede x at the same instant: the smaller uuid wins, in any order.
	for _, order := range [][]memsync.Memory{
		{rec("x", 1, "old"), rec("b", 5, "new b", sup("x")), rec("a", 5, "new a", sup("x"))},
		{rec("a", 5, "new a", sup("x")), rec("b", 5, "new b", sup("x")), rec("x", 1, "old")},
	} {
		if err := g.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		for _, m := range order {
			if _, err := g.Apply(ctx, []memsync.Memory{m}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := g.Get(ctx, []string{"x"})
		if err != nil {
			t.Fatal(err)
		}
		x := got["x"]
		want := time.Date(2026, 11, 20, 9, 0, 5, 123456789, time.UTC)
		if x.ReplacedBy != "a" || !x.InvalidAt.Equal(want) || x.InvalidAt.Nanosecond() != 123456789 {
			t.Fatalf("x replaced_by %q invalid_at %v", x.ReplacedBy, x.InvalidAt)
		}
		if x.TS.Nanosecond() != 123456789 {
			t.Fatalf("ts lost nanoseconds: %v", x.TS)
		}
	}
}

func TestInvalidAndOversizedRecords(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	bad := rec("bad", 2, "   ")
	huge := rec("huge", 3, "entity too long to index", func(r *journal.Record) {
		r.Entities = []string{strings.Repeat("E", 40000)}
	})
	res, err := g.Apply(ctx, []memsync.Memory{rec("ok1", 1, "fine"), bad, huge, rec("ok2", 4, "fine too")})
	var re *memsync.RecordError
	if !errors.As(err, &re) || re.UUID != "bad" {
		t.Fatalf("Apply error = %v, want a RecordError for bad", err)
	}
	if len(res.Mismatched) != 0 {
		t.Fatalf("Mismatched = %v", res.Mismatched)
	}
	got, err := g.Get(ctx, []string{"ok1", "ok2", "bad"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || got["ok1"].UUID == "" || got["ok2"].UUID == "" {
		t.Fatalf("good records of the batch not projected: %v", got)
	}
	// A record the server refuses is located and named.
	_, err = g.Apply(ctx, []memsync.Memory{rec("ok3", 5, "fine"), huge})
	if err != nil && (!errors.As(err, &re) || re.UUID != "huge") {
		t.Fatalf("Apply error = %v, want a RecordError for huge", err)
	}
	if err != nil {
		t.Logf("oversized entity refused: %v", err)
	}
	if got, _ := g.Get(ctx, []string{"ok3"}); len(got) != 1 {
		t.Fatalf("ok3 not projected next to the refused record")
	}
}

func TestSearchWidensUnderGroupFilter(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	// 600 memories of another group outscore the 3 visible ones: a naive
	// top-k from the index would find none of them.
	var batch []memsync.Memory
	for i := 0; i < 600; i++ {
		m := rec("other_"+strings.Repeat("0", 4-len(itoa(i)))+itoa(i), i%60, "needle needle needle")
		m.Agent, m.Scope = "bob", journal.ScopePrivate
		batch = append(batch, m)
	}
	for i := 0; i < 3; i++ {
		m := rec("mine_"+itoa(i), i, "needle in a long haystack of many many many other words here")
		m.Scope = journal.ScopePrivate
		batch = append(batch, m)
	}
	if _, err := g.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	hits, err := read.Search(ctx, g, memsync.SearchQuery{Text: "needle", Groups: []string{journal.PrivateGroup("alice")}, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("hits = %d, want 2", len(hits))
	}
	// Same score: newest first.
	if hits[0].UUID != "mine_2" || hits[1].UUID != "mine_1" {
		t.Fatalf("order = %s, %s", hits[0].UUID, hits[1].UUID)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}

// TestTextIndexUpgraded: a fulltext index created fully consistent (by an
// earlier version) is recreated eventually consistent at Open, and Search
// still sees what was written before and after.
func TestTextIndexUpgraded(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	if _, err := g.Apply(ctx, []memsync.Memory{rec("before", 1, "zanzibar before the upgrade")}); err != nil {
		t.Fatal(err)
	}
	exec := cypher(t)
	eventual := func() any {
		t.Helper()
		recs := exec("SHOW FULLTEXT INDEXES YIELD name, options WHERE name = '" + neo4j.IndexMemoryText + "'" +
			" RETURN options.indexConfig['fulltext.eventually_consistent']")
		if len(recs) != 1 {
			t.Fatalf("%d indexes named %s", len(recs), neo4j.IndexMemoryText)
		}
		return recs[0].Values[0]
	}
	if e := eventual(); e != true {
		t.Fatalf("Open created the index with eventually_consistent %v", e)
	}
	exec("DROP INDEX " + neo4j.IndexMemoryText)
	exec("CREATE FULLTEXT INDEX " + neo4j.IndexMemoryText + " FOR (m:Memory) ON EACH [m.text, m.keywords]")
	exec("CALL db.awaitIndexes(60)")
	if e := eventual(); e != false {
		t.Fatalf("old-style index has eventually_consistent %v", e)
	}
	g2, err := neo4j.Open(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if e := eventual(); e != true {
		t.Fatalf("Open left the index with eventually_consistent %v", e)
	}
	if _, err := g2.Apply(ctx, []memsync.Memory{rec("after", 2, "zanzibar after the upgrade")}); err != nil {
		t.Fatal(err)
	}
	hits, err := read.Search(ctx, g, memsync.SearchQuery{Text: "zanzibar", Groups: []string{journal.SharedGroup}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("%d hits after the upgrade, want 2", len(hits))
	}
}

// TestLegacyTextIndexReplaced: a store written by a version that indexed
// the raw text (standard analyzer, index memsync_memory_text, no terms
// property) is upgraded in place at Open: its memories get their analyzed
// terms, the old index is dropped, and Search finds them by their stems.
func TestLegacyTextIndexReplaced(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	old := rec("old", 1, "Caroline joined the zanzibar support group")
	old.Tags = []string{"Volunteering"}
	if _, err := g.Apply(ctx, []memsync.Memory{old}); err != nil {
		t.Fatal(err)
	}
	exec := cypher(t)
	exec("DROP INDEX " + neo4j.IndexMemoryText)
	exec("MATCH (m:Memory) REMOVE m.terms SET m.keywords = 'Volunteering'")
	exec("CREATE FULLTEXT INDEX memsync_memory_text FOR (m:Memory) ON EACH [m.text, m.keywords]")
	exec("CALL db.awaitIndexes(60)")
	g2, err := neo4j.Open(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if n := len(exec("SHOW INDEXES YIELD name WHERE name = 'memsync_memory_text' RETURN name")); n != 0 {
		t.Fatalf("the legacy index is still there")
	}
	for _, q := range []string{"joining zanzibar", "volunteer"} {
		hits, err := read.Search(ctx, g2, memsync.SearchQuery{Text: q, Groups: []string{journal.SharedGroup}})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].UUID != "old" {
			t.Fatalf("Search(%q) after the upgrade = %v, want [old]", q, hits)
		}
	}
}

// TestSearchSeesEveryCommit: the fulltext index is eventually consistent,
// yet Search, from this client or another one, finds a record as soon as
// Apply returned.
func TestSearchSeesEveryCommit(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	other, err := neo4j.Open(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i := 0; i < 40; i++ {
		word := "quokka" + itoa(i)
		batch := []memsync.Memory{rec("s"+itoa(i), i%60, word+" seen at once")}
		// Larger batches give the index's background thread more to do.
		for j := 0; j < i*20; j++ {
			batch = append(batch, rec("s"+itoa(i)+"_"+itoa(j), j%60, "filler text "+itoa(j)))
		}
		if _, err := g.Apply(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, reader := range []*neo4j.Graph{g, other} {
			hits, err := read.Search(ctx, reader, memsync.SearchQuery{Text: word, Groups: []string{journal.SharedGroup}})
			if err != nil {
				t.Fatal(err)
			}
			// The filler, seconds apart, is the hit's episode: only its
			// neighbours may join it.
			var lexical []memsync.Hit
			for _, h := range hits {
				if h.From == "" {
					lexical = append(lexical, h)
				}
			}
			if len(lexical) != 1 || lexical[0].UUID != "s"+itoa(i) {
				t.Fatalf("round %d: search right after Apply found %d lexical hits", i, len(lexical))
			}
		}
	}
}

// TestConcurrentWritersSameRecords: two clients projecting the same new
// records at once both succeed (the one that loses the race on a uuid looks
// the chunk up again) and the graph is the same as from one writer.
func TestConcurrentWritersSameRecords(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	corpus := graphtest.Corpus(11, 2000)
	if _, err := g.Apply(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	want := graphtest.Dump(t, g)
	other, err := neo4j.Open(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for round := 0; round < 3; round++ {
		if err := g.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 2)
		for _, w := range []*neo4j.Graph{g, other} {
			go func() {
				for i := 0; i < len(corpus); i += 100 {
					res, err := w.Apply(ctx, corpus[i:min(i+100, len(corpus))])
					if err == nil && len(res.Mismatched) > 0 {
						err = errors.New("mismatched: " + strings.Join(res.Mismatched, ","))
					}
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if got := graphtest.Dump(t, g); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("round %d: concurrent projection differs from a single writer's (%d nodes, want %d)", round, len(got), len(want))
		}
	}
}

// TestGraphModel checks the edges SPEC §4 names, as Cypher sees them, after
// a corpus whose links often point forward (placeholders filled later, in
// other chunks) was projected in small batches: every memory has exactly one
// WROTE, from the Agent named by its agent property; it MENTIONS exactly the
// Entity nodes of its own group that its record names, once each; no node
// is left a placeholder once its record arrived.
func TestGraphModel(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	corpus := graphtest.Corpus(5, 3000)
	// Newest first, in batches of 250: most links now point to records not
	// projected yet, so most memories fill a placeholder.
	for hi := len(corpus); hi > 0; hi -= 250 {
		batch := append([]memsync.Memory(nil), corpus[max(0, hi-250):hi]...)
		if _, err := g.Apply(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	exec := cypher(t)
	one := func(query string) int64 {
		t.Helper()
		n, _ := exec(query)[0].Values[0].(int64)
		return n
	}
	if n := one("MATCH (m:Memory) WHERE m.hash IS NOT NULL RETURN count(m)"); n != int64(len(corpus)) {
		t.Fatalf("%d memories, want %d", n, len(corpus))
	}
	if n := one("MATCH (m:Memory) WHERE m.hash IS NOT NULL AND COUNT { (:Agent {name: m.agent})-[:WROTE]->(m) } <> 1 RETURN count(m)"); n != 0 {
		t.Fatalf("%d memories without exactly one WROTE from their agent", n)
	}
	if n := one("MATCH (m:Memory) WHERE COUNT { ()-[:WROTE]->(m) } <> COUNT { (:Agent)-[:WROTE]->(m) } OR COUNT { ()-[:WROTE]->(m) } > 1 RETURN count(m)"); n != 0 {
		t.Fatalf("%d memories with a stray WROTE", n)
	}
	if n := one("MATCH (m:Memory)-[:MENTIONS]->(e:MemsyncEntity) WHERE e.group_id <> m.group_id RETURN count(e)"); n != 0 {
		t.Fatalf("%d MENTIONS cross groups", n)
	}
	if n := one("MATCH (m:Memory)-[r:MENTIONS]->(e:MemsyncEntity) WITH m, e, count(r) AS c WHERE c > 1 RETURN count(*)"); n != 0 {
		t.Fatalf("%d duplicate MENTIONS", n)
	}
	want := int64(0)
	for _, m := range corpus {
		want += int64(len(m.Record.AllEntities()))
	}
	if want == 0 {
		t.Fatal("the corpus mentions no entity: the test proves nothing")
	}
	if n := one("MATCH (:Memory)-[r:MENTIONS]->(:MemsyncEntity) RETURN count(r)"); n != want {
		t.Fatalf("%d MENTIONS, want %d", n, want)
	}
	nodes, err := g.Get(ctx, []string{corpus[0].UUID, corpus[len(corpus)/2].UUID})
	if err != nil || len(nodes) != 2 {
		t.Fatalf("Get = %v, %v", nodes, err)
	}
	for _, n := range nodes {
		if strings.Join(n.Mentions, ",") != strings.Join(sortedCopy(n.Record.AllEntities()), ",") {
			t.Fatalf("%s mentions %v, want %v", n.UUID, n.Mentions, n.Record.AllEntities())
		}
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestReadsMemoriesOfEarlierVersions: a memory written before the rest
// property existed holds its whole canonical record in m.record; it reads
// back exactly, beside memories written now.
func TestReadsMemoriesOfEarlierVersions(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	old := rec("old", 1, "written by an earlier memsync", func(r *journal.Record) {
		r.Tags, r.Why, r.Links = []string{"b", "a"}, "history", []string{"new"}
		r.Extra = map[string]json.RawMessage{"custom": json.RawMessage(`[1]`)}
	})
	cur := rec("new", 2, "written now")
	if _, err := g.Apply(ctx, []memsync.Memory{old, cur}); err != nil {
		t.Fatal(err)
	}
	cypher(t)("MATCH (m:Memory {uuid: $uuid}) SET m.record = $record REMOVE m.rest",
		map[string]any{"uuid": "old", "record": string(old.Record.Canonical())})
	got, err := g.Get(ctx, []string{"old", "new"})
	if err != nil || len(got) != 2 {
		t.Fatalf("Get = %v, %v", got, err)
	}
	for _, m := range []memsync.Memory{old, cur} {
		n := got[m.UUID]
		if a, b := string(n.Record.Canonical()), string(m.Record.Canonical()); a != b {
			t.Errorf("%s reads back as\n%s\nwant\n%s", m.UUID, a, b)
		}
	}
}

// cypher returns a function that runs a statement on the test server over a
// driver of its own (closed when the test ends) and returns its records,
// failing the test on an error.
func cypher(t *testing.T) func(stmt string, params ...map[string]any) []*neo4jdrv.Record {
	t.Helper()
	cfg := neo4jtest.Config(t)
	drv, err := neo4jdrv.NewDriverWithContext(cfg.URI, neo4jdrv.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drv.Close(context.Background()) })
	return func(stmt string, params ...map[string]any) []*neo4jdrv.Record {
		t.Helper()
		var p map[string]any
		if len(params) > 0 {
			p = params[0]
		}
		res, err := neo4jdrv.ExecuteQuery(context.Background(), drv, stmt, p, neo4jdrv.EagerResultTransformer,
			neo4jdrv.ExecuteQueryWithDatabase(cfg.Database))
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		return res.Records
	}
}

// TestRestHoldsUnfilteredFields: tags, why, max_age and the source, which
// no statement filters on, are not properties of their own (each costs the
// server a property record per memory) but live in rest; a memory reads
// back exactly, and so does one written by the previous version, which
// held them as properties.
func TestRestHoldsUnfilteredFields(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	full := func(r *journal.Record) {
		r.Tags, r.Why, r.MaxAge = []string{"b", "a"}, "cheaper", "90d"
		r.Source = &journal.Source{Type: journal.SourceTypes[0], Actor: "dana", Context: "standup"}
		r.Confidence, r.Tier, r.Session, r.Task = "high", "core", "s1", "t1"
	}
	cur, prev := rec("cur", 1, "written now", full), rec("prev", 2, "written by the previous version", full)
	if _, err := g.Apply(ctx, []memsync.Memory{cur, prev}); err != nil {
		t.Fatal(err)
	}
	exec := cypher(t)
	keys := exec("MATCH (m:Memory {uuid: 'cur'}) RETURN keys(m)")[0].Values[0].([]any)
	for _, k := range keys {
		switch k {
		case "tags", "why", "max_age", "source_type", "source_actor":
			t.Errorf("memory has property %s: %v", k, keys)
		}
	}
	for _, k := range []string{"confidence", "tier", "session", "task", "terms", "keywords"} {
		if !slices.Contains(keys, any(k)) {
			t.Errorf("memory lacks property %s: %v", k, keys)
		}
	}
	// The previous version's form: those fields as properties, not in rest.
	old := prev.Record
	old.Scope, old.Text, old.Tags = "", ".", nil
	old.Confidence, old.MaxAge, old.Tier, old.Session, old.Task, old.Why = "", "", "", "", "", ""
	exec(`MATCH (m:Memory {uuid: 'prev'})
SET m.rest = $rest, m.tags = $tags, m.why = $why, m.max_age = $maxAge, m.source_type = $st, m.source_actor = $sa`,
		map[string]any{"rest": string((&old).Canonical()), "tags": prev.Tags, "why": prev.Why, "maxAge": prev.MaxAge,
			"st": prev.Source.Type, "sa": prev.Source.Actor})
	got, err := g.Get(ctx, []string{"cur", "prev"})
	if err != nil || len(got) != 2 {
		t.Fatalf("Get = %v, %v", got, err)
	}
	for _, m := range []memsync.Memory{cur, prev} {
		n := got[m.UUID]
		if a, b := string(n.Record.Canonical()), string(m.Record.Canonical()); a != b {
			t.Errorf("%s reads back as\n%s\nwant\n%s", m.UUID, a, b)
		}
	}
}

// TestHoldsTerm: a fulltext hit counts only if the node, as it is now,
// holds a query term in its terms or keywords, as whole words (the
// index, eventually consistent and keyed by reused node ids, answered
// with nodes of other words under load).
func TestHoldsTerm(t *testing.T) {
	cfg := neo4jtest.Config(t)
	ctx := context.Background()
	auth := neo4jdrv.NoAuth()
	if cfg.User != "" {
		auth = neo4jdrv.BasicAuth(cfg.User, cfg.Password, "")
	}
	d, err := neo4jdrv.NewDriverWithContext(cfg.URI, auth)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	for _, tc := range []struct {
		terms, keywords any
		query           []string
		want            bool
	}{
		{"keep postgr as is", nil, []string{"postgr", "bill"}, true},
		{"upgrad webhook depend", "bill", []string{"postgr", "bill"}, true},
		{"feedback", nil, []string{"postgr", "bill"}, false},
		{"postgresql tune", nil, []string{"postgr"}, false},
		{"the walrus feeder", nil, []string{"walrus feeder"}, true},
		{"the feeder walrus", nil, []string{"walrus feeder"}, false},
		{nil, nil, []string{"postgr"}, false},
		{"postgr", nil, nil, false},
	} {
		res, err := neo4jdrv.ExecuteQuery(ctx, d, "WITH $node AS node RETURN "+neo4j.HoldsTerm,
			map[string]any{"node": map[string]any{"terms": tc.terms, "keywords": tc.keywords}, "padded": neo4j.PaddedTerms(tc.query)},
			neo4jdrv.EagerResultTransformer, neo4jdrv.ExecuteQueryWithDatabase(cfg.Database))
		if err != nil {
			t.Fatalf("holdsTerm: %v", err)
		}
		if got, _ := res.Records[0].Values[0].(bool); got != tc.want {
			t.Errorf("holdsTerm(terms %v, keywords %v, query %q) = %v, want %v", tc.terms, tc.keywords, tc.query, got, tc.want)
		}
	}
}
