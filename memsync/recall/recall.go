// Package recall is memsync's one ranking rule for search: how a query is
// understood and how a lexical index's hits, and the memories next to the
// strongest of them, are fused into one order. The embedded store, Neo4j
// and the offline path each find candidates their own way (the
// primitives of memsync.Retriever) and the one recipe, read.Search,
// calls Hybrid, so every path ranks the same candidates the same way.
//
// # The rule
//
// A search takes the Pool best lexical hits (BM25 over the terms of package
// analysis), whatever its limit, so the first k results are the same for
// every limit up to Pool. The Sources strongest of them bring in their
// neighbours: the memories of the same agent and session nearest to them
// in time, up to Window on each side (a question's answer is often the
// turn after it, or the one before). A hit that names no session brings in
// its implicit episode's instead: the same agent's sessionless memories
// nearest to it, none across a pause longer than EpisodeGap (Episode), so
// that records of one conversation or work session find each other
// whether or not their host wrote a session. Then, for a memory m,
//
//	base(m)  = lexical(m) × cover(m) × (1 + TimeBoost if the query asks "when" and m's text names a time)
//	                                  × (1 + DateBoost if the query names a time m's ts falls in, ParseSpan)
//	score(m) = base(m) + Alpha × max over lexical hits h next to m of base(h) / distance(h, m)
//
// where cover(m) is the share of the query's terms m holds, each weighted
// by its rarity among the lexical hits, a term m holds only in its tags or
// entities counting MetaCover of its weight (see Cover). Memories are ordered
// by score (higher first), then newest first, then uuid, and then Order
// keeps SPEC §7's property: a memory holding every query term another
// holds and more always ranks above it (a session neighbour that holds
// none of them is ranked by its score alone). The score is a plain
// number per hit, so that later factors
// (importance, confidence) can multiply into it.
package recall

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memsync/memsync/memsync/analysis"
)

// The rule's constants, tuned on the LoCoMo development set (docs/benchmarks.md).
const (
	// Pool is how many lexical hits a search ranks, whatever its limit.
	Pool = 100
	// Sources is how many of the strongest lexical hits bring in their neighbours.
	Sources = 30
	// Window is how many neighbours each side of a source join.
	Window = 2
	// Alpha is how much of a neighbour's strength a memory inherits.
	Alpha = 0.6
	// TimeBoost lifts memories that name a time when the query asks "when".
	TimeBoost = 0.5
	// EpisodeGap is the longest pause between two consecutive records of
	// one agent that keeps them in one implicit episode: a source that
	// names no session gets as neighbours its agent's sessionless records
	// nearest in time, each at most EpisodeGap from the one before it on
	// its side (see Episode).
	EpisodeGap = 30 * time.Minute
)

// Episode is how many of side (the timestamps of a sessionless source's
// neighbours on one side, nearest first) belong to the source's implicit
// episode: the neighbours up to the first pause longer than EpisodeGap
// from the source at ts or from the neighbour before it.
func Episode(ts time.Time, side []time.Time) int {
	prev := ts
	for i, t := range side {
		d := t.Sub(prev)
		if d < 0 {
			d = -d
		}
		if d > EpisodeGap {
			return i
		}
		prev = t
	}
	return len(side)
}

// Query is a search query as recall understands it.
type Query struct {
	Terms []string // analysis.QueryTerms of the text
	Words []string // for each term, the first word of the text it comes from (as explain names it)
	When  bool     // the text asks about time ("when", "what year", "how long ago")
	Span  Span     // the time the text names (ParseSpan); zero: none
}

// ParseQuery analyzes text. A query whose words are all stopwords has no
// terms: it finds nothing, and is not an error.
func ParseQuery(text string) Query {
	// Every analysis first, then the date words: the text is read once.
	words := analysis.Words(text)
	q := Query{Terms: analysis.QueryTerms(text)}
	q.Words = make([]string, len(q.Terms))
	for _, w := range words {
		if whenWords[w] {
			q.When = true
		}
		for _, t := range analysis.Terms(w) {
			if i := slices.Index(q.Terms, t); i >= 0 && q.Words[i] == "" {
				q.Words[i] = w
			}
		}
	}
	q.Span = spanOf(words)
	return q
}

