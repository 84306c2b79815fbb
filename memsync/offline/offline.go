// Package offline answers recall straight from the journals, for when the
// graph cannot be reached: reads never hard-fail.
//
// # Ranking
//
// Okapi BM25 (k1 = 1.2, b = 0.75, Lucene's idf) over the terms of package
// analysis — the same terms as the graph's indexes, never query syntax. A
// record's text counts in full; its declared entities and tags at half
// weight (the mentions inside its text already count as text). The
// collection statistics (record count, mean length, document frequencies)
// are those of the records the reader may see, so scores reveal nothing
// about other groups. The best recall.PoolSize records and the neighbours
// of the strongest are then ranked by the one search recipe
// (read.Search: Journals is its memsync.Retriever, one journal read per
// search through OpenSearch), as the graph ranks them; ties rank newest
// first, then by uuid.
//
// # Vectors
//
// With an embedder (SearchWith, Journals.Embedder) the search is hybrid as
// the graph's is: every visible record that passes the filters is embedded
// and compared with the query (cosine, accumulated as the embedded store
// does), the best are checked against their lines like lexical candidates,
// and recall.Hybrid fuses both lists. Nothing is cached: each search
// embeds every visible record once, which costs one model lookup per word.
//
// # Cost
//
// A search reads every journal of every agent once and keeps no index: the
// journals are the truth and this is the fallback path. Lines are read with
// a light JSON scanner, not journal.Parse, and only what BM25 needs is kept:
// a running record count and length, and for each record that contains a
// query word a small candidate (uuid, ts, term counts, file position). No
// text is held. Candidates are then taken best first and each is re-read
// and checked with journal.Parse — validity, authorship (journal.CheckOwner),
// the version of its uuid that journal.ClashWins prefers, supersession by a
// record the reader may see — until the pool is filled. Lines that
// journal.Parse would reject can therefore only nudge the statistics, never
// appear as hits. The neighbours of the strongest hits are found by reading
// their agents' journals once more.
package offline

import (
	"container/heap"
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/recall"
)

// BM25 parameters.
const (
	K1 = 1.2
	B  = 0.75
)

// DefaultLimit is the number of hits Search returns when the query sets none.
const DefaultLimit = memsync.DefaultSearchLimit

// MaxQueryTokens bounds the distinct words of one query that are scored.
const MaxQueryTokens = 64

// metaWeight is how much an entity or tag token counts next to a text token.
const metaWeight = 0.5

// linePos says where a line is: which journal file, its number and bytes.
// seq orders lines the way the engine reads them.
type linePos struct {
	seq  int
	file int32
	line int32
	off  int64
	size int32
}

// journalFile is one file the search read.
type journalFile struct {
	path  string // absolute
	rel   string // as Memory.Path gives it
	agent string // the agent that owns it
	// firstSeq is the seq of the line read before the file's first line.
	firstSeq int
}

// candidate is a line that contains a query word and passes the filters.
type candidate struct {
	pos   linePos
	uuid  string // "" when the line has none (journal.Parse derives it)
	ts    time.Time
	tf    []float64
	dl    float64
	score float64
}

// retirement is a line that says it supersedes some uuid.
type retirement struct {
	pos  linePos
	uuid string
}

// search is the state of one query over the journals.
type search struct {
	q       memsync.SearchQuery
	terms   *termCounter
	nterms  int
	groups  map[string]bool
	kinds   map[journal.Kind]bool
	private string // the group of the agent whose journal is being read

	files []journalFile
	seq   int

	n     int     // visible records
	total float64 // their summed lengths
	df    []int   // visible records containing each term

	seed  maphash.Seed
	first map[uint64]linePos   // where each uuid was first written
	dups  map[uint64][]linePos // every line of uuids written more than once

	cands   []candidate
	retired map[string][]retirement // by the uuid retired

	rec lightRecord // reused for every line

	emb     memsync.Embedder // nil: lexical only
	qv      []float32        // the query's vector; nil: lexical only
	vectors []vectorCand     // every visible record the query's filters let through, with its cosine
}

// vectorCand is a record the vector half of a search compares.
type vectorCand struct {
	pos    linePos
	uuid   string
	ts     time.Time
	cosine float64
}

