package graphtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/analysis"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/recall"
)

// rankTerms are the words the ranking cases query; each is its own stem.
var rankTerms = []string{"zephyr", "quokka", "marimba", "tundra"}

// RankQueries are the queries of the ranking cases.
var RankQueries = []string{
	"zephyr quokka marimba tundra",
	"zephyr quokka",
	"marimba tundra zephyr",
	"quokka",
}

// RankClock is the clock the ranking cases read at: 400 days after the
// corpus begins, when most of it has decayed.
var RankClock = Base.Add(400 * 24 * time.Hour)

// RankCorpus is a seeded year of shared memories that hold random subsets
// of rankTerms among filler words of random length, with signals that pull
// their importance, confidence and status every way (references, flags
// important, unimportant, verified and wrong, contradictions,
// supersessions), and no sessions: lexical relevance alone, so that SPEC
// §7's superset-of-terms property must hold over the whole order.
func RankCorpus(seed int64) []memsync.Memory {
	rng := rand.New(rand.NewSource(seed))
	var out []memsync.Memory
	lines := map[string]int{}
	add := func(r journal.Record) {
		path := fmt.Sprintf("agents/%s/memory/journal/%s", r.Agent, journal.FileName(r.TS))
		lines[path]++
		out = append(out, memsync.Memory{Record: r, Path: path, Line: lines[path]})
	}
	agents := []string{"ann", "ben", "cy"}
	kinds := []journal.Kind{journal.KindFact, journal.KindObservation, journal.KindDecision, journal.KindPreference, journal.KindProcedure, journal.KindTask}
	var ids []string
	for i := 0; i < 90; i++ {
		ts := Base.Add(time.Duration(rng.Intn(380*24)) * time.Hour).Add(time.Duration(i) * time.Second)
		agent := agents[rng.Intn(len(agents))]
		var text []string
		for rng.Intn(3) != 0 || len(text) == 0 {
			for _, t := range rankTerms {
				if rng.Intn(2) == 0 && !slices.Contains(text, t) {
					text = append(text, t)
				}
			}
		}
		for n := rng.Intn(40); n > 0; n-- {
			text = append(text, words[rng.Intn(len(words))])
		}
		rng.Shuffle(len(text), func(a, b int) { text[a], text[b] = text[b], text[a] })
		r := journal.Record{
			UUID: fmt.Sprintf("rk_%s_%s_%03d", journal.UUIDTime(ts), agent, i), TS: ts, Agent: agent,
			Kind: kinds[rng.Intn(len(kinds))], Scope: journal.ScopeShared, Text: strings.Join(text, " "),
		}
		switch rng.Intn(6) {
		case 0:
			r.Confidence = "low"
		case 1:
			r.Confidence = "high"
		case 2:
			r.Source = &journal.Source{Type: []string{"experienced", "inferred", "read"}[rng.Intn(3)]}
		}
		if rng.Intn(8) == 0 {
			r.Tier = "core"
		}
		add(r)
		ids = append(ids, r.UUID)
	}
	// Signals: records that hold none of the query's terms.
	for i := 0; i < 120; i++ {
		target := ids[rng.Intn(len(ids))]
		ts := Base.Add(time.Duration(rng.Intn(395*24)) * time.Hour).Add(time.Duration(i) * time.Millisecond)
		agent := agents[rng.Intn(len(agents))]
		r := journal.Record{
			UUID: fmt.Sprintf("rs_%s_%s_%03d", journal.UUIDTime(ts), agent, i), TS: ts, Agent: agent,
			Kind: journal.KindFact, Scope: journal.ScopeShared, Text: "signal " + words[rng.Intn(len(words))],
		}
		switch rng.Intn(5) {
		case 0:
			r.Kind = journal.KindFeedback
			r.Links = []string{target}
			b, _ := json.Marshal(journal.Feedbacks[rng.Intn(len(journal.Feedbacks))])
			r.Extra = map[string]json.RawMessage{journal.FieldFeedback: b}
		case 1:
			r.ConflictsWith = []string{target}
		case 2:
			if rng.Intn(3) == 0 {
				r.Supersedes = []string{target}
			} else {
				r.Links = []string{target}
			}
		default:
			r.Links = []string{target}
		}
		add(r)
	}
	return out
}

