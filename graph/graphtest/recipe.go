package graphtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// RecipeGroups are the groups the recipe cases read as: agent a's.
var RecipeGroups = journal.ReaderGroups("a")

// RecipeClock is when the recipe cases read: a day after the corpus.
var RecipeClock = memsync.Present(Base.Add(24 * time.Hour))

// RecipeCorpus is the corpus of the recipe cases (RunRecipe): agent a's
// memories, each case with words of its own, and the feedback that
// flags some of them.
func RecipeCorpus() []memsync.Memory {
	var out []memsync.Memory
	minute := 0
	add := func(r journal.Record) {
		minute++
		// Further apart than recall.EpisodeGap: a sessionless memory has
		// no neighbours here (RunEpisodes has its own corpus).
		r.TS = Base.Add(time.Duration(minute) * 40 * time.Minute)
		r.Agent = "a"
		if r.Kind == "" {
			r.Kind = journal.KindObservation
		}
		if r.Scope == "" {
			r.Scope = journal.ScopeShared
		}
		out = append(out, memsync.Memory{Record: r, Path: "agents/a/memory/journal/" + journal.FileName(r.TS), Line: len(out) + 1})
	}
	flag := func(uuid, value string) {
		b, _ := json.Marshal(value)
		add(journal.Record{UUID: fmt.Sprintf("rc-fb-%02d", minute), Kind: journal.KindFeedback, Text: "feedback",
			Links: []string{uuid}, Extra: map[string]json.RawMessage{journal.FieldFeedback: b}})
	}
	// A tag-only match, and a text match of the other term.
	add(journal.Record{UUID: "rc-tag", Kind: journal.KindTask, Text: "Upgrade webhooks dependencies", Tags: []string{"billing"}})
	add(journal.Record{UUID: "rc-pg", Kind: journal.KindTask, Text: "Keep postgres as is"})
	// The same with a declared entity.
	add(journal.Record{UUID: "rc-ent", Kind: journal.KindTask, Text: "Rotate the signing keys", Entities: []string{"Kestrel"}})
	add(journal.Record{UUID: "rc-kes", Kind: journal.KindTask, Text: "Keep the old cluster"})
	// One term said, the same term only tagged.
	add(journal.Record{UUID: "rc-said", Text: "The walrus feeder is broken"})
	add(journal.Record{UUID: "rc-tagged", Text: "The feeder is broken", Tags: []string{"walrus"}})
	// A session whose first turn is flagged wrong; its next turn holds
	// none of the query's words.
	add(journal.Record{UUID: "rc-w1", Session: "s-w", Text: "ferret migration plan approved for friday"})
	add(journal.Record{UUID: "rc-w2", Session: "s-w", Text: "lunch menu discussed at length"})
	add(journal.Record{UUID: "rc-w3", Text: "ferret cage cleaned and the ferret fed, then a long afternoon of other chores and errands"})
	flag("rc-w1", "wrong")
	// A session whose hit is unimportant and inferred, its neighbour
	// important and experienced.
	add(journal.Record{UUID: "rc-n1", Session: "s-n", Text: "ocelot budget review", Source: &journal.Source{Type: "inferred"}})
	add(journal.Record{UUID: "rc-n2", Session: "s-n", Text: "coffee machine broken again", Source: &journal.Source{Type: "experienced"}})
	flag("rc-n1", "unimportant")
	flag("rc-n1", "unimportant")
	flag("rc-n2", "important")
	// A memory holding both terms, archived, and one holding the rare
	// one only, important: the superset rule ranks the first above.
	add(journal.Record{UUID: "rc-both", Text: "zircon quasar noted in a long weekly review with many other words about planning budgets hiring vendors",
		Source: &journal.Source{Type: "inferred"}})
	add(journal.Record{UUID: "rc-one", Text: "zircon", Source: &journal.Source{Type: "experienced"}})
	for i := range 8 {
		add(journal.Record{UUID: fmt.Sprintf("rc-q%d", i), Text: "quasar sighting number " + fmt.Sprint(i)})
	}
	flag("rc-both", "unimportant")
	flag("rc-both", "unimportant")
	flag("rc-one", "important")
	return out
}

