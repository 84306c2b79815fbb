// Package offline answers recall straight from the journals, for when the
// graph cannot be reached: reads never hard-fail.
//
// A search streams every valid record of every agent once, in the order the
// engine projects them, and keeps only what the query needs: for records in
// the reader's groups, the length and the per-word counts that BM25 needs,
// and for the records that contain a query word a compact candidate. Texts
// of records that match nothing are never held, so memory stays small at
// hundreds of thousands of records. Nothing is written and no index is kept
// on disk: the journals are the truth, and this path is the fallback.
//
// Ranking is Okapi BM25 (k1 = 1.2, b = 0.75) over tokens — runs of Unicode
// letters, digits and combining marks, lowercased — computed over the
// records the reader may see, so the scores leak nothing of other groups.
// A record's entities and tags count at half the weight of its text, as in
// the embedded store. Ties rank newest first, then by uuid.
package offline

import (
	"container/heap"
	"context"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// BM25 parameters.
const (
	K1 = 1.2
	B  = 0.75
)

// DefaultLimit is the number of hits Search returns when the query sets none.
const DefaultLimit = 10

// MaxQueryTokens bounds the distinct words of one query that are scored.
const MaxQueryTokens = 64

// metaWeight is how much an entity or tag token counts next to a text token.
const metaWeight = 0.5

// Tokens splits text into lowercased runs of letters, digits and combining
// marks: the words that search compares. Anything else separates words, so
// no character of a query is ever syntax.
func Tokens(text string) []string {
	words := strings.FieldsFunc(text, notWordRune)
	for i, w := range words {
		words[i] = strings.ToLower(w)
	}
	return words
}

func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Mn, r)
}

// queryTerms are the distinct tokens of text, in first-seen order, at most
// MaxQueryTokens of them.
func queryTerms(text string) []string {
	var out []string
	for _, w := range Tokens(text) {
		if !slices.Contains(out, w) {
			out = append(out, w)
			if len(out) == MaxQueryTokens {
				break
			}
		}
	}
	return out
}

// candidate is a record that contains at least one query word and passes
// the query's filters.
type candidate struct {
	mem memsync.Memory
	tf  []float64 // weighted count of each query term
	dl  float64   // weighted document length
}

// superseder is the earliest record retiring a uuid (smallest uuid on a tie).
type superseder struct {
	ts   time.Time
	uuid string
}

// scan is the state of one pass over the journals.
type scan struct {
	q       memsync.SearchQuery
	terms   []string
	termIdx map[string]int
	groups  map[string]bool
	kinds   map[journal.Kind]bool

	seed  maphash.Seed
	seen  map[uint64]struct{} // uuids already read: the first version wins
	n     int                 // visible records
	total float64             // sum of their weighted lengths
	df    []int               // visible records containing each term

	cands   []candidate
	retired map[string]superseder // visible records' supersedes targets
}

