package graphtest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/recall"
)

// EpisodeGroups are the groups the episode cases search as.
var EpisodeGroups = []string{journal.SharedGroup, journal.PrivateGroup("ann")}

// EpisodeCorpus is the corpus of the episode cases (RunEpisodes): records
// that name no session, as imported conversations and direct writers
// leave them, whose implicit episodes (package recall: the same agent's
// sessionless records, no pause longer than recall.EpisodeGap) must find
// each other on every path.
func EpisodeCorpus() []memsync.Memory {
	base := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var out []memsync.Memory
	add := func(uuid, agent, session string, at time.Duration, text string) {
		r := journal.Record{UUID: uuid, TS: base.Add(at), Agent: agent, Kind: journal.KindObservation,
			Scope: journal.ScopeShared, Text: text, Session: session}
		out = append(out, memsync.Memory{Record: r, Path: "agents/" + agent + "/memory/journal/" + journal.FileName(r.TS), Line: len(out) + 1})
	}
	// One conversation a minute a turn: the answer (ep-a) shares no word
	// with the question, it is the turn after the one that does.
	add("ep-0", "ann", "", 0, "morning standup notes")
	add("ep-q", "ann", "", time.Minute, "Melanie: what did you paint for the harbour exhibition?")
	add("ep-a", "ann", "", 2*time.Minute, "Caroline: a sunrise over a lake, in oils")
	add("ep-2", "ann", "", 3*time.Minute, "Melanie: lovely")
	// Another agent's record between them: never in ann's episode.
	add("ep-cal", "cal", "", 90*time.Second, "cal unrelated note")
	// A record of ann's that names a session: not in a sessionless episode.
	add("ep-ses", "ann", "s-1", 150*time.Second, "session turn about the weather")
	// After a pause longer than EpisodeGap: another episode.
	add("ep-far", "ann", "", 3*time.Minute+recall.EpisodeGap+time.Minute, "lunch order placed")
	// A second conversation with its own hits, a day later.
	for i := range 6 {
		text := fmt.Sprintf("harbour exhibition planning item %d", i)
		if i%2 == 1 {
			text = fmt.Sprintf("reply number %d", i)
		}
		add(fmt.Sprintf("ep-d%d", i), "ann", "", 24*time.Hour+time.Duration(i)*time.Minute, text)
	}
	return out
}

// EpisodeCases are the episode cases' queries, what each must return
// (Want) and never return (Not).
var EpisodeCases = []struct {
	Name  string
	Query string
	Want  []string
	Not   []string
}{
	{"NextTurnJoins", "What did Melanie paint for the exhibition?", []string{"ep-a", "ep-0"}, []string{"ep-cal", "ep-ses", "ep-far"}},
	{"PauseEndsEpisode", "Melanie lovely", []string{"ep-2", "ep-a"}, []string{"ep-far", "ep-cal", "ep-ses"}},
	{"OtherConversation", "harbour planning", []string{"ep-d1", "ep-d3", "ep-d5"}, []string{"ep-cal", "ep-ses"}},
}

// EpisodeWant is the top 10 of each episode case (EpisodeTop10): the same
// on every backend and offline (ties by uuid).
var EpisodeWant = []string{
	"NextTurnJoins: ep-q ep-a ep-0 ep-2 ep-d4 ep-d2 ep-d0 ep-d5 ep-d3 ep-d1",
	"PauseEndsEpisode: ep-2 ep-a ep-q ep-0",
	"OtherConversation: ep-d4 ep-d2 ep-d0 ep-d5 ep-d3 ep-d1 ep-q ep-a ep-0 ep-2",
}

// EpisodeTop10 is the first ten uuids Search gives for each episode case,
// one line each.
func EpisodeTop10(t *testing.T, search Searcher) []string {
	var out []string
	for _, c := range EpisodeCases {
		line := c.Name + ":"
		for _, h := range search(t, memsync.SearchQuery{Text: c.Query, Groups: EpisodeGroups, Limit: 10}) {
			line += " " + h.UUID
		}
		out = append(out, line)
	}
	return out
}

// RunEpisodes runs the episode cases against search (over EpisodeCorpus).
func RunEpisodes(t *testing.T, search Searcher) {
	for _, c := range EpisodeCases {
		t.Run(c.Name, func(t *testing.T) {
			got := ids(search(t, memsync.SearchQuery{Text: c.Query, Groups: EpisodeGroups}))
			for _, id := range c.Want {
				if !slices.Contains(got, id) {
					t.Errorf("%q = %v: want %s among them", c.Query, got, id)
				}
			}
			for _, id := range c.Not {
				if slices.Contains(got, id) {
					t.Errorf("%q = %v: %s is no neighbour of any hit", c.Query, got, id)
				}
			}
		})
	}
	t.Run("SameTop10", func(t *testing.T) {
		if got := EpisodeTop10(t, search); !slices.Equal(got, EpisodeWant) {
			t.Errorf("top 10 = %q, want %q", got, EpisodeWant)
		}
	})
}

func testEpisodes(t *testing.T, g memsync.Graph) {
	apply(t, g, EpisodeCorpus()...)
	RunEpisodes(t, func(t *testing.T, q memsync.SearchQuery) []memsync.Hit {
		t.Helper()
		hits, err := read.Search(ctx(t), g, q)
		if err != nil {
			t.Fatalf("Search(%q): %v", q.Text, err)
		}
		return hits
	})
}
