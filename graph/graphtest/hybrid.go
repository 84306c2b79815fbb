package graphtest

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
	"github.com/memsync/memsync/memsync/recall"
)

// HybridEmbedder is the embedder the hybrid cases run with: the test
// embedder of package memsynctest, never a default.
func HybridEmbedder() memsync.Embedder { return memsynctest.NewEmbedder(256) }

// HybridReader is the agent the hybrid cases search as; HybridIntruder
// writes private memories it must never see nor be ranked by.
const (
	HybridReader   = "reader"
	HybridIntruder = "intruder"
)

// HybridGroups are the groups HybridReader sees.
var HybridGroups = journal.ReaderGroups(HybridReader)

// hybridWords are the corpus's vocabulary.
var hybridWords = []string{"postgres", "database", "replica", "deploy", "release", "rollback", "kafka", "queue",
	"latency", "budget", "garden", "tomato", "music", "guitar", "travel", "lisbon", "incident", "pager", "cache", "redis"}

// HybridCorpus is a seeded set of shared memories and HybridReader's
// private ones; with intruder, HybridIntruder's private memories too,
// written to sit closer to the hybrid queries in vector space than any
// other memory. Every memory of the corpus holds six distinct words of
// one vocabulary, and the intruder's none of them (the query words with
// a letter added, which no stemmer takes off): every path's lexical
// index then orders the corpus the same (by the query terms each holds,
// then newest, then uuid), whatever its BM25's statistics, and the hybrid
// top 10 is the same on every path.
func HybridCorpus(intruder bool) []memsync.Memory {
	base := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var out []memsync.Memory
	add := func(uuid, agent string, scope journal.Scope, minute int, text string) {
		// Further apart than recall.EpisodeGap, so that no memory is an
		// episode neighbour of another (whose lift would weigh each
		// path's BM25 statistics).
		r := journal.Record{UUID: uuid, TS: base.Add(time.Duration(minute) * 31 * time.Minute), Agent: agent,
			Kind: journal.KindObservation, Scope: scope, Text: text}
		out = append(out, memsync.Memory{Record: r, Path: "agents/" + agent + "/memory/journal/2026-11-20.jsonl", Line: len(out) + 1})
	}
	rng := rand.New(rand.NewSource(27))
	for i := 0; i < 160; i++ {
		var words []string
		for _, k := range rng.Perm(len(hybridWords))[:6] {
			words = append(words, hybridWords[k])
		}
		agent, scope := "ann", journal.ScopeShared
		if i%4 == 0 {
			agent, scope = HybridReader, journal.ScopePrivate
		}
		add(fmt.Sprintf("h-%03d", i), agent, scope, i, strings.Join(words, " "))
	}
	// Found by their vectors (the test embedder's shared trigrams), not by
	// a shared term: "photography" and "photographer" stem apart.
	add("h-photo", "ann", journal.ScopeShared, 300, "photographer booked")
	add("h-arch", HybridReader, journal.ScopePrivate, 301, "archaeologist visited")
	if intruder {
		for i, text := range HybridQueries {
			var near []string
			for _, w := range strings.Fields(text) {
				near = append(near, w+"x")
			}
			for k := 0; k < 3; k++ {
				add(fmt.Sprintf("x-%d-%d", i, k), HybridIntruder, journal.ScopePrivate, 400+i*3+k, strings.Join(near, " "))
			}
		}
	}
	return out
}

// HybridQueries are the queries of the hybrid cases.
var HybridQueries = []string{"postgres", "tomato garden", "incident", "redis latency", "rollback release", "photography", "archaeology"}

// RunHybrid checks a hybrid search (with HybridEmbedder) over
// HybridCorpus(true): its top 10 for each query is HybridTop10 — the same
// on both backends and offline, ties by uuid —, no hit is another agent's
// private memory, and every hit's vector rank is its rank among the
// vectors HybridReader may see alone: another agent's private vectors
// neither appear nor move anything.
func RunHybrid(t *testing.T, search Searcher) {
	emb := HybridEmbedder()
	for i, text := range HybridQueries {
		hits := search(t, memsync.SearchQuery{Text: text, Groups: HybridGroups, Limit: 10})
		got := ids(hits)
		want := visibleVectorOrder(emb, text)
		for _, h := range hits {
			if h.Agent == HybridIntruder {
				t.Errorf("%q: returned %s, another agent's private memory", text, h.UUID)
			}
			if r := h.Parts.VecRank; r > 0 && (r > len(want) || want[r-1] != h.UUID) {
				t.Errorf("%q: %s has vector rank %d; among the reader's vectors that rank is %s", text, h.UUID, r, want[min(r, len(want))-1])
			}
		}
		if !slices.Equal(got, HybridTop10[i]) {
			t.Errorf("%q: top 10 %q, want %q", text, got, HybridTop10[i])
		}
	}
	// Found by vectors alone, with no query term in common.
	for _, c := range []struct{ query, want string }{{"photography", "h-photo"}, {"archaeology", "h-arch"}} {
		hits := search(t, memsync.SearchQuery{Text: c.query, Groups: HybridGroups, Limit: 10})
		if len(hits) == 0 || hits[0].UUID != c.want || hits[0].Parts.LexRank != 0 {
			t.Errorf("%q: %v, want %s first, found by its vector", c.query, ids(hits), c.want)
		}
	}
}

// HybridTop10 is, for each of HybridQueries, the hybrid top 10 over
// HybridCorpus(true), as the embedded store ranked it (regenerate with
// MEMSYNC_HYBRID_GOLDEN=1 go test -run TestHybridConformance -v ./graph/embedded/
// when the rule or the test embedder changes).
var HybridTop10 = [][]string{
	{"h-158", "h-124", "h-102", "h-114", "h-140", "h-113", "h-107", "h-150", "h-132", "h-106"},
	{"h-120", "h-126", "h-106", "h-097", "h-131", "h-046", "h-048", "h-055", "h-054", "h-017"},
	{"h-155", "h-124", "h-156", "h-142", "h-103", "h-081", "h-120", "h-147", "h-086", "h-127"},
	{"h-145", "h-095", "h-148", "h-090", "h-083", "h-092", "h-091", "h-082", "h-062", "h-087"},
	{"h-138", "h-074", "h-137", "h-119", "h-040", "h-110", "h-029", "h-077", "h-111", "h-112"},
	{"h-photo", "h-124", "h-032", "h-059", "h-103", "h-096", "h-016", "h-005", "h-075", "h-104"},
	{"h-arch", "h-158", "h-090", "h-124", "h-027", "h-096", "h-036", "h-062", "h-006", "h-114"},
}

// visibleVectorOrder is the order of HybridReader's visible memories by
// their vectors' similarity to text's, as recall orders vector candidates.
func visibleVectorOrder(emb memsync.Embedder, text string) []string {
	qv := emb.Embed(text)
	var sims []recall.Similar
	for _, m := range HybridCorpus(true) {
		if !slices.Contains(HybridGroups, m.Record.GroupID()) {
			continue
		}
		v := emb.Embed(m.Text)
		var dot float32
		for i := range qv {
			dot += qv[i] * v[i]
		}
		sims = append(sims, recall.Similar{UUID: m.UUID, TS: m.TS, Cosine: recall.RoundCosine(float64(dot))})
	}
	recall.OrderSimilar(sims)
	out := make([]string, len(sims))
	for i, s := range sims {
		out[i] = s.UUID
	}
	return out
}
