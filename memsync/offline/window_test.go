package offline

import (
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
)

// TestWindowCases: the offline path answers the window cases as the
// graphs do (graphtest.RunWindow), read once (NewJournals) and read per
// call (the zero Journals).
func TestWindowCases(t *testing.T) {
	var recs []journal.Record
	for _, m := range graphtest.WindowCorpus() {
		recs = append(recs, m.Record)
	}
	layout := writeJournals(t, t.TempDir(), recs...)
	t.Run("NewJournals", func(t *testing.T) { graphtest.RunWindow(t, NewJournals(layout)) })
	t.Run("Journals", func(t *testing.T) { graphtest.RunWindow(t, Journals{Layout: layout}) })
}