// word is how explain names the query's i-th term: the word it comes from.
func (q Query) word(i int) string {
	if i < len(q.Words) && q.Words[i] != "" {
		return q.Words[i]
	}
	return q.Terms[i]
}

// PoolSize is how many lexical hits a search with limit ranks.
func PoolSize(limit int) int { return max(Pool, limit) }

// whenWords make a question a question about time.
var whenWords = set(`when date dates year years month months day days week weeks long ago`)

// timeWords name a time in a memory's text; four-digit years count too.
var timeWords = set(`yesterday today tonight tomorrow ago last next week weeks weekend month months
	year years monday tuesday wednesday thursday friday saturday sunday january february march april
	may june july august september october november december recently lately since earlier summer
	winter spring autumn morning evening night birthday anniversary holiday holidays`)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Timed reports whether text names a time: a date word or a year.
func Timed(text string) bool {
	for _, w := range analysis.Words(text) {
		if timeWords[w] || len(w) == 4 && (strings.HasPrefix(w, "19") || strings.HasPrefix(w, "20")) && allDigits(w) {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Candidate is a memory a search may return: a lexical hit (Lexical > 0,
// the index's BM25, higher is better) or a neighbour of one (Lexical 0).
type Candidate struct {
	UUID    string
	TS      time.Time
	Lexical float64
	Timed   bool   // Timed(text)
	Match   uint64 // Fields.All(): the query terms it holds in any field the lexical score counts
	Fields  Fields // where it holds them (analysis.Holds of each field); zero Fields with Match set: all in its text
}

// Fields is where a memory holds the query's terms, one bit per term as
// in Match: its text, its tags, its declared entities — the three fields
// every lexical index scores (tags and entities at half weight).
type Fields struct {
	Text, Tags, Entities uint64
}

// All is the terms held in any field.
func (f Fields) All() uint64 { return f.Text | f.Tags | f.Entities }

// metaOnly is the terms held in tags or entities but not in the text.
func (f Fields) metaOnly() uint64 { return (f.Tags | f.Entities) &^ f.Text }

// MetaCover is how much a query term a memory holds only in its tags or
// entities counts in its cover, next to one its text holds: the half
// weight the lexical indexes give those fields. So a memory that says a
// term beats one only tagged with it, at equal importance.
const MetaCover = 0.5

// Describe names the query terms match holds and where, as explain
// prints them: "text: postgres; tag: billing".
func (f Fields) Describe(q Query) string {
	var parts []string
	for _, fl := range []struct {
		name string
		bits uint64
	}{{"text", f.Text}, {"tag", f.Tags &^ f.Text}, {"entity", f.Entities &^ (f.Text | f.Tags)}} {
		var terms []string
		for i := range q.Terms[:min(len(q.Terms), 64)] {
			if fl.bits&(1<<i) != 0 {
				terms = append(terms, q.word(i))
			}
		}
		if len(terms) > 0 {
			parts = append(parts, fl.name+": "+strings.Join(terms, " "))
		}
	}
	return strings.Join(parts, "; ")
}

// Link says that To is Dist (1..Window) memories away from the lexical hit From.
type Link struct {
	From, To string
	Dist     int
}

// Ranked is a candidate with its fused score. Match is the set of query
// terms it holds (none for a session neighbour that is no lexical hit).
// From is, for a memory that is no lexical hit, the lexical hit whose
// lift brought it in (the strongest; "" when none did).
type Ranked struct {
	Candidate
	Match  uint64
	Score  float64
	From   string
	Boosts Boosts // the factors its base was multiplied by
	Parts         // what each retrieval contributed (Fuse); zero from Rank alone
}

// Boosts are the factors of time a memory's base was multiplied by, as
// explain shows them: Time, 1 + TimeBoost (the query asks "when" and the
// text names a time); Date, 1 + DateBoost (its ts falls in the time the
// query names). Zero when not applied.
type Boosts struct {
	Time, Date float64
}

// Held is how many of the query's terms a Match holds.
func Held(match uint64) int { return bits.OnesCount64(match) }

// Dominates reports whether match a holds every query term b holds, and
// more. A memory that holds none of them (a session neighbour, found by
// its place beside a hit, not by its words) is ranked by its score alone:
// nothing dominates it.
func Dominates(a, b uint64) bool { return b != 0 && a&b == b && a != b }

// Order sorts items by less and then keeps SPEC §7's superset-of-terms
// property: no item ranks below one it dominates (Dominates of their
// matches). Each position takes the first item, in less's order, that no
// remaining item dominates; so the order is less's wherever the property
// holds already. Dominance is a strict partial order, so such an item
// always exists. It is O(n³) in the worst case: for the Pool-sized lists
// search ranks, well under a millisecond.
func Order[T any](items []T, less func(a, b T) bool, match func(T) uint64) {
	OrderFrom(items, less, match, nil)
}

// OrderFrom is Order that also keeps each item below the one that
// brought it in: from(it) is the index, in items as given, of the item it
// must rank below, or -1. Only an item that dominates nothing (a
// neighbour, Match 0) may be brought in, so the two rules never conflict.
func OrderFrom[T any](items []T, less func(a, b T) bool, match func(T) uint64, from func(T) int) {
	src := make([]int, len(items)) // the source's place in the sorted list
	if from != nil {
		idx := make([]int, len(items))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return less(items[idx[a]], items[idx[b]]) })
		at := make([]int, len(items))
		for pos, i := range idx {
			at[i] = pos
		}
		sorted := make([]T, len(items))
		for pos, i := range idx {
			sorted[pos] = items[i]
			src[pos] = -1
			if f := from(items[i]); f >= 0 && f < len(items) && f != i {
				src[pos] = at[f]
			}
		}
		copy(items, sorted)
	} else {
		sort.SliceStable(items, func(i, j int) bool { return less(items[i], items[j]) })
		for i := range src {
			src[i] = -1
		}
	}
	ms := make([]uint64, len(items))
	for i, it := range items {
		ms[i] = match(it)
	}
	// id[k] is the sorted place item k had before the moves below, so
	// src keeps naming the same item as items move.
	id := make([]int, len(items))
	placed := make([]bool, len(items))
	for i := range id {
		id[i] = i
	}
	for pos := range items {
		pick := pos
		for i := pos; i < len(items); i++ {
			free := src[id[i]] < 0 || placed[src[id[i]]]
			for j := pos; free && j < len(items); j++ {
				if j != i && Dominates(ms[j], ms[i]) {
					free = false
					break
				}
			}
			if free {
				pick = i
				break
			}
		}
		if pick != pos {
			// Move the pick up to pos, keeping the others in order.
			it, m, k := items[pick], ms[pick], id[pick]
			copy(items[pos+1:pick+1], items[pos:pick])
			copy(ms[pos+1:pick+1], ms[pos:pick])
			copy(id[pos+1:pick+1], id[pos:pick])
			items[pos], ms[pos], id[pos] = it, m, k
		}
		placed[id[pos]] = true
	}
}

// SourceHits returns the lexical hits whose neighbours join: the Sources
// best of hits, which must be in the order Rank would give them alone
// (lexical score descending, newest, uuid).
func SourceHits[T any](hits []T) []T { return hits[:min(len(hits), Sources)] }

// Rank fuses cands (lexical hits and neighbours, each uuid once) and the
// links between them into the final order. Links from a uuid that is not a
// lexical hit among cands, or to one that is not among cands, are ignored.
func Rank(q Query, cands []Candidate, links []Link) []Ranked {
	base := make(map[string]float64, len(cands))
	boosts := map[string]Boosts{}
	lexical := make(map[string]bool, len(cands))
	cover := Cover(q, cands)
	for _, c := range cands {
		b := c.Lexical
		var bo Boosts
		if q.When && c.Timed {
			bo.Time = 1 + TimeBoost
			b *= bo.Time
		}
		if c.Lexical > 0 && q.Span.Holds(c.TS, DateSlack) {
			bo.Date = 1 + DateBoost
			b *= bo.Date
		}
		if bo != (Boosts{}) {
			boosts[c.UUID] = bo
		}
		if c.Match != 0 {
			b *= cover[c.UUID]
		}
		// A hit whose Match is 0 (the index matched a form the analyzer
		// does not give) keeps its lexical score and dominates nothing.
		base[c.UUID] = b
		lexical[c.UUID] = c.Lexical > 0
	}
	lift := map[string]float64{}
	from := map[string]string{}
	for _, l := range links {
		b, ok := base[l.From]
		if !ok || !lexical[l.From] || b <= 0 || l.Dist < 1 {
			continue
		}
		if _, ok := base[l.To]; !ok {
			continue
		}
		v := b / float64(l.Dist)
		if v > lift[l.To] || v == lift[l.To] && l.From < from[l.To] {
			lift[l.To], from[l.To] = v, l.From
		}
	}
	out := make([]Ranked, 0, len(cands))
	for _, c := range cands {
		s := base[c.UUID] + Alpha*lift[c.UUID]
		if s <= 0 {
			continue
		}
		r := Ranked{Candidate: c, Match: c.Match, Score: s, Boosts: boosts[c.UUID]}
		if c.Lexical <= 0 {
			r.From = from[c.UUID]
		}
		out = append(out, r)
	}
	Order(out, func(a, b Ranked) bool { return Less(a.Score, a.TS, a.UUID, b.Score, b.TS, b.UUID) },
		func(r Ranked) uint64 { return r.Match })
	return out
}

// Less is the order of hits: higher score, then newer, then smaller uuid.
func Less(sa float64, ta time.Time, ua string, sb float64, tb time.Time, ub string) bool {
	if sa != sb {
		return sa > sb
	}
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return ua < ub
}

// Links links the lexical hit from to its neighbours: before and after
// each nearest first, as many as Window on each side.
func Links(from string, before, after []string) []Link {
	var out []Link
	for _, side := range [][]string{before, after} {
		for k, to := range side[:min(len(side), Window)] {
			out = append(out, Link{From: from, To: to, Dist: k + 1})
		}
	}
	return out
}

// Cover is, for each lexical hit of cands whose Match is known, the share
// of the query it covers: the weights of the query terms it holds over the
// weights of all of them, a term it holds only in its tags or entities
// counting MetaCover of its weight. A term's weight is its rarity among the lexical
// hits, ln(1 + (H+1)/(h+1)) for H hits of which h hold it, so a hit that
// holds the query's rare words (a name, an object) beats one that repeats
// its common ones (a speaker's name on half of the turns). It depends on
// the hits alone, which are the same for every limit up to Pool.
func Cover(q Query, cands []Candidate) map[string]float64 {
	n := min(len(q.Terms), 64)
	df := make([]int, n)
	hits := 0
	for _, c := range cands {
		if c.Lexical <= 0 || c.Match == 0 {
			continue
		}
		hits++
		for i := range n {
			if c.Match&(1<<i) != 0 {
				df[i]++
			}
		}
	}
	w := make([]float64, n)
	total := 0.0
	for i := range w {
		w[i] = math.Log(1 + float64(hits+1)/float64(df[i]+1))
		total += w[i]
	}
	out := make(map[string]float64, hits)
	for _, c := range cands {
		if c.Lexical <= 0 || c.Match == 0 || total == 0 {
			continue
		}
		s := 0.0
		meta := c.Fields.metaOnly()
		for i := range n {
			switch bit := uint64(1) << i; {
			case c.Match&bit == 0:
			case meta&bit != 0:
				s += MetaCover * w[i]
			default:
				s += w[i]
			}
		}
		out[c.UUID] = s / total
	}
	return out
}
