package graphtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// Open returns a fresh, empty graph and registers its Close with t.Cleanup.
type Open func(t *testing.T) memsync.Graph

// Run runs the conformance suite against the backend that open returns.
// Subtests run one after another: backends may share one server.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(*testing.T, memsync.Graph)
	}{
		{"RoundTrip", testRoundTrip},
		{"EveryShapeRoundTrips", testEveryShapeRoundTrips},
		{"SameBatchTwice", testSameBatchTwice},
		{"ShuffledReplay", testShuffledReplay},
		{"Mismatch", testMismatch},
		{"ClashIsPure", testClashIsPure},
		{"SupersessionBothOrders", testSupersession},
		{"SecondSuperseder", testSecondSuperseder},
		{"CrossingSignalsChangeNothing", testCrossingSignalsChangeNothing},
		{"PrivateRetirement", testPrivateRetirement},
		{"Conflicts", testConflicts},
		{"OutOfOrderEdges", testOutOfOrderEdges},
		{"GroupIsolation", testGroupIsolation},
		{"HostileText", testHostileText},
		{"HostileQueries", testHostileQueries},
		{"Ranking", testRanking},
		{"SearchFilters", testSearchFilters},
		{"DropAndStats", testDropAndStats},
		{"Hashes", testHashes},
		{"SignalsShuffled", testSignalsShuffled},
		{"IncomingBeforeTarget", testIncomingBeforeTarget},
		{"Recall", testRecall},
		{"RankProperties", testRankProperties},
		{"Recipe", testRecipe},
		{"Episodes", testEpisodes},
		{"List", testList},
		{"ListWindowEdge", testListWindowEdge},
		{"Window", testWindow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

var clock = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// mem builds a valid memory; opts adjust it.
// lexicalHits is how many of hits are lexical hits, not the neighbours
// of one.
func lexicalHits(hits []memsync.Hit) int {
	n := 0
	for _, h := range hits {
		if h.From == "" {
			n++
		}
	}
	return n
}

func mem(uuid, agent string, sec int, text string, opts ...func(*journal.Record)) memsync.Memory {
	r := journal.Record{
		UUID: uuid, TS: clock.Add(time.Duration(sec) * time.Second), Agent: agent,
		Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: text,
	}
	for _, o := range opts {
		o(&r)
	}
	return memsync.Memory{Record: r, Path: "agents/" + agent + "/memory/journal/2026-11-20.jsonl", Line: sec + 1}
}

func shared(r *journal.Record)                  { r.Scope = journal.ScopeShared }
func kind(k journal.Kind) func(*journal.Record) { return func(r *journal.Record) { r.Kind = k } }
func links(ids ...string) func(*journal.Record) { return func(r *journal.Record) { r.Links = ids } }
func supers(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.Supersedes = ids }
}
func confl(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.ConflictsWith = ids }
}

func apply(t *testing.T, g memsync.Graph, batch ...memsync.Memory) memsync.ApplyResult {
	t.Helper()
	res, err := g.Apply(ctx(t), batch)
	if err != nil {
		t.Fatalf("Apply(%d records): %v", len(batch), err)
	}
	return res
}