// Search ranks the records in q.Groups against the words of q.Text, reading
// every agent's journals (archive first, each in date order) under layout.
// It honours q.Kinds, q.Since and q.Limit; a record retired by a record the
// reader may see (through its supersedes list) is left out unless q.All, and
// otherwise carries InvalidAt and ReplacedBy as the graph would give them.
// Only valid records count, each uuid as the graph projects it. No groups, or no
// words, give no hits. Hits carry the file and line each record came from.
func Search(ctx context.Context, layout memsync.Layout, q memsync.SearchQuery) ([]memsync.Hit, error) {
	return SearchWith(ctx, layout, q, nil)
}

// SearchWith is Search, hybrid with vector recall when emb is set (see
// the package documentation, Vectors): the one recipe (read.Search)
// over the journals (Journals.OpenSearch).
func SearchWith(ctx context.Context, layout memsync.Layout, q memsync.SearchQuery, emb memsync.Embedder) ([]memsync.Hit, error) {
	return read.Search(ctx, Journals{Layout: layout, Embedder: emb}, q)
}

// OpenSearch reads every journal once for the search of q (memsync.SearchOpener):
// the statistics, the lexical candidates and, with an embedder, the
// vector ones; the search's primitives then answer from what it read.
func (j Journals) OpenSearch(ctx context.Context, q memsync.SearchQuery) (memsync.Retriever, error) {
	terms := recall.ParseQuery(q.Text).Terms
	return openSearch(ctx, j.Layout, memsync.Filter{Groups: q.Groups, Kinds: q.Kinds, Since: q.Since, All: q.All}, terms, q.Text, j.Embedder)
}

// Lexical is memsync.Retriever's, one journal read of its own.
func (j Journals) Lexical(ctx context.Context, terms []string, f memsync.Filter, pool int) ([]memsync.Found, error) {
	s, err := openSearch(ctx, j.Layout, f, terms, "", nil)
	if err != nil {
		return nil, err
	}
	return s.Lexical(ctx, terms, f, pool)
}

// Neighbours is memsync.Retriever's, one journal read of its own.
func (j Journals) Neighbours(ctx context.Context, sources []memsync.Node, f memsync.Filter) ([]memsync.Beside, error) {
	s, err := openSearch(ctx, j.Layout, f, nil, "", nil)
	if err != nil {
		return nil, err
	}
	return s.Neighbours(ctx, sources, f)
}

// Similar is memsync.Retriever's, one journal read of its own.
func (j Journals) Similar(ctx context.Context, text string, f memsync.Filter, pool int) ([]memsync.Found, error) {
	s, err := openSearch(ctx, j.Layout, f, nil, text, j.Embedder)
	if err != nil {
		return nil, err
	}
	return s.Similar(ctx, text, f, pool)
}

