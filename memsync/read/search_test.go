package read_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// fakeRetriever gives the recipe fixed primitives: lexical hits, and
// neighbours that name memories it cannot read any more (vanished).
type fakeRetriever struct {
	lexical []memsync.Found
	beside  []memsync.Beside
}

func (f fakeRetriever) Lexical(_ context.Context, _ []string, _ memsync.Filter, pool int) ([]memsync.Found, error) {
	return f.lexical[:min(pool, len(f.lexical))], nil
}

func (f fakeRetriever) Neighbours(context.Context, []memsync.Node, memsync.Filter) ([]memsync.Beside, error) {
	return f.beside, nil
}

func (f fakeRetriever) Similar(context.Context, string, memsync.Filter, int) ([]memsync.Found, error) {
	return nil, nil
}

func node(uuid, session, text string, minute int) memsync.Node {
	return memsync.Node{Memory: memsync.Memory{Record: journal.Record{UUID: uuid, Agent: "a", Session: session, Text: text,
		TS: time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC), Kind: journal.KindFact, Scope: journal.ScopeShared}}}
}

// TestSearchRecipe: the one recipe cuts to DefaultSearchLimit when the
// query sets no limit, on every engine; a neighbour a primitive reports
// with a source that is no hit brings nothing; and a link to a memory the
// engine could not read is no error (the memory is simply not a hit).
func TestSearchRecipe(t *testing.T) {
	var r fakeRetriever
	for i := range 30 {
		r.lexical = append(r.lexical, memsync.Found{Node: node(fmt.Sprintf("m%02d", i), "s", "kafka lag", i), Score: float64(100 - i)})
	}
	r.beside = []memsync.Beside{
		{From: "m00", After: []memsync.Node{node("n1", "s", "lunch", 40)}},
		{From: "gone", After: []memsync.Node{node("n2", "s", "coffee", 41)}},
	}
	groups := []string{journal.SharedGroup}
	hits, err := read.Search(context.Background(), r, memsync.SearchQuery{Text: "kafka lag", Groups: groups})
	if err != nil || len(hits) != memsync.DefaultSearchLimit {
		t.Fatalf("Search = %d hits, %v; want %d", len(hits), err, memsync.DefaultSearchLimit)
	}
	all, err := read.Search(context.Background(), r, memsync.SearchQuery{Text: "kafka lag", Groups: groups, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range all {
		if h.UUID == "n2" {
			t.Errorf("n2 found beside %q, which is no hit", "gone")
		}
		if h.UUID == "n1" && h.From != "m00" {
			t.Errorf("n1 brought in by %q, want m00", h.From)
		}
		if h.UUID != "n1" && h.Fields.Text != 0b11 {
			t.Errorf("%s holds %+v, want both terms in its text", h.UUID, h.Fields)
		}
	}
	if hits, err := read.Search(context.Background(), r, memsync.SearchQuery{Text: "the", Groups: groups}); err != nil || hits != nil {
		t.Errorf("a query of stopwords = %v, %v; want nothing", hits, err)
	}
}