// Dump is every node of g, in uuid order, encoded so that two equal
// projections give equal strings.
func Dump(t testing.TB, g memsync.Graph) []string {
	t.Helper()
	var out []string
	err := g.Walk(context.Background(), func(n memsync.Node) error {
		out = append(out, encodeNode(n))
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return out
}

func encodeNode(n memsync.Node) string {
	norm := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	inv := ""
	if !n.InvalidAt.IsZero() {
		inv = n.InvalidAt.UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(map[string]any{
		"record": string(n.Record.Canonical()), "path": n.Path, "line": n.Line,
		"hash": n.Hash, "group": n.GroupID, "invalid_at": inv, "replaced_by": n.ReplacedBy,
		"importance": n.Importance, "links": norm(n.LinksTo), "supersedes": norm(n.Supersedes),
		"conflicts": norm(n.ConflictsWith), "mentions": norm(n.Mentions),
	})
	return string(b)
}

func get(t *testing.T, g memsync.Graph, uuid string) memsync.Node {
	t.Helper()
	m, err := g.Get(ctx(t), []string{uuid})
	if err != nil {
		t.Fatalf("Get(%s): %v", uuid, err)
	}
	n, ok := m[uuid]
	if !ok {
		t.Fatalf("Get(%s): not projected", uuid)
	}
	return n
}

func search(t *testing.T, g memsync.Graph, q memsync.SearchQuery) []string {
	t.Helper()
	hits, err := read.Search(ctx(t), g, q)
	if err != nil {
		t.Fatalf("Search(%q): %v", q.Text, err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.UUID
	}
	return ids
}

func groups(agent string) []string { return journal.ReaderGroups(agent) }

func testRoundTrip(t *testing.T, g memsync.Graph) {
	m := mem("r1", "alice", 1, "Chose #postgres over @Mira's idea for [[Q3 Plan]]", func(r *journal.Record) {
		r.Kind = journal.KindDecision
		r.Entities = []string{"Acme Corp", "#postgres"}
		r.Tags = []string{"db"}
		r.Refs = []journal.Ref{{Git: "abc123", Path: "docs/db.md"}}
		r.Source = &journal.Source{Type: "told", Actor: "@Shaun", Context: "standup"}
		r.Confidence, r.MaxAge, r.Tier = "high", "90d", "core"
		r.Session, r.Task, r.Why = "s1", "t1", "cheaper"
		r.Extra = map[string]json.RawMessage{"custom": json.RawMessage(`{"a":[1,2.50]}`)}
	})
	apply(t, g, m)
	n := get(t, g, "r1")
	if got, want := string(n.Record.Canonical()), string(m.Record.Canonical()); got != want {
		t.Fatalf("record round trip:\n got %s\nwant %s", got, want)
	}
	if n.Path != m.Path || n.Line != m.Line {
		t.Errorf("path/line = %s:%d, want %s:%d", n.Path, n.Line, m.Path, m.Line)
	}
	if n.Hash != m.Record.Hash() || n.GroupID != "AGENT:alice" || n.Importance != 0.5 {
		t.Errorf("hash %q group %q importance %v", n.Hash, n.GroupID, n.Importance)
	}
	if !n.TS.Equal(m.TS) || !n.InvalidAt.IsZero() {
		t.Errorf("ts %v invalid_at %v", n.TS, n.InvalidAt)
	}
	want := []string{"#postgres", "@Mira", "Acme Corp", "Q3 Plan"}
	if strings.Join(n.Mentions, "|") != strings.Join(want, "|") {
		t.Errorf("mentions = %q, want %q", n.Mentions, want)
	}
	if m2, err := g.Get(ctx(t), []string{"nope"}); err != nil || len(m2) != 0 {
		t.Errorf("Get(absent) = %v, %v", m2, err)
	}
}

// testEveryShapeRoundTrips: every record, whatever optional fields it has
// or lacks, comes back from Walk and Get encoding exactly as it went in, and
// hashing to the hash the graph stores. Records are parsed from journal
// lines, as the engine reads them.
func testEveryShapeRoundTrips(t *testing.T, g memsync.Graph) {
	lines := []string{
		`{"uuid":"s01","ts":"2026-11-20T10:00:00Z","agent":"alice","kind":"fact","text":"plain"}`,
		`{"uuid":"s02","ts":"2026-11-20T10:00:01.123456789+02:00","agent":"alice","kind":"fact","scope":"private","text":"explicit private, offset ts"}`,
		`{"uuid":"s03","ts":"2026-11-20T10:00:02Z","agent":"alice","kind":"decision","scope":"shared","text":"shared","why":"because"}`,
		`{"uuid":"s04","ts":"2026-11-20T10:00:03Z","agent":"alice","kind":"fact","text":".","tags":["z","a","z2"]}`,
		`{"uuid":"s05","ts":"2026-11-20T10:00:04Z","agent":"alice","kind":"fact","text":"max age","max_age":"14d"}`,
		`{"uuid":"s06","ts":"2026-11-20T10:00:05Z","agent":"alice","kind":"fact","text":"tier","tier":"core"}`,
		`{"uuid":"s07","ts":"2026-11-20T10:00:06Z","agent":"alice","kind":"task","text":"session and task","session":"s-1","task":"t-9"}`,
		`{"uuid":"s08","ts":"2026-11-20T10:00:07Z","agent":"alice","kind":"fact","text":"confidence","confidence":"low"}`,
		`{"uuid":"s09","ts":"2026-11-20T10:00:08Z","agent":"alice","kind":"fact","text":"refs","refs":[{"git":"abc","path":"a.go"},{"path":"b.md"}]}`,
		`{"uuid":"s10","ts":"2026-11-20T10:00:09Z","agent":"alice","kind":"fact","text":"source","source":{"type":"read","actor":"@Bo","context":"the wiki"}}`,
		`{"uuid":"s11","ts":"2026-11-20T10:00:10Z","agent":"alice","kind":"fact","text":"edges","links":["s01","nope"],"supersedes":["s02"],"conflicts_with":["s03"]}`,
		`{"uuid":"s12","ts":"2026-11-20T10:00:11Z","agent":"alice","kind":"fact","text":"unknown fields","zeta":[1,2.50,{"b":null}],"alpha":"x"}`,
		`{"uuid":"s13","ts":"2026-11-20T10:00:12Z","agent":"alice","kind":"fact","text":"quotes \" and \\ and \n newline, ünïcödé 🚀 and \u0000","entities":["Acme Corp","#x"]}`,
		`{"uuid":"s14","ts":"2026-11-20T10:00:13Z","agent":"alice","kind":"summary","text":"everything","scope":"shared","tags":["t"],"entities":["E"],"links":["s01"],"source":{"type":"told"},"confidence":"high","max_age":"permanent","tier":"learning","session":"s","task":"t","why":"w","refs":[{"git":"f00"}],"extra":{"k":true}}`,
	}
	var batch []memsync.Memory
	for i, l := range lines {
		rec, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		batch = append(batch, memsync.Memory{Record: rec, Path: "agents/alice/memory/journal/2026-11-20.jsonl", Line: i + 1})
	}
	batch = append(batch, Corpus(3, 300)...)
	apply(t, g, batch...)
	want := map[string]string{}
	for _, m := range batch {
		want[m.UUID] = string(m.Record.Canonical())
	}
	walked := 0
	err := g.Walk(ctx(t), func(n memsync.Node) error {
		walked++
		if got := string(n.Record.Canonical()); got != want[n.UUID] {
			t.Errorf("%s round trip:\n got %s\nwant %s", n.UUID, got, want[n.UUID])
		}
		if n.Record.Hash() != n.Hash {
			t.Errorf("%s: the record read back hashes to %s, the graph holds %s", n.UUID, n.Record.Hash(), n.Hash)
		}
		return nil
	})
	if err != nil || walked != len(want) {
		t.Fatalf("Walk: %d nodes of %d, %v", walked, len(want), err)
	}
	ids := make([]string, 0, len(lines))
	for _, m := range batch[:len(lines)] {
		ids = append(ids, m.UUID)
	}
	got, err := g.Get(ctx(t), ids)
	if err != nil || len(got) != len(ids) {
		t.Fatalf("Get: %d of %d, %v", len(got), len(ids), err)
	}
	for _, n := range got {
		if string(n.Record.Canonical()) != want[n.UUID] {
			t.Errorf("%s: Get differs from what went in", n.UUID)
		}
	}
}

func testSameBatchTwice(t *testing.T, g memsync.Graph) {
	batch := Corpus(1, 200)
	apply(t, g, batch...)
	first := Dump(t, g)
	if len(first) != 200 {
		t.Fatalf("projected %d, want 200", len(first))
	}
	if res := apply(t, g, batch...); len(res.Mismatched) != 0 {
		t.Fatalf("replay mismatched %v", res.Mismatched)
	}
	if second := Dump(t, g); strings.Join(first, "\n") != strings.Join(second, "\n") {
		t.Fatalf("replaying the same batch changed the graph")
	}
	st, err := g.Stats(ctx(t))
	if err != nil || st.Memories != 200 {
		t.Fatalf("Stats = %+v, %v", st, err)
	}
}

func testShuffledReplay(t *testing.T, g memsync.Graph) {
	corpus := Corpus(7, 400)
	apply(t, g, corpus...)
	want := Dump(t, g)
	for _, seed := range []int64{1, 2} {
		if err := g.Drop(ctx(t)); err != nil {
			t.Fatal(err)
		}
		shuffled := append([]memsync.Memory(nil), corpus...)
		rand.New(rand.NewSource(seed)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		size := 1 + int(seed)*37
		for i := 0; i < len(shuffled); i += size {
			apply(t, g, shuffled[i:min(i+size, len(shuffled))]...)
		}
		// Replaying a slice again must not matter either.
		apply(t, g, shuffled[:50]...)
		got := Dump(t, g)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d nodes, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: node %d differs:\n got %s\nwant %s", seed, i, got[i], want[i])
			}
		}
	}
}

func testMismatch(t *testing.T, g memsync.Graph) {
	orig := mem("m1", "alice", 1, "original")
	apply(t, g, orig)
	changed := mem("m1", "alice", 2, "rewritten") // a later ts: loses
	res := apply(t, g, changed, mem("m2", "alice", 2, "fine"))
	if len(res.Mismatched) != 1 || res.Mismatched[0] != "m1" || len(res.Displaced) != 0 {
		t.Fatalf("Mismatched = %v, Displaced = %v, want [m1] and none", res.Mismatched, res.Displaced)
	}
	if n := get(t, g, "m1"); n.Text != "original" {
		t.Fatalf("m1 text = %q: the later ts must not win", n.Text)
	}
	get(t, g, "m2")
	// The earlier ts wins even when it arrives second; the stored version
	// it replaces is reported as displaced.
	res = apply(t, g, mem("m1", "alice", 0, "back-dated"))
	if len(res.Mismatched) != 1 || res.Mismatched[0] != "m1" || len(res.Displaced) != 1 ||
		res.Displaced[0].UUID != "m1" || res.Displaced[0].Line != orig.Line || res.Displaced[0].Agent != "alice" {
		t.Fatalf("Mismatched = %v, Displaced = %+v, want m1 displaced from line %d", res.Mismatched, res.Displaced, orig.Line)
	}
	if n := get(t, g, "m1"); n.Text != "back-dated" {
		t.Fatalf("m1 text = %q, want the back-dated version", n.Text)
	}
	// Two versions inside one batch: the rule picks, not the batch order.
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		if err := g.Drop(ctx(t)); err != nil {
			t.Fatal(err)
		}
		v := []memsync.Memory{mem("m3", "alice", 3, "first"), mem("m3", "alice", 4, "second")}
		res = apply(t, g, v[order[0]], v[order[1]])
		if len(res.Mismatched) != 1 || res.Mismatched[0] != "m3" || len(res.Displaced) != 0 {
			t.Fatalf("in-batch Mismatched = %v, Displaced = %v, want [m3] and none", res.Mismatched, res.Displaced)
		}
		if n := get(t, g, "m3"); n.Text != "first" {
			t.Fatalf("m3 text = %q, want first (the earlier ts)", n.Text)
		}
	}
}

// ClashScenarios are sets of records in which uuids clash (the same uuid
// with different content), named for what they try: the projection of each
// must equal the projection of the winners alone (journal.ClashWins),
// whatever the order and batching.
func ClashScenarios() []struct {
	Name    string
	Records []memsync.Memory
} {
	return []struct {
		Name    string
		Records []memsync.Memory
	}{
		{"private beats an earlier shared rewrite", []memsync.Memory{
			mem("u_leak", "alice", 5, "secret launch code zebra"),
			mem("u_leak", "alice", 1, "secret launch code zebra", shared),
		}},
		{"earlier ts wins and edges follow it", []memsync.Memory{
			mem("t_one", "alice", 0, "target one"),
			mem("t_three", "alice", 0, "target three"),
			mem("u_edges", "alice", 2, "first version", supers("t_one"), links("t_ghost")),
			mem("u_edges", "alice", 3, "second version", supers("t_three"), confl("t_two"), links("t_one")),
			mem("u_later", "bob", 9, "retires the clashing uuid", shared, supers("u_edges")),
		}},
		{"another agent at the same ts: smallest hash", []memsync.Memory{
			mem("u_tool", "alice", 4, "alice's tool wrote this id"),
			mem("u_tool", "bob", 4, "bob's tool wrote the same id", shared),
			mem("u_tool", "carol", 4, "carol's tool too"),
		}},
	}
}

// winners keeps, of each uuid, the version journal.ClashWins prefers.
func winners(recs []memsync.Memory) []memsync.Memory {
	best := map[string]int{}
	var order []string
	for i := range recs {
		r := &recs[i]
		j, ok := best[r.UUID]
		if !ok {
			best[r.UUID] = i
			order = append(order, r.UUID)
			continue
		}
		o := &recs[j]
		if journal.ClashWins(journal.VersionOf(&r.Record, r.Hash()), journal.VersionOf(&o.Record, o.Hash())) {
			best[r.UUID] = i
		}
	}
	out := make([]memsync.Memory, 0, len(order))
	for _, id := range order {
		out = append(out, recs[best[id]])
	}
	return out
}

// testClashIsPure applies every clash scenario in every order of its
// records, one record per batch and all in one batch, and in shuffled
// batches, and compares nodes, stats and what other agents' searches
// find with the projection of the winners alone.
func testClashIsPure(t *testing.T, g memsync.Graph) {
	for _, sc := range ClashScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			if err := g.Drop(ctx(t)); err != nil {
				t.Fatal(err)
			}
			apply(t, g, winners(sc.Records)...)
			want := strings.Join(Dump(t, g), "\n")
			wantStats, err := g.Stats(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			// Who finds what (as sets: a full-text engine may keep a replaced
			// document in its statistics for a while, which moves scores but
			// never what a reader may see).
			seen := func(who string) []string {
				ids := search(t, g, memsync.SearchQuery{Text: "zebra version tool target retires", Groups: groups(who), All: true, Limit: 50})
				slices.Sort(ids)
				return ids
			}
			wantSeen := map[string][]string{}
			for _, who := range []string{"alice", "bob", "carol", "dave"} {
				wantSeen[who] = seen(who)
			}
			check := func(how string) {
				t.Helper()
				if got := strings.Join(Dump(t, g), "\n"); got != want {
					t.Fatalf("%s: projection differs from the winners':\n got %s\nwant %s", how, got, want)
				}
				st, err := g.Stats(ctx(t))
				if err != nil || st.Memories != wantStats.Memories || fmt.Sprint(st.ByAgent) != fmt.Sprint(wantStats.ByAgent) {
					t.Fatalf("%s: Stats = %+v, %v; want %+v", how, st, err, wantStats)
				}
				for who, ids := range wantSeen {
					if got := seen(who); !slices.Equal(got, ids) {
						t.Fatalf("%s: %s finds %v, want %v", how, who, got, ids)
					}
				}
			}
			n := len(sc.Records)
			perm := make([]int, n)
			for i := range perm {
				perm[i] = i
			}
			// Every order of up to three records; of more, forward, backward
			// and a few shuffles (a server backend pays for each Drop).
			var orders [][]int
			if n <= 3 {
				permute(perm, 0, func(p []int) { orders = append(orders, slices.Clone(p)) })
			} else {
				orders = append(orders, slices.Clone(perm))
				slices.Reverse(perm)
				orders = append(orders, slices.Clone(perm))
				for seed := int64(1); seed <= 4; seed++ {
					rand.New(rand.NewSource(seed)).Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
					orders = append(orders, slices.Clone(perm))
				}
			}
			for _, p := range orders {
				for _, oneBatch := range []bool{false, true} {
					if err := g.Drop(ctx(t)); err != nil {
						t.Fatal(err)
					}
					batch := make([]memsync.Memory, n)
					for i, k := range p {
						batch[i] = sc.Records[k]
					}
					if oneBatch {
						apply(t, g, batch...)
					} else {
						for _, m := range batch {
							apply(t, g, m)
						}
					}
					check(fmt.Sprintf("order %v, one batch %v", p, oneBatch))
				}
			}
			// Replaying everything again changes nothing.
			apply(t, g, sc.Records...)
			check("replayed")
		})
	}
}

