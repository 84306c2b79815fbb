package offline

import (
	"context"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// TestRecallCases: the offline path passes the recall cases the graph
// backends pass (graphtest.RunRecall): the first hits do not depend on the
// limit, queries are analyzed as the graph's are, and session neighbours
// join.
func TestRecallCases(t *testing.T) {
	var recs []journal.Record
	for _, m := range graphtest.RecallCorpus() {
		recs = append(recs, m.Record)
	}
	layout := writeJournals(t, t.TempDir(), recs...)
	graphtest.RunRecall(t, func(t *testing.T, q memsync.SearchQuery) []memsync.Hit {
		t.Helper()
		hits, err := Search(context.Background(), layout, q)
		if err != nil {
			t.Fatalf("Search(%q): %v", q.Text, err)
		}
		return hits
	})
}

// TestRankProperties: SPEC §7's ranking properties hold offline as on the
// graphs (graphtest.RunRanking): superset of terms first, factors that
// multiply into the score, findability with only retired memories left out.
func TestRankProperties(t *testing.T) {
	var recs []journal.Record
	for _, m := range graphtest.RankCorpus(7) {
		recs = append(recs, m.Record)
	}
	graphtest.RunRanking(t, Journals{Layout: writeJournals(t, t.TempDir(), recs...)}, 7)
}

// TestHybridCases: offline, with the embedder, passes the hybrid cases the
// graph backends pass (graphtest.RunHybrid): the same top 10, and no other
// agent's private memory returned or ranking anything.
func TestHybridCases(t *testing.T) {
	var recs []journal.Record
	for _, m := range graphtest.HybridCorpus(true) {
		recs = append(recs, m.Record)
	}
	j := Journals{Layout: writeJournals(t, t.TempDir(), recs...), Embedder: graphtest.HybridEmbedder()}
	graphtest.RunHybrid(t, func(t *testing.T, q memsync.SearchQuery) []memsync.Hit {
		t.Helper()
		hits, err := read.Search(context.Background(), j, q)
		if err != nil {
			t.Fatalf("Search(%q): %v", q.Text, err)
		}
		return hits
	})
}

// TestRecipeCases: the offline path passes the recipe cases the graph
// backends pass (graphtest.RunRecipe), with the same first ten.
func TestRecipeCases(t *testing.T) {
	var recs []journal.Record
	for _, m := range graphtest.RecipeCorpus() {
		recs = append(recs, m.Record)
	}
	graphtest.RunRecipe(t, Journals{Layout: writeJournals(t, t.TempDir(), recs...)})
}

// TestEpisodeCases: sessionless records find their implicit episode's
// neighbours offline as on the graphs (graphtest.RunEpisodes), with the
// same first ten.
func TestEpisodeCases(t *testing.T) {
	var recs []journal.Record
	for _, m := range graphtest.EpisodeCorpus() {
		recs = append(recs, m.Record)
	}
	layout := writeJournals(t, t.TempDir(), recs...)
	graphtest.RunEpisodes(t, func(t *testing.T, q memsync.SearchQuery) []memsync.Hit {
		t.Helper()
		hits, err := Search(context.Background(), layout, q)
		if err != nil {
			t.Fatalf("Search(%q): %v", q.Text, err)
		}
		return hits
	})
}
