package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/recall"
)

// lexicalPair runs lexicalTerms (the rare terms first, the index's best
// matches first) and lexicalAll (every match ranked, sqlSearch) for text
// with pool, and fails unless they give the same candidates in the same
// order with the same scores.
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
	m := matchExpr(groupExpr(groups), recall.ParseQuery(text).Terms)
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := g.lexicalTerms(ctx, groups, recall.ParseQuery(text).Terms, f, pool)
	if err != nil {
		t.Fatal(err)
	}
	want, err := g.lexicalAll(ctx, m, f, pool)
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

func ids(cs []candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.uuid
	}
	return out
}

// TestLexicalTopSettles: ranking inside the index first (the best
// pool×topFetch matches) gives what ranking every match gives: when the
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

// TestLexicalRareFirst: a query of rare and common terms is answered from
// the memories holding a rare term when the best of those outscore the
// bound on any memory holding common terms only, and ranked over every
// match when they do not (the common-only memories then win: short
// memories repeating the common term, against long ones naming the rare
// term once). Both give what ranking every match gives. The rule's
// thresholds are lowered to this store's size (at their defaults it
// applies from 50,000 memories; the 1M figures in docs/benchmarks.md).
func TestLexicalRareFirst(t *testing.T) {
	minRows, share := rareMinRows, rareShare
	rareMinRows, rareShare = 0, 0.03
	t.Cleanup(func() { rareMinRows, rareShare = minRows, share })
	long := strings.Repeat("filler ", 40)
	for _, tc := range []struct {
		name          string
		common, rare  string
		settles       bool
		commonOnlyTop bool // a memory holding only the common term is among the answer
	}{
		{name: "rare memories outscore the bound", common: "alpha beta gamma delta", rare: "zeta alpha", settles: true},
		{name: "common memories win", common: "alpha alpha alpha", rare: "zeta " + long, commonOnlyTop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := openTest(t)
			var batch []memsync.Memory
			add := func(prefix, text string, n int) {
				for i := 0; i < n; i++ {
					batch = append(batch, mem(fmt.Sprintf("%s%03d", prefix, i), len(batch), text))
				}
			}
			add("c", tc.common, 60)
			add("r", tc.rare, 5)
			add("f", "nothing of the query here", 135)
			apply(t, g, batch...)
			got := lexicalPair(t, g, "alpha zeta", nil, 3)
			gj, _ := json.Marshal([]string{journal.SharedGroup})
			_, settled, err := g.lexicalRare(context.Background(), groupExpr([]string{journal.SharedGroup}),
				recall.ParseQuery("alpha zeta").Terms, filter{groups: string(gj)}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if settled != tc.settles {
				t.Errorf("settled by the rare terms: %v, want %v", settled, tc.settles)
			}
			commonOnly := false
			for _, c := range got {
				commonOnly = commonOnly || strings.HasPrefix(c.uuid, "c")
			}
			if commonOnly != tc.commonOnlyTop {
				t.Errorf("answer %v: holds a common-only memory %v, want %v", ids(got), commonOnly, tc.commonOnlyTop)
			}
		})
	}
}

// TestLexicalRareFirstAtScale: at the rule's default thresholds (a store
// of 51,000 memories, above rareMinRows; a word in 10% of them, words in
// 0.5%), rare terms first settles the queries that mix a rare and a common
// word, and every query gets what ranking every match gives.
func TestLexicalRareFirstAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("51,000 memories")
	}
	g := openTest(t)
	r := rand.New(rand.NewSource(27))
	const n = 51000
	batch := make([]memsync.Memory, 0, 5000)
	for i := 0; i < n; i++ {
		words := []string{fmt.Sprintf("rare%d", r.Intn(200)), fmt.Sprintf("filler%d", r.Intn(1000)), fmt.Sprintf("filler%d", r.Intn(1000))}
		if r.Intn(10) == 0 {
			words = append(words, "common")
		}
		if r.Intn(30) == 0 {
			words = append(words, "middling")
		}
		for k := r.Intn(4); k > 0; k-- {
			words = append(words, fmt.Sprintf("filler%d", r.Intn(1000)))
		}
		batch = append(batch, mem(fmt.Sprintf("m%06d", i), i, strings.Join(words, " ")))
		if len(batch) == cap(batch) {
			apply(t, g, batch...)
			batch = batch[:0]
		}
	}
	gj, _ := json.Marshal([]string{journal.SharedGroup})
	for _, tc := range []struct {
		text    string
		settles bool
	}{
		{"common rare7", true},
		{"rare3 common rare11", true},
		{"common middling rare5", false}, // two common words: their bound is above any rare word's idf
		{"rare1 rare2", false},           // no common word
		{"common", false},                // one word
	} {
		t.Run(tc.text, func(t *testing.T) {
			lexicalPair(t, g, tc.text, nil, recall.Pool)
			var settled bool
			if terms := recall.ParseQuery(tc.text).Terms; len(terms) > 1 {
				var err error
				_, settled, err = g.lexicalRare(context.Background(), groupExpr([]string{journal.SharedGroup}),
					terms, filter{groups: string(gj)}, recall.Pool)
				if err != nil {
					t.Fatal(err)
				}
			}
			if settled != tc.settles {
				t.Errorf("settled by the rare terms: %v, want %v", settled, tc.settles)
			}
		})
	}
}

// TestLexicalRareFirstEmpty: on a store with nothing indexed (no averages
// record yet, or emptied), a query of several words finds nothing, without
// an error.
func TestLexicalRareFirstEmpty(t *testing.T) {
	minRows := rareMinRows
	rareMinRows = 0
	t.Cleanup(func() { rareMinRows = minRows })
	g := openTest(t)
	hits, err := g.Search(context.Background(), memsync.SearchQuery{Text: "alpha zeta", Groups: []string{journal.SharedGroup}})
	if err != nil || len(hits) != 0 {
		t.Fatalf("Search on an empty store = %v, %v; want nothing, no error", hits, err)
	}
}