// permute calls fn with every permutation of p[k:] (p[:k] fixed).
func permute(p []int, k int, fn func([]int)) {
	if k == len(p) {
		fn(p)
		return
	}
	for i := k; i < len(p); i++ {
		p[k], p[i] = p[i], p[k]
		permute(p, k+1, fn)
		p[k], p[i] = p[i], p[k]
	}
}

func testSupersession(t *testing.T, g memsync.Graph) {
	old := mem("s_old", "alice", 1, "deploys happen on friday", shared)
	repl := mem("s_new", "alice", 5, "deploys happen on tuesday", shared, supers("s_old"))
	check := func(order string) {
		o := get(t, g, "s_old")
		if !o.InvalidAt.Equal(repl.TS) || o.ReplacedBy != "s_new" {
			t.Fatalf("%s: superseded invalid_at=%v replaced_by=%q, want %v s_new", order, o.InvalidAt, o.ReplacedBy, repl.TS)
		}
		n := get(t, g, "s_new")
		if len(n.Supersedes) != 1 || n.Supersedes[0] != "s_old" || !n.InvalidAt.IsZero() {
			t.Fatalf("%s: superseding node %+v", order, n)
		}
		ids := search(t, g, memsync.SearchQuery{Text: "deploys", Groups: groups("bob")})
		if len(ids) != 1 || ids[0] != "s_new" {
			t.Fatalf("%s: search hides superseded: got %v", order, ids)
		}
		ids = search(t, g, memsync.SearchQuery{Text: "deploys", Groups: groups("bob"), All: true})
		if len(ids) != 2 {
			t.Fatalf("%s: search --all: got %v", order, ids)
		}
	}
	apply(t, g, old)
	apply(t, g, repl)
	check("old first")
	want := Dump(t, g)
	if err := g.Drop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	apply(t, g, repl)
	apply(t, g, old)
	check("new first")
	if got := Dump(t, g); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("order changed the projection:\n%s\nvs\n%s", got, want)
	}
}