// RunRanking checks SPEC §7's ranking on s (a graph or the offline path,
// holding RankCorpus(seed)) through read.Rank, the path every door
// takes: of two hits, one holding every query term the other holds and
// more ranks first; the printed factors multiply into the score; every
// matching memory that is not retired is found, archived ones included;
// retired ones (superseded, flagged wrong) only with All.
func RunRanking(t *testing.T, s memsync.Searcher, seed int64) {
	corpus := map[string]journal.Record{}
	for _, m := range RankCorpus(seed) {
		corpus[m.UUID] = m.Record
	}
	for _, text := range RankQueries {
		q := recall.ParseQuery(text)
		for _, all := range []bool{false, true} {
			rq := memsync.RankQuery{SearchQuery: memsync.SearchQuery{Text: text, Groups: []string{journal.SharedGroup}, Limit: 100, All: all},
				Clock: memsync.AsOf(RankClock)}
			hits, err := read.Rank(context.Background(), s, rq)
			if err != nil {
				t.Fatalf("Rank(%q): %v", text, err)
			}
			held := func(h memsync.Ranked) uint64 { return analysis.Holds(q.Terms, h.Text) }
			archived, seen := 0, map[string]bool{}
			for i, h := range hits {
				seen[h.UUID] = true
				f := h.Factors
				if want := f.Relevance * f.Importance * f.Freshness * f.Confidence * f.Status * f.Order; math.Abs(h.Score-want) > 1e-12*want || h.Score != f.Score || h.Match != held(h) {
					t.Fatalf("%q: %s scores %v, its factors %+v give %v (stands for %04b, holds %04b)", text, h.UUID, h.Score, f, want, h.Match, held(h))
				}
				if i > 0 && hits[i-1].Score < h.Score {
					t.Fatalf("%q: %s (score %v) ranks below %s (score %v): the order is not the scores'", text, h.UUID, h.Score, hits[i-1].UUID, hits[i-1].Score)
				}
				if h.Result.Status == "archived" {
					archived++
				}
				if !all && h.Result.Retired() {
					t.Fatalf("%q: retired %s (%s, wrong %v) found without --all", text, h.UUID, h.Result.Status, h.Result.FlaggedWrong)
				}
				for _, later := range hits[i+1:] {
					a, b := held(h), held(later)
					// A neighbour (of a session or an episode) holding
					// none of the terms is ranked by its score alone.
					if b&a == a && b != a && !(a == 0 && h.From != "") {
						t.Fatalf("%q: %s (holds %04b, importance %.2f, %s) ranks above %s (holds %04b, a superset, importance %.2f, %s)",
							text, h.UUID, a, h.Result.Importance, h.Result.Status, later.UUID, b, later.Result.Importance, later.Result.Status)
					}
				}
			}
			if archived == 0 {
				t.Fatalf("%q: no archived memory among %d hits: the case tests nothing", text, len(hits))
			}
			// Findability: every memory that holds a term is found unless
			// retired (then only with All).
			retired := map[string]bool{}
			for _, h := range hits {
				if h.Result.Retired() {
					retired[h.UUID] = true
				}
			}
			for id, r := range corpus {
				if !strings.HasPrefix(id, "rk_") || analysis.Holds(q.Terms, r.Text) == 0 || seen[id] {
					continue
				}
				if all {
					t.Fatalf("%q --all: %s (%q) not found", text, id, r.Text)
				}
				all2 := rq
				all2.All = true
				found := false
				hs, _ := read.Rank(context.Background(), s, all2)
				for _, h := range hs {
					if h.UUID == id {
						found = true
						if !h.Result.Retired() {
							t.Fatalf("%q: %s (%s, importance %.2f) not found though not retired", text, id, h.Result.Status, h.Result.Importance)
						}
					}
				}
				if !found {
					t.Fatalf("%q: %s not found, even with --all", text, id)
				}
			}
		}
	}
}

func testRankProperties(t *testing.T, g memsync.Graph) {
	apply(t, g, RankCorpus(7)...)
	if f, ok := g.(memsync.Flusher); ok {
		if err := f.Flush(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	RunRanking(t, g, 7)
}
