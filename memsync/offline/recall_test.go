package offline

import (
	"context"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
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