func testSecondSuperseder(t *testing.T, g memsync.Graph) {
	apply(t, g, mem("x", "alice", 1, "v1"))
	apply(t, g, mem("late", "alice", 9, "v3", supers("x")))
	apply(t, g, mem("early", "alice", 4, "v2", supers("x")))
	if o := get(t, g, "x"); o.ReplacedBy != "early" || !o.InvalidAt.Equal(clock.Add(4*time.Second)) {
		t.Fatalf("replaced_by=%q invalid_at=%v, want the earliest superseder", o.ReplacedBy, o.InvalidAt)
	}
	// Two at the same ts: the smallest uuid, whichever came first
	// (journal.RetiresFirst).
	apply(t, g, mem("y", "alice", 1, "w1"))
	apply(t, g, mem("tie_b", "alice", 5, "w2", supers("y")))
	apply(t, g, mem("tie_a", "alice", 5, "w3", supers("y")))
	apply(t, g, mem("tie_c", "alice", 5, "w4", supers("y")))
	if o := get(t, g, "y"); o.ReplacedBy != "tie_a" || !o.InvalidAt.Equal(clock.Add(5*time.Second)) {
		t.Fatalf("replaced_by=%q invalid_at=%v, want tie_a, the smallest uuid of a tie", o.ReplacedBy, o.InvalidAt)
	}
}

