package cache

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/cache")

var clock = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func mem(uuid, agent string, sec int, k journal.Kind, text string, opts ...func(*journal.Record)) memsync.Memory {
	r := journal.Record{
		UUID: uuid, TS: clock.Add(time.Duration(sec) * time.Second), Agent: agent,
		Kind: k, Scope: journal.ScopePrivate, Text: text,
	}
	for _, o := range opts {
		o(&r)
	}
	return memsync.Memory{Record: r, Path: "agents/" + agent + "/memory/journal/" + journal.FileName(r.TS), Line: sec + 1}
}

func shared(r *journal.Record) { r.Scope = journal.ScopeShared }
func supers(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.Supersedes = ids }
}
func confl(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.ConflictsWith = ids }
}
func ents(names ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.Entities = names }
}

// fixture is a small team memory: both scopes, every listed kind,
// supersession, conflicts (one across a private group), entities whose
// slugs collide or lose characters, and awkward text.
func fixture() []memsync.Memory {
	return []memsync.Memory{
		mem("mem_f01", "alice", 1, journal.KindFact, "The staging database is postgres 14 #infra", shared),
		mem("mem_f02", "alice", 2, journal.KindFact, "The staging database is postgres 16 #infra", shared, supers("mem_f01")),
		mem("mem_f03", "alice", 3, journal.KindFact, "ALICE-SECRET: the vault key rotates on Fridays (@Mira knows)"),
		mem("mem_f04", "bob", 4, journal.KindFact, "Billing runs nightly at 02:00 UTC #billing", shared),
		mem("mem_f05", "bob", 5, journal.KindFact, "BOB-SECRET: my scratch dir is /tmp/bob"),
		mem("mem_d01", "alice", 6, journal.KindDecision, "Ship the planner behind a flag [[Q3 Plan]]", shared, func(r *journal.Record) { r.Why = "risk" }),
		mem("mem_d02", "bob", 7, journal.KindDecision, "Do not ship the planner before Q4 [[Q3 Plan]]", shared, confl("mem_d01")),
		mem("mem_d03", "alice", 8, journal.KindDecision, "ALICE-SECRET: keep the planner private for now", confl("mem_d02")),
		mem("mem_p01", "alice", 9, journal.KindPreference, "@Shaun prefers short status updates\nwith bullet points\tand no emoji", shared),
		mem("mem_p02", "alice", 10, journal.KindPreference, "#mira wants dashboards in UTC", shared),
		mem("mem_r01", "bob", 11, journal.KindProcedure, "To rotate keys: run `make rotate`, then restart Zürich workers", shared, ents("Zürich")),
		mem("mem_o01", "bob", 12, journal.KindObservation, "Latency spiked after the deploy @Shaun", shared),
		mem("mem_t01", "alice", 13, journal.KindTask, "Write the migration runbook", shared, ents("Acme Corp", "acme-corp")),
		mem("mem_l01", "alice", 14, journal.KindFact, strings.Repeat("long text ", 80), shared),
	}
}