// RecipeCases are the recipe cases' queries and the uuids each must rank
// first, in order (Want), and never return (Not), searched with All or not.
var RecipeCases = []struct {
	Name  string
	Query string
	All   bool
	Want  []string
	Not   []string
}{
	// A tag-only match does not count as holding every term.
	{"TagOnlyIsNotEveryTerm", "postgres billing", false, []string{"rc-pg", "rc-tag"}, nil},
	{"EntityOnlyIsNotEveryTerm", "kestrel cluster", false, []string{"rc-kes", "rc-ent"}, nil},
	// Saying a term beats being tagged with it.
	{"TextBeatsTag", "walrus", false, []string{"rc-said", "rc-tagged"}, nil},
	// A wrong-flagged memory brings in nothing.
	{"WrongBringsNothing", "ferret migration", false, []string{"rc-w3"}, []string{"rc-w1", "rc-w2"}},
	{"WrongBringsNothingAll", "ferret migration", true, nil, []string{"rc-w2"}},
	// A neighbour ranks below the hit that brought it in.
	{"NeighbourBelowItsHit", "ocelot budget", false, []string{"rc-n1", "rc-n2"}, nil},
	// The superset of terms first, and the order is the scores'.
	{"SupersetFirst", "zircon quasar", false, []string{"rc-both", "rc-one"}, nil},
}

// RunRecipe runs the recipe cases against s (over RecipeCorpus) through
// read.Rank, as search prints them: each case's first hits, what it
// must not return, scores that never rise down the list, and the terms a
// hit holds counted wherever the lexical score counts them.
func RunRecipe(t *testing.T, s memsync.Searcher) {
	for _, c := range RecipeCases {
		t.Run(c.Name, func(t *testing.T) {
			q := memsync.RankQuery{SearchQuery: memsync.SearchQuery{Text: c.Query, Groups: RecipeGroups, All: c.All}, Clock: RecipeClock}
			hits, err := read.Rank(context.Background(), s, q)
			if err != nil {
				t.Fatalf("Rank(%q): %v", c.Query, err)
			}
			var got []string
			for i, h := range hits {
				got = append(got, h.UUID)
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("%q: %s (score %v) ranks below %s (score %v): the order is not the scores'", c.Query, h.UUID, h.Score, hits[i-1].UUID, hits[i-1].Score)
				}
			}
			if len(got) < len(c.Want) || !slices.Equal(got[:len(c.Want)], c.Want) {
				t.Errorf("%q (all %v) = %v, want %v first", c.Query, c.All, got, c.Want)
			}
			for _, id := range c.Not {
				if slices.Contains(got, id) {
					t.Errorf("%q (all %v) = %v: %s must not be found", c.Query, c.All, got, id)
				}
			}
			checkFields(t, c.Name, c.Query, hits)
		})
	}
	t.Run("SameTop10", func(t *testing.T) {
		if got := RecipeTop10(t, s); !slices.Equal(got, RecipeWant) {
			t.Errorf("top 10 = %q, want %q", got, RecipeWant)
		}
	})
}

// RecipeTop10 is the first ten uuids Rank gives for each recipe query,
// one line each: what every backend and the offline path must agree on.
func RecipeTop10(t *testing.T, s memsync.Searcher) []string {
	var out []string
	for _, c := range RecipeCases {
		q := memsync.RankQuery{SearchQuery: memsync.SearchQuery{Text: c.Query, Groups: RecipeGroups, All: c.All}, Clock: RecipeClock}
		hits, err := read.Rank(context.Background(), s, q)
		if err != nil {
			t.Fatalf("Rank(%q): %v", c.Query, err)
		}
		line := c.Name + ":"
		for _, h := range hits[:min(10, len(hits))] {
			line += " " + h.UUID
		}
		out = append(out, line)
	}
	return out
}

// RecipeWant is RecipeTop10 over RecipeCorpus: the same on every backend
// and offline (ties by uuid).
var RecipeWant = []string{
	"TagOnlyIsNotEveryTerm: rc-pg rc-tag",
	"EntityOnlyIsNotEveryTerm: rc-kes rc-ent",
	"TextBeatsTag: rc-said rc-tagged",
	"WrongBringsNothing: rc-w3",
	"WrongBringsNothingAll: rc-w1 rc-w3",
	"NeighbourBelowItsHit: rc-n1 rc-n2 rc-both",
	"SupersetFirst: rc-both rc-one rc-q6 rc-q7 rc-q3 rc-q4 rc-q5 rc-q1 rc-q2 rc-q0",
}

func testRecipe(t *testing.T, g memsync.Graph) {
	apply(t, g, RecipeCorpus()...)
	RunRecipe(t, g)
}