func testConflicts(t *testing.T, g memsync.Graph) {
	apply(t, g, mem("c1", "alice", 1, "the api limit is 100 per minute", shared),
		mem("c2", "bob", 2, "the api limit is 500 per minute", shared, confl("c1")))
	a, b := get(t, g, "c1"), get(t, g, "c2")
	if !a.InvalidAt.IsZero() || !b.InvalidAt.IsZero() {
		t.Fatal("a conflict must keep both sides current")
	}
	if len(b.ConflictsWith) != 1 || b.ConflictsWith[0] != "c1" {
		t.Fatalf("CONFLICTS_WITH = %v", b.ConflictsWith)
	}
	if ids := search(t, g, memsync.SearchQuery{Text: "api limit", Groups: groups("carol")}); len(ids) != 2 {
		t.Fatalf("both sides must be found, got %v", ids)
	}
}

func testOutOfOrderEdges(t *testing.T, g memsync.Graph) {
	apply(t, g, mem("child", "alice", 5, "builds on parent", links("parent", "ghost"), confl("rival")))
	st, err := g.Stats(ctx(t))
	if err != nil || st.Memories != 1 {
		t.Fatalf("placeholders must not count: Stats = %+v, %v", st, err)
	}
	if d := Dump(t, g); len(d) != 1 {
		t.Fatalf("placeholders must not be walked: %v", d)
	}
	apply(t, g, mem("parent", "alice", 1, "the parent idea from @Mira on #billing"), mem("rival", "bob", 2, "a rival claim"))
	c := get(t, g, "child")
	if strings.Join(c.LinksTo, ",") != "ghost,parent" || strings.Join(c.ConflictsWith, ",") != "rival" {
		t.Fatalf("edges = links %v conflicts %v", c.LinksTo, c.ConflictsWith)
	}
	p := get(t, g, "parent")
	if p.Text != "the parent idea from @Mira on #billing" || p.Agent != "alice" || p.Hash == "" {
		t.Fatalf("late target incomplete: %+v", p)
	}
	if strings.Join(p.Mentions, ",") != "#billing,@Mira" {
		t.Fatalf("late target's mentions = %v, want #billing,@Mira", p.Mentions)
	}
	if st, _ := g.Stats(ctx(t)); st.Memories != 3 {
		t.Fatalf("Stats = %+v, want 3", st)
	}
}