// openSearch reads every journal under layout once for a search of terms
// (and, with emb, of text's vector) under f.
func openSearch(ctx context.Context, layout memsync.Layout, f memsync.Filter, terms []string, text string, emb memsync.Embedder) (*search, error) {
	terms = terms[:min(len(terms), MaxQueryTokens)]
	q := memsync.SearchQuery{Text: text, Groups: f.Groups, Kinds: f.Kinds, Since: f.Since, All: f.All}
	s := &search{
		q: q, terms: newTermCounter(terms), nterms: len(terms),
		groups: make(map[string]bool, len(q.Groups)), df: make([]int, len(terms)),
		seed: maphash.MakeSeed(), first: map[uint64]linePos{}, dups: map[uint64][]linePos{},
		retired: map[string][]retirement{},
	}
	if s.qv = memsync.QueryVector(emb, text); s.qv != nil {
		s.emb = emb
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
		return nil, fmt.Errorf("offline search: %w", err)
	}
	for _, agent := range agents {
		paths, err := layout.JournalFiles(agent)
		if err != nil {
			return nil, fmt.Errorf("offline search: %s: %w", agent, err)
		}
		s.private = journal.PrivateGroup(agent)
		for _, path := range paths {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			s.files = append(s.files, journalFile{path: path, rel: layout.Rel(path), agent: agent, firstSeq: s.seq})
			file := int32(len(s.files) - 1)
			err := eachLine(path, func(line []byte, number int, off int64) error {
				s.seq++
				s.add(line, linePos{seq: s.seq, file: file, line: int32(number), off: off, size: int32(len(line))})
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("offline search: read %s: %w", layout.Rel(path), err)
			}
		}
	}
	return s, nil
}

// add takes one line into the statistics and, if it matches, the candidates.
func (s *search) add(line []byte, pos linePos) {
	r := &s.rec
	if !r.parse(line) {
		return
	}
	agent := s.files[pos.file].agent
	if string(r.agent) != agent || !journal.Kind(r.kind).Valid() {
		return
	}
	group := s.private
	switch string(r.scope) {
	case "", string(journal.ScopePrivate):
	case string(journal.ScopeShared):
		group = journal.SharedGroup
	default:
		return
	}
	if r.uuid != nil {
		key := maphash.Bytes(s.seed, r.uuid)
		if at, dup := s.first[key]; !dup {
			s.first[key] = pos
		} else {
			if len(s.dups[key]) == 0 {
				s.dups[key] = []linePos{at}
			}
			s.dups[key] = append(s.dups[key], pos)
		}
	}
	if !s.groups[group] {
		return
	}
	for _, id := range r.supersedes {
		s.retired[string(id)] = append(s.retired[string(id)], retirement{pos: pos, uuid: string(r.uuid)})
	}
	var (
		tf []float64
		dl float64
	)
	s.terms.count(r.text, 1, &dl, &tf)
	for _, e := range r.entities {
		s.terms.count(e, metaWeight, &dl, &tf)
	}
	for _, t := range r.tags {
		s.terms.count(t, metaWeight, &dl, &tf)
	}
	s.n++
	s.total += dl
	if s.qv != nil {
		s.addVector(r, pos)
	}
	if tf == nil {
		return
	}
	for i, f := range tf {
		if f > 0 {
			s.df[i]++
		}
	}
	if s.kinds != nil && !s.kinds[journal.Kind(r.kind)] {
		return
	}
	ts, err := time.Parse(time.RFC3339Nano, string(r.ts))
	if err != nil {
		return // journal.Parse would reject it
	}
	ts = ts.UTC()
	if !s.q.Since.IsZero() && ts.Before(s.q.Since) {
		return
	}
	s.cands = append(s.cands, candidate{pos: pos, uuid: string(r.uuid), ts: ts, tf: tf, dl: dl})
}

// Lexical scores the candidates and takes them best first, checking each
// against its journal line, until pool are found (memsync.Retriever; the
// terms and filter are the ones the search was opened with).
func (s *search) Lexical(ctx context.Context, _ []string, _ memsync.Filter, pool int) ([]memsync.Found, error) {
	if len(s.cands) == 0 {
		return nil, nil
	}
	avgdl := s.total / float64(s.n)
	if avgdl <= 0 {
		avgdl = 1
	}
	idf := make([]float64, s.nterms)
	for i, df := range s.df {
		idf[i] = math.Log(1 + (float64(s.n)-float64(df)+0.5)/(float64(df)+0.5))
	}
	for i := range s.cands {
		c := &s.cands[i]
		norm := K1 * (1 - B + B*c.dl/avgdl)
		for t, f := range c.tf { // in term order, so the sum is reproducible
			if f > 0 {
				c.score += idf[t] * f * (K1 + 1) / (f + norm)
			}
		}
		c.tf = nil
	}
	queue := candidates(s.cands)
	heap.Init(&queue)
	lines := &lineReader{files: s.files, open: map[int32]*os.File{}}
	defer lines.close()
	// The lexical pool, best first, each a valid record the reader may see.
	var out []memsync.Found
	emitted := map[string]bool{}
	for queue.Len() > 0 && len(out) < pool {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := heap.Pop(&queue).(candidate)
		h, ok := s.check(lines, c)
		if !ok || emitted[h.UUID] {
			continue
		}
		emitted[h.UUID] = true
		out = append(out, memsync.Found{Node: h.Node, Score: h.Score})
	}
	s.cands = nil // scored and taken: a second call finds nothing new
	return out, nil
}

// Neighbours is memsync.Retriever's: see neighbours.
func (s *search) Neighbours(ctx context.Context, sources []memsync.Node, _ memsync.Filter) ([]memsync.Beside, error) {
	lines := &lineReader{files: s.files, open: map[int32]*os.File{}}
	defer lines.close()
	return s.neighbours(ctx, lines, sources)
}

// Similar is memsync.Retriever's: the vector candidates of the text the
// search was opened with (none without an embedder).
func (s *search) Similar(ctx context.Context, _ string, _ memsync.Filter, pool int) ([]memsync.Found, error) {
	lines := &lineReader{files: s.files, open: map[int32]*os.File{}}
	defer lines.close()
	return s.similar(ctx, lines, pool)
}

// neighbours finds, for the sources, the records of the same agent and
// session nearest to them in time (package recall; the agent's records
// that name no session for a source that names none), by
// reading their agents' journals again: only the records the reader may
// see and the query wants, each uuid as first written.
func (s *search) neighbours(ctx context.Context, lines *lineReader, sources []memsync.Node) ([]memsync.Beside, error) {
	type key struct{ agent, session string }
	want := map[key]bool{}
	agents := map[string]bool{}
	for _, h := range sources {
		want[key{h.Agent, h.Session}] = true
		agents[h.Agent] = true
	}
	if len(want) == 0 {
		return nil, nil
	}
	found := map[key][]memsync.Node{}
	seen := map[string]bool{}
	var rec lightRecord
	for i, f := range s.files {
		if !agents[f.agent] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		file, seq := int32(i), f.firstSeq
		err := eachLine(f.path, func(line []byte, number int, off int64) error {
			seq++ // as the first reading numbered the lines
			if !rec.parse(line) || !want[key{f.agent, string(rec.session)}] {
				return nil
			}
			pos := linePos{seq: seq, file: file, line: int32(number), off: off, size: int32(len(line))}
			h, ok := s.check(lines, candidate{pos: pos, uuid: string(rec.uuid)})
			if !ok || seen[h.UUID] {
				return nil
			}
			seen[h.UUID] = true
			k := key{h.Agent, h.Session}
			found[k] = append(found[k], h.Node)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("offline search: read %s: %w", f.rel, err)
		}
	}
	for _, list := range found {
		sort.Slice(list, func(i, j int) bool {
			if !list[i].TS.Equal(list[j].TS) {
				return list[i].TS.Before(list[j].TS)
			}
			return list[i].UUID < list[j].UUID
		})
	}
	var out []memsync.Beside
	for _, h := range sources {
		list := found[key{h.Agent, h.Session}]
		at := slices.IndexFunc(list, func(x memsync.Node) bool { return x.UUID == h.UUID })
		if at < 0 {
			continue
		}
		b := memsync.Beside{From: h.UUID}
		for d := 1; d <= recall.Window; d++ {
			if at-d >= 0 {
				b.Before = append(b.Before, list[at-d])
			}
			if at+d < len(list) {
				b.After = append(b.After, list[at+d])
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// check re-reads a candidate's line and makes it a hit if it is a record
// the reader may see and the query wants.
func (s *search) check(lines *lineReader, c candidate) (memsync.Hit, bool) {
	m, ok := lines.memory(c.pos)
	if !ok || (c.uuid != "" && m.UUID != c.uuid) || !s.groups[m.GroupID()] {
		return memsync.Hit{}, false
	}
	if s.kinds != nil && !s.kinds[m.Kind] || !s.q.Since.IsZero() && m.TS.Before(s.q.Since) {
		return memsync.Hit{}, false
	}
	if !s.winningVersion(lines, m, c.pos) {
		return memsync.Hit{}, false
	}
	h := memsync.Hit{Node: memsync.Node{Memory: m}, Score: c.score}
	// The earliest valid record that retires this one (memsync.Retire:
	// only a record the reader may see can).
	for _, r := range s.retired[m.UUID] {
		by, ok := lines.memory(r.pos)
		if !ok || by.UUID != r.uuid && r.uuid != "" || !slices.Contains(by.Supersedes, m.UUID) {
			continue
		}
		memsync.Retire(&h.Node, &by.Record)
	}
	if h.ReplacedBy != "" && !s.q.All {
		return memsync.Hit{}, false
	}
	complete(&h.Node)
	return h, true
}

// winningVersion reports whether the line at pos holds the version of m's
// uuid that the graph projects (journal.ClashWins, whatever the line order)
// and is its first line: another version is a reject, a later copy a
// replay (a no-op).
func (s *search) winningVersion(lines *lineReader, m memsync.Memory, pos linePos) bool {
	dups := s.dups[maphash.String(s.seed, m.UUID)]
	if len(dups) == 0 {
		return true
	}
	mine := journal.VersionOf(&m.Record, m.Hash())
	for _, p := range dups {
		if p.seq == pos.seq {
			continue
		}
		other, ok := lines.memory(p)
		if !ok || other.UUID != m.UUID {
			continue
		}
		theirs := journal.VersionOf(&other.Record, other.Hash())
		if theirs.Hash == mine.Hash && p.seq < pos.seq || journal.ClashWins(theirs, mine) {
			return false
		}
	}
	return true
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
	slices.Sort(out)
	return slices.Compact(out)
}

// lineReader re-reads single journal lines by position, keeping the files
// it opened until close.
type lineReader struct {
	files []journalFile
	open  map[int32]*os.File
	buf   []byte
}

// memory reads and parses the line at p. It is false when the line is not a
// valid record of the agent that owns the file (or the file changed since).
func (lr *lineReader) memory(p linePos) (memsync.Memory, bool) {
	f, ok := lr.open[p.file]
	if !ok {
		var err error
		if f, err = journal.OpenNoFollow(lr.files[p.file].path, os.O_RDONLY, 0); err != nil {
			return memsync.Memory{}, false
		}
		lr.open[p.file] = f
	}
	lr.buf = slices.Grow(lr.buf[:0], int(p.size))[:p.size]
	if _, err := f.ReadAt(lr.buf, p.off); err != nil {
		return memsync.Memory{}, false
	}
	rec, err := journal.Parse(lr.buf)
	if err != nil || journal.CheckOwner(&rec, lr.files[p.file].agent) != nil {
		return memsync.Memory{}, false
	}
	return memsync.Memory{Record: rec, Path: lr.files[p.file].rel, Line: int(p.line)}, true
}

func (lr *lineReader) close() {
	for _, f := range lr.open {
		f.Close()
	}
}

// candidates is a max-heap: the best candidate at the root.
type candidates []candidate

// better: higher score, then newer, then smaller uuid, then read first.
func (h candidates) Less(i, j int) bool {
	a, b := &h[i], &h[j]
	if a.score != b.score {
		return a.score > b.score
	}
	if !a.ts.Equal(b.ts) {
		return a.ts.After(b.ts)
	}
	if a.uuid != b.uuid {
		return a.uuid < b.uuid
	}
	return a.pos.seq < b.pos.seq
}
func (h candidates) Len() int      { return len(h) }
func (h candidates) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candidates) Push(x any)   { *h = append(*h, x.(candidate)) }
func (h *candidates) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// addVector compares a visible record with the query's vector, if the
// search's filters let it through.
func (s *search) addVector(r *lightRecord, pos linePos) {
	if s.kinds != nil && !s.kinds[journal.Kind(r.kind)] {
		return
	}
	ts, err := time.Parse(time.RFC3339Nano, string(r.ts))
	if err != nil {
		return
	}
	ts = ts.UTC()
	if !s.q.Since.IsZero() && ts.Before(s.q.Since) {
		return
	}
	c := recall.RoundCosine(dot(s.qv, s.emb.Embed(string(r.text))))
	s.vectors = append(s.vectors, vectorCand{pos: pos, uuid: string(r.uuid), ts: ts, cosine: c})
}

// dot is the dot product of two unit vectors, accumulated in float32 as
// the embedded store does, so both round to the same cosine.
func dot(a, b []float32) float64 {
	var sum float32
	for i := range a[:min(len(a), len(b))] {
		sum += a[i] * b[i]
	}
	return float64(sum)
}

// similar takes the vector candidates best first, checking each against
// its journal line as the lexical ones are, until pool are found.
func (s *search) similar(ctx context.Context, lines *lineReader, pool int) ([]memsync.Found, error) {
	if len(s.vectors) == 0 {
		return nil, nil
	}
	sort.Slice(s.vectors, func(i, j int) bool {
		a, b := &s.vectors[i], &s.vectors[j]
		if a.cosine != b.cosine || !a.ts.Equal(b.ts) || a.uuid != b.uuid {
			return recall.Less(a.cosine, a.ts, a.uuid, b.cosine, b.ts, b.uuid)
		}
		return a.pos.seq < b.pos.seq
	})
	var out []memsync.Found
	seen := map[string]bool{}
	for _, v := range s.vectors {
		if len(out) == pool {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, ok := s.check(lines, candidate{pos: v.pos, uuid: v.uuid})
		if !ok || seen[h.UUID] {
			continue
		}
		seen[h.UUID] = true
		out = append(out, memsync.Found{Node: h.Node, Score: v.cosine})
	}
	return out, nil
}