func openGraph(t *testing.T, batch []memsync.Memory) memsync.Graph {
	t.Helper()
	g, err := embedded.Open(t.TempDir(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if len(batch) > 0 {
		if _, err := g.Apply(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// repo makes a repository with the agents' directories.
func repo(t *testing.T, agents ...string) memsync.Layout {
	t.Helper()
	layout := memsync.Layout{Root: t.TempDir()}
	for _, a := range agents {
		if err := os.MkdirAll(layout.JournalDir(a), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return layout
}

// readTree returns the files under dir, by slash path relative to it.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkGolden compares each agent's cache directory with
// testdata/cache/<name>/<agent>, or rewrites the latter with -update.
func checkGolden(t *testing.T, name string, layout memsync.Layout, agents ...string) {
	t.Helper()
	for _, a := range agents {
		got := readTree(t, layout.CacheDir(a))
		golden := filepath.Join("..", "testdata", "cache", name, a)
		if *update {
			if err := os.RemoveAll(golden); err != nil {
				t.Fatal(err)
			}
			for rel, data := range got {
				p := filepath.Join(golden, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		want := readTree(t, golden)
		if len(want) == 0 {
			t.Fatalf("no golden files in %s (run go test ./cache -update)", golden)
		}
		if !slices.Equal(keys(got), keys(want)) {
			t.Fatalf("%s: files\n%q\nwant\n%q", a, keys(got), keys(want))
		}
		for rel, w := range want {
			if got[rel] != w {
				t.Errorf("%s/%s differs from the golden file (run go test ./cache -update to accept):\n--- got\n%s\n--- want\n%s", a, rel, got[rel], w)
			}
		}
	}
}

func generate(t *testing.T, w *Writer, agents ...string) []Result {
	t.Helper()
	res, err := w.Generate(context.Background(), agents)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGolden(t *testing.T) {
	layout := repo(t, "alice", "bob")
	w := NewWriter(openGraph(t, fixture()), layout, zaptest.NewLogger(t))
	res := generate(t, w)
	if len(res) != 2 || res[0].Agent != "alice" || res[1].Agent != "bob" || len(res[0].Written) == 0 {
		t.Fatalf("results: %+v", res)
	}
	checkGolden(t, "basic", layout, "alice", "bob")
}

func TestGoldenCapped(t *testing.T) {
	var batch []memsync.Memory
	for i := range 12 {
		batch = append(batch, mem(fmt.Sprintf("mem_c%02d", i), "carol", i, journal.KindFact, fmt.Sprintf("fact number %d about #topic%d and #common", i, i%2), shared))
	}
	for i := 0; i < 10; i += 2 {
		batch = append(batch, mem(fmt.Sprintf("mem_x%02d", i), "carol", 20+i, journal.KindDecision, fmt.Sprintf("decision %d", i), shared, confl(fmt.Sprintf("mem_c%02d", i))))
	}
	layout := repo(t, "carol")
	w := NewWriter(openGraph(t, batch), layout, zaptest.NewLogger(t))
	w.Limit = 3
	generate(t, w, "carol")
	checkGolden(t, "capped", layout, "carol")
}

func TestEmptyGraph(t *testing.T) {
	layout := repo(t, "dave")
	generate(t, NewWriter(openGraph(t, nil), layout, nil))
	checkGolden(t, "empty", layout, "dave")
}

// The same records, applied in another order and other batches, render
// the same bytes; rendering twice does too, and the second write touches
// nothing.
func TestDeterministic(t *testing.T) {
	recs := fixture()
	layout1, layout2 := repo(t, "alice", "bob"), repo(t, "alice", "bob")
	w1 := NewWriter(openGraph(t, recs), layout1, nil)
	shuffled := slices.Clone(recs)
	rand.New(rand.NewSource(7)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	g2 := openGraph(t, nil)
	for i := 0; i < len(shuffled); i += 3 {
		if _, err := g2.Apply(context.Background(), shuffled[i:min(i+3, len(shuffled))]); err != nil {
			t.Fatal(err)
		}
	}
	w2 := NewWriter(g2, layout2, nil)
	generate(t, w1)
	generate(t, w2)
	for _, a := range []string{"alice", "bob"} {
		t1, t2 := readTree(t, layout1.CacheDir(a)), readTree(t, layout2.CacheDir(a))
		if len(t1) == 0 || !slices.Equal(keys(t1), keys(t2)) {
			t.Fatalf("%s: files %q vs %q", a, keys(t1), keys(t2))
		}
		for k := range t1 {
			if t1[k] != t2[k] {
				t.Fatalf("%s/%s differs between graphs", a, k)
			}
		}
	}
	before := readTree(t, layout1.CacheDir("alice"))
	res := generate(t, w1)
	for _, r := range res {
		if len(r.Written) != 0 || len(r.Removed) != 0 || r.Unchanged == 0 {
			t.Fatalf("second generation changed files: %+v", r)
		}
	}
	after := readTree(t, layout1.CacheDir("alice"))
	for k := range before {
		if before[k] != after[k] {
			t.Fatalf("%s changed", k)
		}
	}
}

func TestGroupIsolation(t *testing.T) {
	layout := repo(t, "alice", "bob")
	generate(t, NewWriter(openGraph(t, fixture()), layout, nil))
	for a, forbidden := range map[string][]string{
		"bob":   {"ALICE-SECRET", "mem_f03", "mem_d03"},
		"alice": {"BOB-SECRET", "mem_f05"},
	} {
		for rel, data := range readTree(t, layout.CacheDir(a)) {
			for _, f := range forbidden {
				if strings.Contains(data, f) {
					t.Errorf("%s's %s contains %q", a, rel, f)
				}
			}
		}
	}
	// Alice's private memory mentions @Mira: bob gets no page for her.
	for rel := range readTree(t, layout.CacheDir("bob")) {
		if strings.HasPrefix(rel, EntitiesDir+"/mira") && !strings.Contains(readTree(t, layout.CacheDir("bob"))[rel], "#mira") {
			t.Errorf("bob has alice's entity page %s", rel)
		}
	}
	facts := readTree(t, layout.CacheDir("alice"))[FactsFile]
	for _, want := range []string{"ALICE-SECRET", "mem_f03", "`mem_d03` (newer, wins) vs `mem_d02`", "`mem_d02` (newer, wins) vs `mem_d01`"} {
		if !strings.Contains(facts, want) {
			t.Errorf("alice's facts lack %q", want)
		}
	}
}

func TestSupersededHidden(t *testing.T) {
	layout := repo(t, "alice")
	generate(t, NewWriter(openGraph(t, fixture()), layout, nil))
	facts := readTree(t, layout.CacheDir("alice"))[FactsFile]
	if strings.Contains(facts, "postgres 14") || !strings.Contains(facts, "postgres 16") {
		t.Fatalf("supersession not applied:\n%s", facts)
	}
}

func TestStalePagesRemoved(t *testing.T) {
	layout := repo(t, "alice")
	g := openGraph(t, []memsync.Memory{
		mem("mem_a", "alice", 1, journal.KindFact, "about #oldtopic", shared),
		mem("mem_b", "alice", 2, journal.KindFact, "about #keep", shared),
	})
	w := NewWriter(g, layout, nil)
	generate(t, w, "alice")
	pages := filepath.Join(layout.CacheDir("alice"), EntitiesDir)
	if _, err := os.Stat(filepath.Join(pages, "oldtopic.md")); err != nil {
		t.Fatal(err)
	}
	// A stray temp file from a crash long ago, and a fresh one (another
	// writer at work) that must stay.
	old := filepath.Join(pages, tempPrefix+"x.md.1")
	fresh := filepath.Join(pages, tempPrefix+"y.md.2")
	// And journal.WriteAtomic's: a dead writer's (removed), a live one's (kept).
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(pages, fmt.Sprintf("z.md.%d-9%s", dead.Process.Pid, journal.TempSuffix))
	writing := filepath.Join(pages, fmt.Sprintf("w.md.%d-9%s", os.Getpid(), journal.TempSuffix))
	for _, p := range []string{old, fresh, orphan, writing} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(context.Background(), []memsync.Memory{
		mem("mem_c", "alice", 3, journal.KindFact, "no topic any more", shared, supers("mem_a")),
	}); err != nil {
		t.Fatal(err)
	}
	res := generate(t, w, "alice")
	want := []string{
		"agents/alice/memory/cache/GRAPHITI_ENTITIES/" + tempPrefix + "x.md.1",
		"agents/alice/memory/cache/GRAPHITI_ENTITIES/oldtopic.md",
		"agents/alice/memory/cache/GRAPHITI_ENTITIES/" + filepath.Base(orphan),
	}
	if !slices.Equal(res[0].Removed, want) {
		t.Fatalf("removed %q, want %q", res[0].Removed, want)
	}
	if !slices.Equal(res[0].Written, []string{"agents/alice/memory/cache/GRAPHITI_FACTS.md"}) || res[0].Unchanged != 1 {
		t.Fatalf("result %+v", res[0])
	}
	if _, err := os.Stat(writing); err != nil {
		t.Fatalf("a live writer's temp file was removed: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a fresh temp file was removed: %v", err)
	}
}

func TestGraphDown(t *testing.T) {
	layout := repo(t, "alice")
	g := &downGraph{Graph: openGraph(t, fixture())}
	g.setDown(true)
	if _, err := NewWriter(g, layout, nil).Generate(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("err = %v", err)
	}
	if files := readTree(t, layout.CacheDir("alice")); len(files) != 0 {
		t.Fatalf("files written with the graph down: %q", keys(files))
	}
}

// nameHash is the hash part of a hashed slug (journal.EntitySlugHashed).
func nameHash(name string, n int) string {
	s := journal.EntitySlugHashed(name, n)
	return s[len(s)-n:]
}

func TestSlugs(t *testing.T) {
	got := Slugs([]string{"@Shaun", "#moonshot", "Acme Corp", "acme-corp", "[[Q3 Plan]]", "Q3 Plan", "@Mira", "#mira", "Zürich", "日本", "---", strings.Repeat("a", 100)})
	check := func(name, want string) {
		t.Helper()
		if got[name] != want {
			t.Errorf("slug(%q) = %q, want %q", name, got[name], want)
		}
	}
	check("@Shaun", "shaun")
	check("#moonshot", "moonshot")
	check("[[Q3 Plan]]", "q3-plan-"+nameHash("[[Q3 Plan]]", 8))
	check("Q3 Plan", "q3-plan-"+nameHash("Q3 Plan", 8))
	check("Acme Corp", "acme-corp-"+nameHash("Acme Corp", 8))
	check("Zürich", "z-rich-"+nameHash("Zürich", 8))
	check("日本", "entity-"+nameHash("日本", 8))
	check("---", "entity-"+nameHash("---", 8))
	check(strings.Repeat("a", 100), strings.Repeat("a", 64)+"-"+nameHash(strings.Repeat("a", 100), 8))
	seen := map[string]bool{}
	for name, s := range got {
		if seen[s] {
			t.Errorf("slug %q given twice", s)
		}
		seen[s] = true
		if strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || strings.HasPrefix(s, "-") {
			t.Errorf("slug(%q) = %q has other characters", name, s)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("  a\nb\r\n\tc  \x00 d "); got != "a b c d" {
		t.Fatalf("oneLine = %q", got)
	}
	long := oneLine(strings.Repeat("x", 2*maxTextRunes))
	if !strings.HasSuffix(long, "…") || len([]rune(long)) != maxTextRunes+1 {
		t.Fatalf("long text: %d runes", len([]rune(long)))
	}
}

// A large graph renders capped lists: a snapshot stays readable.
func TestLargeGraphCapped(t *testing.T) {
	var batch []memsync.Memory
	for i := range 600 {
		batch = append(batch, mem(fmt.Sprintf("mem_%05d", i), "erin", i, journal.KindFact, fmt.Sprintf("fact %d #t%d", i, i%140), shared))
	}
	g := openGraph(t, batch)
	snaps, err := Render(context.Background(), g, []string{"erin"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	facts := string(snaps[0].Files[FactsFile])
	if strings.Count(facts, "\n- (0.50) **fact**") != 100 || !strings.Contains(facts, "… and 500 more\n") ||
		!strings.Contains(facts, "… and 90 more, without a page of their own") {
		t.Fatalf("caps not applied:\n%s", facts)
	}
	if len(snaps[0].Files) != 1+EntityPages {
		t.Fatalf("%d files, want %d", len(snaps[0].Files), 1+EntityPages)
	}
	again, err := Render(context.Background(), g, []string{"erin"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range snaps[0].Files {
		if !bytes.Equal(data, again[0].Files[p]) {
			t.Fatalf("%s differs between renders", p)
		}
	}
}

// TestSnapshotBounded: however many memories and entities an agent
// sees, its snapshot stays under 1 MB at the default limits, with long
// texts in every line (issue 50: 12 MB an agent at 1,000 agents and 1M
// records).
func TestSnapshotBounded(t *testing.T) {
	long := strings.Repeat("a long memory text that goes on ", 40) // over maxTextRunes
	kinds := []journal.Kind{journal.KindFact, journal.KindDecision, journal.KindPreference, journal.KindProcedure, journal.KindObservation}
	var batch []memsync.Memory
	for i := range 20000 {
		k := kinds[i%len(kinds)]
		batch = append(batch, mem(fmt.Sprintf("mem_%06d", i), "erin", i, k, fmt.Sprintf("%d %s #e%d #f%d", i, long, i%3000, i%7), shared))
	}
	g := openGraph(t, batch)
	snaps, err := Render(context.Background(), g, []string{"erin"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, data := range snaps[0].Files {
		total += len(data)
	}
	if total > 1<<20 {
		t.Errorf("snapshot of %d files holds %d bytes, want under 1 MiB", len(snaps[0].Files), total)
	}
	if n := len(snaps[0].Files); n != 1+EntityPages {
		t.Errorf("%d files, want FACTS and %d entity pages", n, EntityPages)
	}
	facts := string(snaps[0].Files[FactsFile])
	if !strings.Contains(facts, "## Entities (3007)") || !strings.Contains(facts, "… and 2957 more, without a page of their own") {
		t.Errorf("the entity index does not count what it leaves out:\n%.3000s", facts[strings.Index(facts, "## Entities"):])
	}
}

// downGraph fails every read while down.
type downGraph struct {
	memsync.Graph
	down atomic.Bool
}

func (d *downGraph) setDown(v bool) { d.down.Store(v) }

func (d *downGraph) Walk(ctx context.Context, fn func(memsync.Node) error) error {
	if d.down.Load() {
		return fmt.Errorf("test: connection refused: %w", memsync.ErrUnavailable)
	}
	return d.Graph.Walk(ctx, fn)
}

// countingGraph counts walks.
type countingGraph struct {
	memsync.Graph
	walks atomic.Int32
}

func (c *countingGraph) Walk(ctx context.Context, fn func(memsync.Node) error) error {
	c.walks.Add(1)
	return c.Graph.Walk(ctx, fn)
}