func testGroupIsolation(t *testing.T, g memsync.Graph) {
	apply(t, g,
		mem("a_priv", "alice", 1, "secret launch code zebra"),
		mem("b_priv", "bob", 2, "bob private zebra notes"),
		mem("a_shared", "alice", 3, "shared zebra fact", shared))
	got := search(t, g, memsync.SearchQuery{Text: "zebra", Groups: groups("bob"), All: true, Limit: 50})
	sort.Strings(got)
	if strings.Join(got, ",") != "a_shared,b_priv" {
		t.Fatalf("bob sees %v, want a_shared,b_priv", got)
	}
	if got := search(t, g, memsync.SearchQuery{Text: "zebra", Limit: 50}); len(got) != 0 {
		t.Fatalf("no groups must see nothing, got %v", got)
	}
	if n := get(t, g, "a_shared"); n.GroupID != journal.SharedGroup {
		t.Fatalf("shared group = %q", n.GroupID)
	}
}

// HostileTexts are stored verbatim by every backend.
var HostileTexts = []string{
	`it's "quoted" and 'single' and \backslash\ and \\double`,
	`'}) MATCH (n) DETACH DELETE n //`,
	"\"; DROP TABLE memories; --",
	`$param {uuid: 'x'} ${injection} \u0000 literal`,
	"unicode: café naïve 日本語 🚀 Ωmega \u200b zero-width",
	"line one\nline two\ttabbed\r\nwindows",
	`CALL db.index.fulltext.queryNodes("x", "y") YIELD node RETURN node`,
	"nul byte \x00 inside",
}