// Search ranks the records in q.Groups against the words of q.Text, reading
// every agent's journals under layout. It honours q.Kinds, q.Since and
// q.Limit; a record retired by another record the reader may see (through
// its supersedes list) is left out unless q.All, and otherwise carries
// InvalidAt and ReplacedBy as the graph would. No groups, or no words, give
// no hits. Hits carry the file and line each record was read from.
func Search(ctx context.Context, layout memsync.Layout, q memsync.SearchQuery) ([]memsync.Hit, error) {
	terms := queryTerms(q.Text)
	if len(q.Groups) == 0 || len(terms) == 0 {
		return nil, nil
	}
	s := &scan{
		q: q, terms: terms, termIdx: make(map[string]int, len(terms)),
		groups: make(map[string]bool, len(q.Groups)),
		seed:   maphash.MakeSeed(), seen: map[uint64]struct{}{},
		df: make([]int, len(terms)), retired: map[string]superseder{},
	}
	for i, t := range terms {
		s.termIdx[t] = i
	}
	for _, g := range q.Groups {
		s.groups[g] = true
	}
	if len(q.Kinds) > 0 {
		s.kinds = make(map[journal.Kind]bool, len(q.Kinds))
		for _, k := range q.Kinds {
			s.kinds[k] = true
		}
	}
	agents, err := layout.Agents()
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		err := memsync.EachRecord(layout, a, func(m memsync.Memory) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			s.add(m)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s.rank(), nil
}

// add takes one record into the pass.
func (s *scan) add(m memsync.Memory) {
	if !s.groups[m.GroupID()] {
		return
	}
	// A uuid seen again is a replay (a no-op) or a reject (other content):
	// either way the first version is the memory, as in the engine.
	key := maphash.String(s.seed, m.UUID)
	if _, dup := s.seen[key]; dup {
		return
	}
	s.seen[key] = struct{}{}
	for _, id := range m.Supersedes {
		if cur, ok := s.retired[id]; !ok || m.TS.Before(cur.ts) || (m.TS.Equal(cur.ts) && m.UUID < cur.uuid) {
			s.retired[id] = superseder{ts: m.TS, uuid: m.UUID}
		}
	}
	s.n++
	var tf []float64
	dl := 0.0
	count := func(text string, weight float64) {
		for _, w := range Tokens(text) {
			dl += weight
			if i, ok := s.termIdx[w]; ok {
				if tf == nil {
					tf = make([]float64, len(s.terms))
				}
				tf[i] += weight
			}
		}
	}
	count(m.Text, 1)
	for _, e := range m.AllEntities() {
		count(e, metaWeight)
	}
	for _, t := range m.Tags {
		count(t, metaWeight)
	}
	s.total += dl
	if tf == nil {
		return
	}
	for i, f := range tf {
		if f > 0 {
			s.df[i]++
		}
	}
	if s.kinds != nil && !s.kinds[m.Kind] {
		return
	}
	if !s.q.Since.IsZero() && m.TS.Before(s.q.Since) {
		return
	}
	s.cands = append(s.cands, candidate{mem: m, tf: tf, dl: dl})
}

// rank scores the candidates with the pass's statistics and returns the best.
func (s *scan) rank() []memsync.Hit {
	limit := s.q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if s.n == 0 {
		return nil
	}
	avgdl := s.total / float64(s.n)
	if avgdl <= 0 {
		avgdl = 1
	}
	idf := make([]float64, len(s.terms))
	for i, df := range s.df {
		idf[i] = math.Log(1 + (float64(s.n)-float64(df)+0.5)/(float64(df)+0.5))
	}
	top := &hitHeap{}
	for i := range s.cands {
		c := &s.cands[i]
		h := memsync.Hit{Node: memsync.Node{Memory: c.mem}}
		if r, ok := s.retired[c.mem.UUID]; ok {
			if !s.q.All {
				continue
			}
			h.InvalidAt, h.ReplacedBy = r.ts, r.uuid
		}
		norm := K1 * (1 - B + B*c.dl/avgdl)
		for t, f := range c.tf {
			if f > 0 {
				h.Score += idf[t] * f * (K1 + 1) / (f + norm)
			}
		}
		if top.Len() < limit {
			heap.Push(top, h)
		} else if better(h, (*top)[0]) {
			(*top)[0] = h
			heap.Fix(top, 0)
		}
	}
	hits := make([]memsync.Hit, top.Len())
	for i := len(hits) - 1; i >= 0; i-- {
		hits[i] = heap.Pop(top).(memsync.Hit)
	}
	for i := range hits {
		complete(&hits[i].Node)
	}
	return hits
}

// complete fills in what the graph derives from a record.
func complete(n *memsync.Node) {
	n.Hash = n.Record.Hash()
	n.GroupID = n.Record.GroupID()
	n.Importance = 0.5
	n.LinksTo = sortedSet(n.Record.Links)
	n.Supersedes = sortedSet(n.Record.Supersedes)
	n.ConflictsWith = sortedSet(n.Record.ConflictsWith)
	n.Mentions = sortedSet(n.Record.AllEntities())
}

func sortedSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	sort.Strings(out)
	return slices.Compact(out)
}

// better reports whether a ranks before b: higher score, then newer, then
// smaller uuid.
func better(a, b memsync.Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if !a.TS.Equal(b.TS) {
		return a.TS.After(b.TS)
	}
	return a.UUID < b.UUID
}

// hitHeap keeps the best hits seen so far with the worst at the root.
type hitHeap []memsync.Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(memsync.Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
