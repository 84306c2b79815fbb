package graphtest

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// Searcher answers a search: a graph's Search, or the offline path over
// the same records written as journals.
type Searcher func(t *testing.T, q memsync.SearchQuery) []memsync.Hit

// RecallGroups are the groups the recall cases search as: every record of
// RecallCorpus is shared.
var RecallGroups = journal.ReaderGroups("reader")

// RecallCorpus is the corpus of the recall cases: a few memories made for
// them and a seeded mass of others, in sessions of turns a minute apart,
// written by two agents. A common and a rare word occur together in a few
// long memories, and the rare one alone in a short one, which the
// AND-then-OR search of earlier versions ranked first or not at all
// depending on the limit.
func RecallCorpus() []memsync.Memory {
	base := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var out []memsync.Memory
	add := func(uuid, agent, session string, minute int, text string) {
		r := journal.Record{UUID: uuid, TS: base.Add(time.Duration(minute) * time.Minute), Agent: agent,
			Kind: journal.KindObservation, Scope: journal.ScopeShared, Text: text, Session: session}
		out = append(out, memsync.Memory{Record: r, Path: "agents/" + agent + "/memory/journal/2026-11-20.jsonl", Line: len(out) + 1})
	}
	// Another agent's session, its second turn private: never a neighbour
	// for a reader who may not see it.
	add("r-pub", "cal", "s-cal", 50, "zanzibar festival tickets bought")
	add("r-priv", "cal", "s-cal", 51, "cal private plans")
	out[len(out)-1].Scope = journal.ScopePrivate
	add("r-and-1", "ann", "", 1, "alpha omega noted in the long weekly review with many other words about planning budgets hiring")
	add("r-and-2", "ann", "", 2, "alpha omega again in a long thread about vendors contracts renewals pricing and deadlines")
	add("r-and-3", "ann", "", 3, "alpha omega third mention inside a long retrospective covering incidents staffing and travel")
	add("r-short", "ann", "", 4, "omega omega")
	add("r-joined", "ann", "", 5, "Caroline joined the LGBTQ support group")
	add("r-cafe", "ann", "", 6, "we met at the cafe\u0301 near the station")
	add("r-dash", "ann", "", 7, "the -foo flag broke the build")
	// A session where the answer shares no word with the question.
	add("r-q", "ben", "s-1", 100, "Melanie: what did you paint last week for the exhibition?")
	add("r-a", "ben", "s-1", 101, "Caroline: a sunrise over a lake, in oils")
	words := []string{"alpha", "kafka", "deploy", "budget", "lake", "paint", "review", "vendor", "travel", "staff",
		"incident", "release", "rollback", "postgres", "latency", "cache", "index", "search", "garden", "music"}
	rng := rand.New(rand.NewSource(15))
	for i := 0; i < 240; i++ {
		n := 2 + rng.Intn(10)
		text := ""
		for j := 0; j < n; j++ {
			text += words[min(rng.Intn(len(words)), rng.Intn(len(words)))] + " "
		}
		agent, session := "ann", ""
		if i%3 != 0 {
			agent, session = "ben", fmt.Sprintf("s-%d", 2+i/12)
		}
		add(fmt.Sprintf("r-%03d", i), agent, session, 200+i, text)
	}
	return out
}

// RecallQueries are the queries whose first hits must not depend on the limit.
var RecallQueries = []string{"alpha omega", "kafka deploy", "lake paint review", "budget", "travel staff incident rollback"}

// RecallAnalyzed are queries and the memory of RecallCorpus each must find
// first: the analyzer's stems, diacritics and stopwords, and a query that
// starts with a dash, mean the same on every path. A query of stopwords
// only finds nothing (and is no error).
var RecallAnalyzed = []struct{ Query, First string }{
	{"When did Caroline join the LGBTQ group?", "r-joined"},
	{"joining lgbtq", "r-joined"},
	{"CAFÉ station", "r-cafe"},
	{"café", "r-cafe"},
	{"-foo", "r-dash"},
	{"what is it, and who was there?", ""},
	{"-", ""},
}

// RunRecall runs the recall cases against search (over RecallCorpus).
func RunRecall(t *testing.T, search Searcher) {
	t.Run("LimitIndependent", func(t *testing.T) {
		for _, text := range RecallQueries {
			full := ids(search(t, memsync.SearchQuery{Text: text, Groups: RecallGroups, Limit: 100}))
			if len(full) < 5 {
				t.Fatalf("%q: %d hits, the case needs more", text, len(full))
			}
			for limit := 1; limit <= 100; limit++ {
				got := ids(search(t, memsync.SearchQuery{Text: text, Groups: RecallGroups, Limit: limit}))
				if want := full[:min(limit, len(full))]; !slices.Equal(got, want) {
					t.Fatalf("%q with limit %d = %v, want the first %d of limit 100: %v", text, limit, got, limit, want)
				}
			}
		}
	})
	t.Run("Analyzed", func(t *testing.T) {
		for _, c := range RecallAnalyzed {
			got := ids(search(t, memsync.SearchQuery{Text: c.Query, Groups: RecallGroups}))
			switch {
			case c.First == "" && len(got) != 0:
				t.Errorf("%q found %v, want nothing", c.Query, got)
			case c.First != "" && (len(got) == 0 || got[0] != c.First):
				t.Errorf("%q found %v, want %s first", c.Query, got, c.First)
			}
		}
	})
	t.Run("NeighboursStayInTheReadersGroups", func(t *testing.T) {
		got := ids(search(t, memsync.SearchQuery{Text: "zanzibar festival", Groups: RecallGroups, Limit: 100}))
		if !slices.Contains(got, "r-pub") || slices.Contains(got, "r-priv") {
			t.Errorf("zanzibar festival = %v: want r-pub, and never cal's private r-priv", got)
		}
		cal := journal.ReaderGroups("cal")
		if got := ids(search(t, memsync.SearchQuery{Text: "zanzibar festival", Groups: cal, Limit: 100})); !slices.Contains(got, "r-priv") {
			t.Errorf("cal's own search = %v: want its private neighbour r-priv", got)
		}
	})
	t.Run("SessionNeighbourJoins", func(t *testing.T) {
		// The answer shares no word with the question; it is the turn
		// after the memory that does.
		got := ids(search(t, memsync.SearchQuery{Text: "What did Melanie paint for the exhibition?", Groups: RecallGroups, Limit: 5}))
		if !slices.Contains(got, "r-a") {
			t.Errorf("the next turn of the session did not join: %v", got)
		}
	})
}

func ids(hits []memsync.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.UUID
	}
	return out
}

func testRecall(t *testing.T, g memsync.Graph) {
	apply(t, g, RecallCorpus()...)
	RunRecall(t, func(t *testing.T, q memsync.SearchQuery) []memsync.Hit {
		t.Helper()
		hits, err := read.Search(ctx(t), g, q)
		if err != nil {
			t.Fatalf("Search(%q): %v", q.Text, err)
		}
		return hits
	})
}