func testHostileText(t *testing.T, g memsync.Graph) {
	var batch []memsync.Memory
	for i, text := range HostileTexts {
		batch = append(batch, mem(fmt.Sprintf("h%d", i), "alice", i, "hostile "+text, shared,
			func(r *journal.Record) { r.Entities = []string{string([]rune(text)[:12]) + "x"} }))
	}
	apply(t, g, batch...)
	st, err := g.Stats(ctx(t))
	if err != nil || st.Memories != len(HostileTexts) {
		t.Fatalf("Stats = %+v, %v: hostile text must not delete or add anything", st, err)
	}
	for i, m := range batch {
		n := get(t, g, m.UUID)
		if n.Text != m.Text {
			t.Errorf("text %d not verbatim:\n got %q\nwant %q", i, n.Text, m.Text)
		}
		if n.Hash != m.Record.Hash() {
			t.Errorf("record %d hash changed in the round trip", i)
		}
	}
	ids := search(t, g, memsync.SearchQuery{Text: "hostile", Groups: groups("x"), Limit: 100})
	if len(ids) != len(HostileTexts) {
		t.Fatalf("search hostile: %d hits, want %d", len(ids), len(HostileTexts))
	}
	// The other hits are h4's episode neighbours (the same agent's
	// sessionless records, seconds apart), holding no query term.
	if hits, err := read.Search(ctx(t), g, memsync.SearchQuery{Text: "日本語", Groups: groups("x")}); err != nil || len(hits) == 0 || hits[0].UUID != "h4" || lexicalHits(hits) != 1 {
		t.Errorf("unicode search = %v, %v: want h4, and only its neighbours beside it", ids, err)
	}
}

