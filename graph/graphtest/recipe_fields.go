package graphtest

import (
	"testing"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/recall"
)

// recipeFields is, for some recipe queries, where each hit holds the
// query's terms as explain names it (recall.Fields.Describe).
var recipeFields = map[string]map[string]string{
	"postgres billing": {"rc-pg": "text: postgres", "rc-tag": "tag: billing"},
	"kestrel cluster":  {"rc-kes": "text: cluster", "rc-ent": "entity: kestrel"},
	"walrus":           {"rc-said": "text: walrus", "rc-tagged": "tag: walrus"},
}

// checkFields checks that a hit's Match is what its Fields hold, and
// names where, for the queries of recipeFields; and that the cases of
// the two reordering rules moved the hit they are made for (Order).
func checkFields(t *testing.T, name, text string, hits []memsync.Ranked) {
	t.Helper()
	if name == "SupersetFirst" || name == "NeighbourBelowItsHit" {
		if len(hits) < 2 || hits[1].Factors.Order >= 1 {
			t.Errorf("%s: the case tests nothing: the second hit was not held down (%+v)", name, hits)
		}
	}
	q := recall.ParseQuery(text)
	for _, h := range hits {
		if h.Match != h.Fields.All() {
			t.Errorf("%q: %s holds %b, its fields %+v", text, h.UUID, h.Match, h.Fields)
		}
		if want, ok := recipeFields[text][h.UUID]; ok {
			if got := h.Fields.Describe(q); got != want {
				t.Errorf("%q: %s holds %q, want %q", text, h.UUID, got, want)
			}
		}
	}
}
