package offline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

var clock = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// rec builds a valid private fact; opts adjust it.
func rec(uuid, agent string, sec int, text string, opts ...func(*journal.Record)) journal.Record {
	r := journal.Record{
		UUID: uuid, TS: clock.Add(time.Duration(sec) * time.Second), Agent: agent,
		Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: text,
	}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func shared(r *journal.Record)                  { r.Scope = journal.ScopeShared }
func kind(k journal.Kind) func(*journal.Record) { return func(r *journal.Record) { r.Kind = k } }
func supers(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.Supersedes = ids }
}

// writeJournals appends each record's canonical line to its author's
// journal for its day, and returns the layout.
func writeJournals(t testing.TB, root string, recs ...journal.Record) memsync.Layout {
	t.Helper()
	layout := memsync.Layout{Root: root}
	for _, r := range recs {
		appendLine(t, filepath.Join(layout.JournalDir(r.Agent), journal.FileName(r.TS)), string(r.Canonical()))
	}
	return layout
}

func appendLine(t testing.TB, path, line string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func groups(agent string) []string { return []string{journal.SharedGroup, journal.PrivateGroup(agent)} }

func find(t *testing.T, layout memsync.Layout, q memsync.SearchQuery) []memsync.Hit {
	t.Helper()
	hits, err := Search(context.Background(), layout, q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	return hits
}

func uuids(hits []memsync.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.UUID
	}
	return out
}

// lexical is hits without the neighbours the recipe brought in beside
// them (the same agent's sessionless records seconds apart form an
// episode): what the lexical cases here are about.
func lexical(hits []memsync.Hit) []memsync.Hit {
	var out []memsync.Hit
	for _, h := range hits {
		if h.From == "" {
			out = append(out, h)
		}
	}
	return out
}

func TestTokens(t *testing.T) {
	got := Tokens(`Foo:bar AND ( "Zürich" x_y café-naïve 42 日本語`)
	want := []string{"foo", "bar", "zurich", "x", "cafe", "naiv", "42", "日本語"} // package analysis's terms
	if !slices.Equal(got, want) {
		t.Fatalf("Tokens = %q, want %q", got, want)
	}
}

func TestRanking(t *testing.T) {
	layout := writeJournals(t, t.TempDir(),
		rec("m1", "alice", 1, "the deploy went fine", shared),
		rec("m2", "alice", 2, "deploy deploy deploy rollback", shared),
		rec("m3", "alice", 3, "lunch was good", shared),
		rec("m4", "bob", 4, "we ate lunch and talked about many other unrelated things at length", shared),
		rec("m5", "bob", 5, "kafka consumer lag alert", shared),
	)
	// m2 says deploy three times and rollback: it beats m1 on both words.
	got := uuids(lexical(find(t, layout, memsync.SearchQuery{Text: "deploy rollback", Groups: groups("alice")})))
	if !slices.Equal(got, []string{"m2", "m1"}) {
		t.Fatalf("deploy rollback: %v", got)
	}
	// Same term count, shorter document ranks first.
	got = uuids(lexical(find(t, layout, memsync.SearchQuery{Text: "lunch", Groups: groups("bob")})))
	if !slices.Equal(got, []string{"m3", "m4"}) {
		t.Fatalf("lunch: %v", got)
	}
	// A rare word outweighs a common one.
	layout = writeJournals(t, t.TempDir(),
		rec("c1", "alice", 1, "common common"),
		rec("c2", "alice", 2, "common"),
		rec("c3", "alice", 3, "common"),
		rec("c4", "alice", 4, "rare"),
	)
	got = uuids(find(t, layout, memsync.SearchQuery{Text: "common rare", Groups: groups("alice")}))
	if got[0] != "c4" {
		t.Fatalf("common rare: %v, want c4 first", got)
	}
	// Entities and tags match, at lower weight than text.
	layout = writeJournals(t, t.TempDir(),
		rec("e1", "alice", 1, "planning notes", func(r *journal.Record) { r.Tags = []string{"moonshot"} }),
		rec("e2", "alice", 2, "moonshot planning notes"),
	)
	got = uuids(lexical(find(t, layout, memsync.SearchQuery{Text: "moonshot", Groups: groups("alice")})))
	if !slices.Equal(got, []string{"e2", "e1"}) {
		t.Fatalf("moonshot: %v", got)
	}
}

func TestScoresArePositiveAndDescending(t *testing.T) {
	layout := writeJournals(t, t.TempDir(),
		rec("a", "alice", 1, "alpha beta"), rec("b", "alice", 2, "alpha"), rec("c", "alice", 3, "gamma"))
	hits := lexical(find(t, layout, memsync.SearchQuery{Text: "alpha beta", Groups: groups("alice")}))
	if len(hits) != 2 {
		t.Fatalf("hits: %v", uuids(hits))
	}
	if hits[0].Score <= hits[1].Score || hits[1].Score <= 0 {
		t.Fatalf("scores %v, %v", hits[0].Score, hits[1].Score)
	}
}

func TestTiesNewestFirstThenUUID(t *testing.T) {
	layout := writeJournals(t, t.TempDir(),
		rec("t-b", "alice", 1, "same words"),
		rec("t-a", "alice", 1, "same words"),
		rec("t-c", "alice", 2, "same words"),
	)
	got := uuids(find(t, layout, memsync.SearchQuery{Text: "words", Groups: groups("alice")}))
	if !slices.Equal(got, []string{"t-c", "t-a", "t-b"}) {
		t.Fatalf("ties: %v", got)
	}
}

func TestGroupIsolation(t *testing.T) {
	layout := writeJournals(t, t.TempDir(),
		rec("a-priv", "alice", 1, "secret launch codes"),
		rec("a-shared", "alice", 2, "launch is on friday", shared),
		rec("b-priv", "bob", 3, "bob's launch notes"),
	)
	got := uuids(find(t, layout, memsync.SearchQuery{Text: "launch", Groups: groups("bob")}))
	slices.Sort(got)
	if !slices.Equal(got, []string{"a-shared", "b-priv"}) {
		t.Fatalf("bob sees %v", got)
	}
	got = uuids(find(t, layout, memsync.SearchQuery{Text: "secret codes", Groups: groups("bob")}))
	if len(got) != 0 {
		t.Fatalf("bob finds alice's secret: %v", got)
	}
	if hits := find(t, layout, memsync.SearchQuery{Text: "launch"}); len(hits) != 0 {
		t.Fatalf("no groups must see nothing, got %v", uuids(hits))
	}
}

func TestSupersession(t *testing.T) {
	layout := writeJournals(t, t.TempDir(),
		rec("old", "alice", 1, "the database is postgres 14", shared),
		rec("new", "alice", 5, "the database is postgres 16", shared, supers("old")),
		rec("newer", "alice", 3, "the database is postgres 15", shared, supers("old")),
		// Alice's private record does not retire a shared one (SPEC §7: a
		// private record retires only its own group): neither alice nor
		// bob has it hidden.
		rec("sh", "bob", 6, "the database runs on one host", shared),
		rec("priv", "alice", 7, "moved database off the single host", supers("sh")),
	)
	got := uuids(find(t, layout, memsync.SearchQuery{Text: "database", Groups: groups("alice"), Limit: 20}))
	slices.Sort(got)
	if !slices.Equal(got, []string{"new", "newer", "priv", "sh"}) {
		t.Fatalf("alice current: %v", got)
	}
	got = uuids(find(t, layout, memsync.SearchQuery{Text: "database", Groups: groups("bob"), Limit: 20}))
	slices.Sort(got)
	if !slices.Equal(got, []string{"new", "newer", "sh"}) {
		t.Fatalf("bob current: %v", got)
	}
	hits := find(t, layout, memsync.SearchQuery{Text: "postgres 14", Groups: groups("alice"), All: true})
	if len(hits) == 0 || hits[0].UUID != "old" {
		t.Fatalf("--all: %v", uuids(hits))
	}
	// The earliest superseder replaces it.
	if hits[0].ReplacedBy != "newer" || !hits[0].InvalidAt.Equal(clock.Add(3*time.Second)) {
		t.Fatalf("old: replaced by %q at %v", hits[0].ReplacedBy, hits[0].InvalidAt)
	}
}

func TestFilters(t *testing.T) {
	layout := writeJournals(t, t.TempDir(),
		rec("f1", "alice", 1, "cache policy"),
		rec("f2", "alice", 2, "cache policy", kind(journal.KindDecision)),
		rec("f3", "alice", 3600*30, "cache policy", kind(journal.KindDecision)),
		rec("f4", "alice", 4, "cache policy", kind(journal.KindProcedure)),
	)
	q := memsync.SearchQuery{Text: "cache", Groups: groups("alice"), Kinds: []journal.Kind{journal.KindDecision, journal.KindProcedure}}
	got := uuids(lexical(find(t, layout, q)))
	// f4 and f2, a few seconds apart, are one episode and lift each other
	// above f3 (the rule's neighbour lift); the filter keeps f1 out of it.
	if !slices.Equal(got, []string{"f4", "f2", "f3"}) {
		t.Fatalf("kinds: %v", got)
	}
	q.Since = clock.Add(time.Hour)
	if got := uuids(lexical(find(t, layout, q))); !slices.Equal(got, []string{"f3"}) {
		t.Fatalf("since: %v", got)
	}
	if got := uuids(lexical(find(t, layout, memsync.SearchQuery{Text: "cache", Groups: groups("alice"), Limit: 2}))); !slices.Equal(got, []string{"f4", "f2"}) {
		t.Fatalf("limit: %v", got)
	}
}

func TestDefaultLimit(t *testing.T) {
	var recs []journal.Record
	for i := range 25 {
		recs = append(recs, rec(fmt.Sprintf("m%02d", i), "alice", i, "word"))
	}
	layout := writeJournals(t, t.TempDir(), recs...)
	if hits := find(t, layout, memsync.SearchQuery{Text: "word", Groups: groups("alice")}); len(hits) != DefaultLimit {
		t.Fatalf("%d hits, want %d", len(hits), DefaultLimit)
	}
}

func TestHostileQueries(t *testing.T) {
	layout := writeJournals(t, t.TempDir(),
		rec("h1", "alice", 1, `foo:bar AND ( "quoted" \ backslash`),
		rec("h2", "alice", 2, "plain foo"),
	)
	for _, q := range []string{`foo:bar AND (`, `"`, `*`, `NEAR(a b)`, `' OR 1=1 --`, `\`, `)))`, `{}[]^~`, ``, "  \t\n", "\x00"} {
		hits, err := Search(context.Background(), layout, memsync.SearchQuery{Text: q, Groups: groups("alice")})
		if err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
		if q == `foo:bar AND (` && (len(hits) != 2 || hits[0].UUID != "h1") {
			t.Fatalf("query %q: %v", q, uuids(hits))
		}
	}
}

func TestAttribution(t *testing.T) {
	root := t.TempDir()
	r := rec("at1", "alice", 1, "attributed memory about @Shaun", func(r *journal.Record) {
		r.Source = &journal.Source{Type: "told", Actor: "@Shaun"}
		r.Links = []string{"z", "a"}
	})
	layout := writeJournals(t, root, rec("at0", "alice", 0, "first line"), r)
	hits := lexical(find(t, layout, memsync.SearchQuery{Text: "attributed", Groups: groups("alice")}))
	if len(hits) != 1 {
		t.Fatalf("hits: %v", uuids(hits))
	}
	h := hits[0]
	if h.Path != "agents/alice/memory/journal/2026-11-20.jsonl" || h.Line != 2 {
		t.Fatalf("place %s:%d", h.Path, h.Line)
	}
	if h.Agent != "alice" || h.Kind != journal.KindFact || !h.TS.Equal(r.TS) || h.Source == nil || h.Source.Actor != "@Shaun" {
		t.Fatalf("attribution: %+v", h.Memory)
	}
	if h.GroupID != "AGENT:alice" || h.Hash != r.Hash() || !slices.Equal(h.LinksTo, []string{"a", "z"}) || !slices.Equal(h.Mentions, []string{"@Shaun"}) {
		t.Fatalf("derived fields: %+v", h.Node)
	}
}

func TestSkipsRejectsAndDuplicates(t *testing.T) {
	root := t.TempDir()
	layout := memsync.Layout{Root: root}
	path := filepath.Join(layout.JournalDir("alice"), "2026-11-20.jsonl")
	first := rec("d1", "alice", 1, "original wording of the widget")
	appendLine(t, path, string(first.Canonical()))
	appendLine(t, path, `{"ts":"2026-11-20T09:00:00Z","agent":"alice","kind":"fact","text":"broken widget`)
	appendLine(t, path, `{"ts":"2026-11-20T09:00:00Z","agent":"bob","kind":"fact","text":"impostor widget"}`)
	appendLine(t, path, `{"ts":"2026-11-20T09:00:00Z","agent":"alice","kind":"bogus","text":"bad kind widget"}`)
	changed := rec("d1", "alice", 2, "changed widget widget widget")
	appendLine(t, path, string(changed.Canonical()))   // same uuid, other content, later ts: a reject
	appendLine(t, path, string(first.Canonical()))     // replay: a no-op
	appendLine(t, path, `{"agent":"alice","kind":"fa`) // torn last line, no newline below
	hits := find(t, layout, memsync.SearchQuery{Text: "widget", Groups: groups("alice")})
	if len(hits) != 1 || hits[0].UUID != "d1" || hits[0].Text != first.Text || hits[0].Line != 1 {
		t.Fatalf("hits: %+v", hits)
	}
	if hits := find(t, layout, memsync.SearchQuery{Text: "impostor", Groups: groups("bob")}); len(hits) != 0 {
		t.Fatalf("a line in alice's journal written as bob must not count: %v", uuids(hits))
	}
}

// A uuid clash is resolved as the graph resolves it (journal.ClashWins),
// not by line order: a private record re-written later as shared in an
// earlier day's file stays private, so no other agent finds it; the
// back-dated version of a shared record wins over the first one written.
func TestClashWinnerNotLineOrder(t *testing.T) {
	root := t.TempDir()
	layout := memsync.Layout{Root: root}
	dir := layout.JournalDir("alice")
	secret := rec("mem_20261121T090000Z_alice_0001", "alice", 86400, "the launch code is zebra")
	appendLine(t, filepath.Join(dir, "2026-11-21.jsonl"), string(secret.Canonical()))
	leak := secret
	leak.Scope, leak.TS = journal.ScopeShared, clock
	appendLine(t, filepath.Join(dir, "2026-11-20.jsonl"), string(leak.Canonical()))
	if hits := find(t, layout, memsync.SearchQuery{Text: "zebra", Groups: groups("bob")}); len(hits) != 0 {
		t.Fatalf("bob finds alice's private record through its shared rewrite: %+v", hits)
	}
	if hits := find(t, layout, memsync.SearchQuery{Text: "zebra", Groups: groups("alice")}); len(hits) != 1 ||
		hits[0].GroupID != journal.PrivateGroup("alice") || hits[0].Path != "agents/alice/memory/journal/2026-11-21.jsonl" {
		t.Fatalf("alice finds %+v, want her private record only", hits)
	}
	first := rec("e1", "alice", 50, "the deploy window is tuesday", shared)
	later := rec("e1", "alice", 10, "the deploy window is monday", shared)
	appendLine(t, filepath.Join(dir, "2026-11-20.jsonl"), string(first.Canonical()))
	appendLine(t, filepath.Join(dir, "2026-11-20.jsonl"), string(later.Canonical()))
	if hits := find(t, layout, memsync.SearchQuery{Text: "deploy window", Groups: groups("bob")}); len(hits) != 1 || hits[0].Text != later.Text {
		t.Fatalf("hits = %+v, want only the earlier-ts version", hits)
	}
}

// A line whose uuid names another agent is never a hit: agent a cannot
// take over b's uuids by writing them first.
func TestSquattedUUIDIsNotAHit(t *testing.T) {
	root := t.TempDir()
	layout := memsync.Layout{Root: root}
	squat := rec("mem_20261120T090000Z_bob_0001", "alice", 0, "squatted shared walrus", shared)
	appendLine(t, filepath.Join(layout.JournalDir("alice"), "2026-11-20.jsonl"), string(squat.Canonical()))
	own := rec("mem_20261120T090000Z_bob_0001", "bob", 5, "bob's own walrus")
	appendLine(t, filepath.Join(layout.JournalDir("bob"), "2026-11-20.jsonl"), string(own.Canonical()))
	if hits := find(t, layout, memsync.SearchQuery{Text: "walrus", Groups: groups("carol")}); len(hits) != 0 {
		t.Fatalf("carol finds %+v, want nothing (the squat is a reject, bob's record is private)", hits)
	}
	if hits := find(t, layout, memsync.SearchQuery{Text: "walrus", Groups: groups("bob")}); len(hits) != 1 || hits[0].Agent != "bob" {
		t.Fatalf("bob finds %+v, want his own record", hits)
	}
}

func TestArchiveIsSearched(t *testing.T) {
	root := t.TempDir()
	layout := memsync.Layout{Root: root}
	r := rec("ar1", "alice", 1, "archived knowledge")
	appendLine(t, filepath.Join(layout.ArchiveDir("alice"), "2026-11-20.jsonl"), string(r.Canonical()))
	hits := find(t, layout, memsync.SearchQuery{Text: "knowledge", Groups: groups("alice")})
	if len(hits) != 1 || hits[0].Path != "agents/alice/memory/journal/archive/2026-11-20.jsonl" {
		t.Fatalf("hits: %+v", hits)
	}
}

func TestEmptyRepository(t *testing.T) {
	hits, err := Search(context.Background(), memsync.Layout{Root: t.TempDir()}, memsync.SearchQuery{Text: "x", Groups: groups("a")})
	if err != nil || len(hits) != 0 {
		t.Fatalf("%v, %v", hits, err)
	}
}

func TestCancelled(t *testing.T) {
	layout := writeJournals(t, t.TempDir(), rec("c1", "alice", 1, "text"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Search(ctx, layout, memsync.SearchQuery{Text: "text", Groups: groups("alice")}); err == nil {
		t.Fatal("a cancelled search must fail")
	}
}

func TestDeterministic(t *testing.T) {
	var recs []journal.Record
	for i := range 200 {
		recs = append(recs, rec(fmt.Sprintf("m%03d", i), []string{"alice", "bob"}[i%2], i%17, fmt.Sprintf("word%d shared text %d", i%5, i%3), shared))
	}
	layout := writeJournals(t, t.TempDir(), recs...)
	q := memsync.SearchQuery{Text: "word1 text 2", Groups: groups("alice"), Limit: 50}
	first := find(t, layout, q)
	for range 5 {
		again := find(t, layout, q)
		if !slices.Equal(uuids(first), uuids(again)) {
			t.Fatalf("order changed:\n%v\n%v", uuids(first), uuids(again))
		}
	}
}

func TestOddLines(t *testing.T) {
	root := t.TempDir()
	layout := memsync.Layout{Root: root}
	path := filepath.Join(layout.JournalDir("alice"), "2026-11-20.jsonl")
	// An escaped word, a CRLF line, a line without uuid, a rejected line
	// whose uuid a later valid line reuses, and a superseder that is itself
	// a reject (so it retires nothing).
	appendLine(t, path, `{"uuid":"o1","ts":"2026-11-20T09:00:01Z","agent":"alice","kind":"fact","text":"caf\u00e9 owner"}`)
	appendLine(t, path, `{"uuid":"o2","ts":"2026-11-20T09:00:02Z","agent":"alice","kind":"fact","text":"crlf owner"}`+"\r")
	appendLine(t, path, `{"ts":"2026-11-20T09:00:03Z","agent":"alice","kind":"fact","text":"derived owner"}`)
	appendLine(t, path, `{"ts":"2026-11-20T09:00:03Z","agent":"alice","kind":"fact","text":"derived owner"}`)
	appendLine(t, path, `{"uuid":"o4","ts":"2026-11-20T09:00:04Z","agent":"alice","kind":"nonsense","text":"retry owner"}`)
	appendLine(t, path, `{"uuid":"o4","ts":"2026-11-20T09:00:04Z","agent":"alice","kind":"fact","text":"retry owner"}`)
	appendLine(t, path, `{"uuid":"o5","ts":"2026-11-20T09:00:05Z","agent":"alice","kind":"fact","text":"bad superseder","supersedes":["o1"],"confidence":"sure"}`)
	hits := find(t, layout, memsync.SearchQuery{Text: "café owner", Groups: groups("alice"), Limit: 20})
	got := map[string]int{}
	for _, h := range hits {
		got[h.UUID] = h.Line
	}
	if len(hits) != 4 || got["o1"] != 1 || got["o2"] != 2 || got["o4"] != 6 || hits[0].UUID != "o1" {
		t.Fatalf("hits: %v", got)
	}
	for _, h := range hits {
		if strings.HasPrefix(h.UUID, "mem_") && h.Line != 3 {
			t.Fatalf("the replayed line must count once, at its first line: %v", got)
		}
	}
	if find(t, layout, memsync.SearchQuery{Text: "café", Groups: groups("alice")})[0].ReplacedBy != "" {
		t.Fatal("a rejected line retired a record")
	}
}