// HostileQueries must be answered, never rejected as syntax.
var HostileQueries = []string{
	`foo:bar AND (`, `"`, `*`, `~`, `\`, `NEAR(`, `'; DROP TABLE memories; --`, `text:* OR ) ] }`,
	`"unbalanced`, `-`, `+`, `!`, `&&`, `||`, `^2`, `a/b`, `{}`, `[[x]]`, ``, `   `, `🚀`,
}

func testHostileQueries(t *testing.T, g memsync.Graph) {
	apply(t, g, mem("q1", "alice", 1, "foo bar baz", shared))
	for _, q := range HostileQueries {
		if _, err := read.Search(ctx(t), g, memsync.SearchQuery{Text: q, Groups: groups("alice")}); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
	if ids := search(t, g, memsync.SearchQuery{Text: `foo:bar AND (`, Groups: groups("alice")}); len(ids) != 1 {
		t.Errorf("foo:bar AND ( should still match the words, got %v", ids)
	}
}

func testRanking(t *testing.T, g memsync.Graph) {
	apply(t, g,
		mem("weak", "alice", 1, "the kafka cluster was restarted during lunch while everyone discussed many other unrelated topics", shared),
		mem("strong", "alice", 2, "kafka consumer lag: kafka partitions rebalanced, kafka lag recovered", shared),
		mem("none", "alice", 3, "postgres vacuum settings", shared))
	hits, err := read.Search(ctx(t), g, memsync.SearchQuery{Text: "kafka lag", Groups: groups("bob")})
	if err != nil {
		t.Fatal(err)
	}
	// "none" may follow as an episode neighbour: it holds no query term.
	if len(hits) < 2 || hits[0].UUID != "strong" || hits[1].UUID != "weak" || lexicalHits(hits) != 2 {
		t.Fatalf("ranking = %v, want strong then weak", hits)
	}
	if hits[0].Score <= hits[1].Score {
		t.Errorf("scores %v <= %v", hits[0].Score, hits[1].Score)
	}
	if ids := search(t, g, memsync.SearchQuery{Text: "kafka", Groups: groups("bob"), Limit: 1}); len(ids) != 1 {
		t.Errorf("limit 1 gave %v", ids)
	}
}

func testSearchFilters(t *testing.T, g memsync.Graph) {
	apply(t, g,
		mem("f1", "alice", 1, "rollout plan one", shared, kind(journal.KindDecision)),
		mem("f2", "alice", 100, "rollout plan two", shared, kind(journal.KindTask)),
		mem("f3", "alice", 200, "rollout plan three", shared, kind(journal.KindDecision)))
	ids := search(t, g, memsync.SearchQuery{Text: "rollout", Groups: groups("bob"), Kinds: []journal.Kind{journal.KindDecision}})
	sort.Strings(ids)
	if strings.Join(ids, ",") != "f1,f3" {
		t.Errorf("kind filter = %v", ids)
	}
	ids = search(t, g, memsync.SearchQuery{Text: "rollout", Groups: groups("bob"), Since: clock.Add(50 * time.Second)})
	sort.Strings(ids)
	if strings.Join(ids, ",") != "f2,f3" {
		t.Errorf("since filter = %v", ids)
	}
}

func testDropAndStats(t *testing.T, g memsync.Graph) {
	apply(t, g, Corpus(3, 120)...)
	st, err := g.Stats(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range st.ByAgent {
		total += n
	}
	if st.Memories != 120 || total != 120 {
		t.Fatalf("Stats = %+v", st)
	}
	if err := g.Drop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if st, err = g.Stats(ctx(t)); err != nil || st.Memories != 0 || len(Dump(t, g)) != 0 {
		t.Fatalf("after Drop: %+v, %v", st, err)
	}
	if ids := search(t, g, memsync.SearchQuery{Text: "deploy", Groups: groups("alice"), All: true}); len(ids) != 0 {
		t.Fatalf("search after Drop = %v", ids)
	}
}

// testHashes checks that Hashes streams what Walk does (the same uuids and
// hashes, in any order), leaves placeholders out and stops at fn's first
// error.
func testHashes(t *testing.T, g memsync.Graph) {
	batch := Corpus(7, 300)
	batch = append(batch, mem("zz-child", "alice", 5, "points at a ghost", links("zz-ghost")))
	apply(t, g, batch...)
	var walked, hashed []string
	if err := g.Walk(ctx(t), func(n memsync.Node) error {
		walked = append(walked, n.UUID+" "+n.Hash)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := g.Hashes(ctx(t), func(uuid, hash string) error {
		hashed = append(hashed, uuid+" "+hash)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(hashed)
	if len(hashed) != len(batch) || strings.Join(hashed, "\n") != strings.Join(walked, "\n") {
		t.Fatalf("Hashes gave %d rows, Walk %d, batch %d; or they differ", len(hashed), len(walked), len(batch))
	}
	for _, h := range hashed {
		if strings.HasPrefix(h, "zz-ghost") || strings.HasSuffix(h, " ") {
			t.Fatalf("placeholder or empty hash streamed: %q", h)
		}
	}
	stop := errors.New("stop")
	n := 0
	err := g.Hashes(ctx(t), func(string, string) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("Hashes after fn failed: err %v after %d calls, want stop after 3", err, n)
	}
}
