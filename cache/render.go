// Package cache writes the snapshots agents read when the graph is down:
// for each agent, cache/GRAPHITI_FACTS.md (current facts, decisions,
// preferences and procedures, open conflicts, an index of entities) and one
// cache/GRAPHITI_ENTITIES/<slug>.md per entity its memories mention. Each
// agent's snapshot holds only what it may see: the CONSTELLATION group and
// its own AGENT:<agent> group.
//
// A snapshot is a function of the graph: the same graph renders the same
// bytes (no wall clock, no map order; the "newest memory" the agent sees is
// the clock at which importance is computed, SPEC §7), so regenerating an
// unchanged graph rewrites nothing and a committed cache only changes when
// memory did. FACTS starts with the agent's core tier, then each kind's
// section ordered by importance (then newest first), archived memories left
// out, then a "for review" list (past max_age, importance 0.4–0.7). Entity
// pages list newest first. Every list is capped (Limit, 100 by default)
// with a line saying how many more there are, so snapshots stay readable at
// 100,000 memories: the walk keeps the newest Limit memories of each list
// and orders those by importance. Files are replaced atomically and pages
// of entities no longer mentioned are removed.
package cache

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

// The files of a snapshot, relative to the agent's cache directory.
const (
	FactsFile   = "GRAPHITI_FACTS.md"
	EntitiesDir = "GRAPHITI_ENTITIES"
)

// CoreWarnBytes is the size of an agent's core tier past which its
// snapshot warns (SPEC §7: kept small).
const CoreWarnBytes = 2048

// DefaultLimit caps every list of a snapshot.
const DefaultLimit = 100

// A snapshot is bounded whatever the fleet's size: an agent that sees
// hundreds of thousands of shared memories mentioning thousands of
// entities gets pages for the EntityPages entities most mentioned (the
// index says how many more there are, and search finds them), each
// listing its PageLimit newest memories. With DefaultLimit and
// maxTextRunes that keeps an agent's snapshot under 1 MB (at 1,000 agents
// and 1M records it was 12 MB an agent, more than the store).
const (
	EntityPages = 50
	PageLimit   = 25
)

// maxTextRunes cuts long memory texts in snapshot lines.
const maxTextRunes = 300

// getChunk bounds the uuids of one Graph.Get call.
const getChunk = 500

// sections are the kinds FACTS lists, in order, with their headings.
var sections = []struct {
	kind    journal.Kind
	heading string
}{
	{journal.KindFact, "Facts"},
	{journal.KindDecision, "Decisions"},
	{journal.KindPreference, "Preferences"},
	{journal.KindProcedure, "Procedures"},
}

// Snapshot is one agent's rendered cache: file contents by path relative to
// its cache directory (slash-separated).
type Snapshot struct {
	Agent string
	Files map[string][]byte
}

// Paths lists the snapshot's files in order.
func (s *Snapshot) Paths() []string {
	out := make([]string, 0, len(s.Files))
	for p := range s.Files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// entry is a memory as a snapshot shows it.
type entry struct {
	uuid, agent, scope, path, text string
	kind                           journal.Kind
	ts                             time.Time
	line                           int
	current                        bool
	size                           int          // bytes of its whole text
	mem                            score.Memory // what the rule reads of it
	original                       string       // the memory it promotes, when a promotion

	// What rendering computed of it, kept for the other agents of the
	// same walk that see it: its line, and its score at the clock it was
	// last scored at (most agents of a walk share one clock).
	rendered []byte
	scored   *scoredEntry
}

// Every string an entry keeps is its own copy: a node's strings share the
// memory of the journal line it was parsed from, and a walk keeps capped
// lists of entries for every group and entity, so that keeping a uuid
// would keep the whole line (issue 50: a third of a 1,000-agent walk's
// live heap was lines kept for their uuid, agent or path).
func newEntry(n *memsync.Node) *entry {
	uuid, agent := strings.Clone(n.UUID), strings.Clone(n.Agent)
	mem := score.FromRecord(&n.Record, n.InvalidAt, n.ReplacedBy)
	mem.UUID, mem.Agent, mem.Group = uuid, agent, strings.Clone(mem.Group)
	mem.Kind, mem.Tier, mem.MaxAge = journal.Kind(strings.Clone(string(mem.Kind))), strings.Clone(mem.Tier), strings.Clone(mem.MaxAge)
	mem.Hint, mem.SourceType, mem.ReplacedBy = strings.Clone(mem.Hint), strings.Clone(mem.SourceType), strings.Clone(mem.ReplacedBy)
	return &entry{
		uuid: uuid, agent: agent, scope: strings.Clone(string(n.Scope)), path: strings.Clone(n.Path), line: n.Line,
		text: oneLine(n.Text), kind: mem.Kind, ts: n.TS, current: n.InvalidAt.IsZero(), size: len(n.Text),
		mem:      mem,
		original: strings.Clone(promotionOriginal(n)),
	}
}

// promotionOriginal is the memory n promotes ("" when n is no promotion).
func promotionOriginal(n *memsync.Node) string {
	orig, _ := journal.PromotionOriginal(&n.Record)
	return orig
}

// newer orders entries newest first, then by uuid.
func newer(a, b *entry) bool {
	if !a.ts.Equal(b.ts) {
		return a.ts.After(b.ts)
	}
	return a.uuid < b.uuid
}

// newest keeps the limit newest entries offered (the oldest, when
// oldest is set) and counts them all.
type newest struct {
	limit  int
	total  int
	oldest bool
	heap   []*entry // the least wanted kept at [0]
	rank   *rankMemo
}

// rankMemo is a frozen list scored and ordered at one clock, kept for the
// other agents of the walk that merge it at the same clock.
type rankMemo struct {
	clock    time.Time
	out      []*scoredEntry // importance first, archived ones left out
	archived int
}

// before reports whether a is wanted before b.
func (k *newest) before(a, b *entry) bool {
	if k.oldest {
		return newer(b, a)
	}
	return newer(a, b)
}

func (k *newest) add(e *entry) {
	k.total++
	if len(k.heap) < k.limit {
		k.heap = append(k.heap, e)
		for i := len(k.heap) - 1; i > 0; {
			p := (i - 1) / 2
			if !k.before(k.heap[p], k.heap[i]) {
				break
			}
			k.heap[p], k.heap[i] = k.heap[i], k.heap[p]
			i = p
		}
		return
	}
	if len(k.heap) == 0 || !k.before(e, k.heap[0]) {
		return
	}
	k.heap[0] = e
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(k.heap) && k.before(k.heap[m], k.heap[l]) {
			m = l
		}
		if r < len(k.heap) && k.before(k.heap[m], k.heap[r]) {
			m = r
		}
		if m == i {
			break
		}
		k.heap[i], k.heap[m] = k.heap[m], k.heap[i]
		i = m
	}
}

// sorted is the kept entries, newest first.
func (k *newest) sorted() []*entry {
	out := slices.Clone(k.heap)
	slices.SortFunc(out, func(a, b *entry) int {
		if k.before(a, b) {
			return -1
		}
		if k.before(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// view is what the walk keeps of one group's memories: CONSTELLATION once
// for every agent, and each agent's private group. An agent's snapshot
// merges two views, so a shared memory is held once however many agents
// see it.
type view struct {
	core     *newest // core-tier memories, any kind
	aging    *newest // the oldest current memories not in core, for review
	sections map[journal.Kind]*newest
	entities map[string]*newest
	current  int
	retired  int
	latest   time.Time
}

func newView(limit int) *view {
	v := &view{core: &newest{limit: limit}, aging: &newest{limit: limit, oldest: true}, sections: map[journal.Kind]*newest{}, entities: map[string]*newest{}}
	for _, s := range sections {
		v.sections[s.kind] = &newest{limit: limit}
	}
	return v
}

// freeze sorts every list newest first, for merging; the lists take no
// more entries afterwards.
func (v *view) freeze() {
	v.core.heap = v.core.sorted()
	v.aging.heap = v.aging.sorted()
	for _, l := range v.sections {
		l.heap = l.sorted()
	}
	for _, l := range v.entities {
		l.heap = l.sorted()
	}
}

// conflictEdge is a CONFLICTS_WITH edge from a current memory.
type conflictEdge struct{ src, dst string }

// conflict is an open conflict between two current memories, with the
// groups an agent must see to see it.
type conflict struct {
	winner, loser *entry
	groups        [2]string
}

// walked is what one walk of the graph keeps for the snapshots of a set of
// agents: no snapshot is rendered yet, and each renders on its own.
type walked struct {
	limit     int
	agents    []string                 // without duplicates, in the order asked
	views     map[string]*view         // by group id
	conflicts []conflict               // newest winner first
	events    map[string][]score.Event // signals into the kept entries and their originals
	originals map[string]score.Memory  // the originals of the kept promotions
	stats     renderStats
}

// renderStats counts what rendering a walk's snapshots computed, so that
// tests can tell what is shared between agents without timing anything.
type renderStats struct {
	evaluated int // score.Evaluate of an entry at a clock
	ranked    int // lists scored and ordered at a clock
}

// Render walks g once and renders the snapshot of each agent, with every
// list capped at limit (DefaultLimit when limit <= 0). Agents are rendered
// in the order given; duplicates are rendered once. The snapshots are all
// held in memory at once: Writer.Generate renders and writes them one file
// at a time instead.
func Render(ctx context.Context, g memsync.Graph, agents []string, limit int) ([]*Snapshot, error) {
	wk, err := walk(ctx, g, agents, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*Snapshot, 0, len(wk.agents))
	var buf bytes.Buffer
	for _, a := range wk.agents {
		snap := &Snapshot{Agent: a, Files: map[string][]byte{}}
		_ = wk.render(a, &buf, func(rel string, data []byte) error {
			snap.Files[rel] = bytes.Clone(data)
			return nil
		})
		out = append(out, snap)
	}
	return out, nil
}

// walk reads g once and keeps, for agents, the capped lists and counts of
// their groups and the open conflicts among the memories they may see.
func walk(ctx context.Context, g memsync.Graph, agents []string, limit int) (*walked, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	wk := &walked{limit: limit, views: map[string]*view{journal.SharedGroup: newView(limit)}}
	for _, a := range agents {
		group := journal.PrivateGroup(a)
		if wk.views[group] != nil {
			continue
		}
		wk.views[group] = newView(limit)
		wk.agents = append(wk.agents, a)
	}
	if len(wk.agents) == 0 {
		return wk, nil
	}
	// Both ends of every conflict between current memories; the ends that
	// come later in the walk, or earlier without an edge of their own, are
	// fetched afterwards.
	ends := map[string]*entry{}
	var edges []conflictEdge
	err := g.Walk(ctx, func(n memsync.Node) error {
		v := wk.views[n.GroupID]
		if v == nil {
			return nil
		}
		if n.TS.After(v.latest) {
			v.latest = n.TS
		}
		if !n.InvalidAt.IsZero() {
			v.retired++
			return nil
		}
		v.current++
		e := newEntry(&n)
		if s, ok := v.sections[n.Kind]; ok {
			s.add(e)
		}
		if n.Tier == "core" {
			v.core.add(e)
		} else {
			v.aging.add(e)
		}
		for _, name := range n.Mentions {
			p := v.entities[name]
			if p == nil {
				p = &newest{limit: min(limit, PageLimit)}
				v.entities[name] = p
			}
			p.add(e)
		}
		if len(n.ConflictsWith) > 0 {
			ends[e.uuid] = e
			for _, dst := range n.ConflictsWith {
				edges = append(edges, conflictEdge{e.uuid, strings.Clone(dst)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cache: walk graph: %w", err)
	}
	groups, err := fetchEnds(ctx, g, edges, ends)
	if err != nil {
		return nil, err
	}
	for _, v := range wk.views {
		v.freeze()
	}
	wk.conflicts = openConflicts(edges, ends, groups)
	if wk.originals, err = originals(ctx, g, wk.views); err != nil {
		return nil, err
	}
	if wk.events, err = signals(ctx, g, wk.views, wk.originals); err != nil {
		return nil, err
	}
	return wk, nil
}

// kept calls fn with every entry the views' core and section lists kept.
func kept(views map[string]*view, fn func(*entry)) {
	for _, v := range views {
		for _, l := range []*newest{v.core, v.aging} {
			for _, e := range l.heap {
				fn(e)
			}
		}
		for _, l := range v.sections {
			for _, e := range l.heap {
				fn(e)
			}
		}
	}
}

// originals reads the originals of the promotions the views kept: a
// promotion stands only while its original does (read.FollowOriginal).
func originals(ctx context.Context, g memsync.Graph, views map[string]*view) (map[string]score.Memory, error) {
	var ids []string
	kept(views, func(e *entry) {
		if e.original != "" {
			ids = append(ids, e.original)
		}
	})
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := map[string]score.Memory{}
	err := getChunked(ctx, g, ids, func(id string, n memsync.Node) {
		out[id] = score.FromRecord(&n.Record, n.InvalidAt, n.ReplacedBy)
	})
	if err != nil {
		return nil, fmt.Errorf("cache: read the originals of promotions: %w", err)
	}
	return out, nil
}

// getChunked reads the memories among ids (sorted) from g, getChunk uuids
// a call, and calls fn with each one found.
func getChunked(ctx context.Context, g memsync.Graph, ids []string, fn func(id string, n memsync.Node)) error {
	for len(ids) > 0 {
		chunk := ids[:min(getChunk, len(ids))]
		ids = ids[len(chunk):]
		nodes, err := g.Get(ctx, chunk)
		if err != nil {
			return err
		}
		for id, n := range nodes {
			fn(id, n)
		}
	}
	return nil
}

// signals reads the events into every memory the views' core and section
// lists kept, and into the originals of the promotions among them, for
// score.Evaluate.
func signals(ctx context.Context, g memsync.Graph, views map[string]*view, originals map[string]score.Memory) (map[string][]score.Event, error) {
	var ids []string
	kept(views, func(e *entry) { ids = append(ids, e.uuid) })
	for id := range originals {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	events := map[string][]score.Event{}
	for len(ids) > 0 {
		chunk := ids[:min(getChunk, len(ids))]
		ids = ids[len(chunk):]
		refs, err := g.Incoming(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("cache: read signals: %w", err)
		}
		for _, r := range refs {
			events[r.Target] = append(events[r.Target], score.EventFrom(score.Relation(r.Relation), &r.Source.Record))
		}
	}
	return events, nil
}

// scoredEntry is an entry with what score.Evaluate says of it at clock,
// and its line in a ranked list once written.
type scoredEntry struct {
	*entry
	res   score.Result
	clock time.Time
	line  []byte
}

// score is what score.Evaluate says of e at clock (through the original,
// for a promotion). The result is kept with e: every agent of the walk
// that sees e at the same clock reads it instead of evaluating again.
func (wk *walked) score(e *entry, clock time.Time) *scoredEntry {
	if s := e.scored; s != nil && s.clock.Equal(clock) {
		return s
	}
	wk.stats.evaluated++
	r := score.Evaluate(e.mem, wk.events[e.uuid], clock)
	if o, ok := wk.originals[e.original]; ok && e.original != "" {
		r = read.FollowOriginal(r, score.Evaluate(o, wk.events[e.original], clock))
	}
	s := &scoredEntry{entry: e, res: r, clock: clock}
	e.scored = s
	return s
}

// byImportance orders scored entries by importance, then newest first.
func byImportance(x, y *scoredEntry) int {
	if x.res.Importance != y.res.Importance {
		if x.res.Importance > y.res.Importance {
			return -1
		}
		return 1
	}
	if newer(x.entry, y.entry) {
		return -1
	}
	if newer(y.entry, x.entry) {
		return 1
	}
	return 0
}

// rankedList is the frozen list l scored at clock and ordered by
// importance, archived ones left out and counted. It is kept with l, so
// the shared view's lists are ranked once for all the agents of a walk
// that share a clock.
func (wk *walked) rankedList(l *newest, clock time.Time) ([]*scoredEntry, int) {
	if l == nil {
		return nil, 0
	}
	if m := l.rank; m != nil && m.clock.Equal(clock) {
		return m.out, m.archived
	}
	wk.stats.ranked++
	m := &rankMemo{clock: clock, out: make([]*scoredEntry, 0, len(l.heap))}
	for _, e := range l.heap {
		s := wk.score(e, clock)
		if s.res.Status.Hidden() {
			m.archived++
			continue
		}
		m.out = append(m.out, s)
	}
	slices.SortFunc(m.out, byImportance)
	l.rank = m
	return m.out, m.archived
}

// ranked is the entries of a and b (frozen lists of the shared and the
// private view) scored at clock, archived ones left out, ordered by
// importance, then newest first; archived counts the ones left out. The
// two groups hold different memories and the order is total, so merging
// the two ranked lists gives what sorting them together would.
func (wk *walked) ranked(a, b *newest, clock time.Time) (out []*scoredEntry, total, archived int) {
	x, ax := wk.rankedList(a, clock)
	y, ay := wk.rankedList(b, clock)
	for _, l := range []*newest{a, b} {
		if l != nil {
			total += l.total
		}
	}
	archived = ax + ay
	out = make([]*scoredEntry, 0, len(x)+len(y))
	for len(x) > 0 || len(y) > 0 {
		if len(y) == 0 || len(x) > 0 && byImportance(x[0], y[0]) < 0 {
			out, x = append(out, x[0]), x[1:]
		} else {
			out, y = append(out, y[0]), y[1:]
		}
	}
	return out, total - archived, archived
}

// openConflicts pairs the ends of edges, once per pair of current
// memories, the newer claim first.
func openConflicts(edges []conflictEdge, ends map[string]*entry, groups map[string]string) []conflict {
	var out []conflict
	pairs := map[[2]string]bool{}
	for _, e := range edges {
		a, b := ends[e.src], ends[e.dst]
		if a == nil || b == nil || !a.current || !b.current {
			continue
		}
		key := [2]string{min(e.src, e.dst), max(e.src, e.dst)}
		if pairs[key] {
			continue
		}
		pairs[key] = true
		// The newer claim wins; at the same instant, the larger uuid.
		if b.ts.After(a.ts) || b.ts.Equal(a.ts) && b.uuid > a.uuid {
			a, b = b, a
		}
		out = append(out, conflict{winner: a, loser: b, groups: [2]string{groups[a.uuid], groups[b.uuid]}})
	}
	slices.SortFunc(out, func(x, y conflict) int {
		if newer(x.winner, y.winner) {
			return -1
		}
		if newer(y.winner, x.winner) {
			return 1
		}
		return strings.Compare(x.loser.uuid, y.loser.uuid)
	})
	return out
}

// fetchEnds completes ends with the conflict targets the walk did not keep
// and returns the group of every end.
func fetchEnds(ctx context.Context, g memsync.Graph, edges []conflictEdge, ends map[string]*entry) (map[string]string, error) {
	groups := map[string]string{}
	var missing []string
	asked := map[string]bool{}
	for _, e := range edges {
		if ends[e.dst] == nil && !asked[e.dst] {
			asked[e.dst] = true
			missing = append(missing, e.dst)
		}
	}
	// Group of the ends the walk kept: re-derived from scope and agent.
	for id, e := range ends {
		groups[id] = groupOf(e)
	}
	sort.Strings(missing)
	err := getChunked(ctx, g, missing, func(id string, n memsync.Node) {
		ends[id] = newEntry(&n)
		groups[id] = n.GroupID
	})
	if err != nil {
		return nil, fmt.Errorf("cache: get conflict ends: %w", err)
	}
	return groups, nil
}

func groupOf(e *entry) string {
	if e.scope == string(journal.ScopeShared) {
		return journal.SharedGroup
	}
	return journal.PrivateGroup(e.agent)
}

// list is one capped list of an agent's snapshot: what its two views hold.
type list struct {
	entries []*entry // newest first, at most limit
	total   int
}

// merge joins the frozen lists of the shared and the private view.
func merge(a, b *newest, limit int) list {
	var x, y []*entry
	var l list
	if a != nil {
		x, l.total = a.heap, a.total
	}
	if b != nil {
		y, l.total = b.heap, l.total+b.total
	}
	l.entries = make([]*entry, 0, min(limit, len(x)+len(y)))
	for len(l.entries) < limit && (len(x) > 0 || len(y) > 0) {
		if len(y) == 0 || len(x) > 0 && newer(x[0], y[0]) {
			l.entries, x = append(l.entries, x[0]), x[1:]
		} else {
			l.entries, y = append(l.entries, y[0]), y[1:]
		}
	}
	return l
}

// render renders agent's snapshot one file at a time into buf, handing
// each to emit (path relative to the cache directory, slash-separated;
// data valid only during the call), FactsFile first. An error from emit
// stops it and is returned.
func (wk *walked) render(agent string, buf *bytes.Buffer, emit func(rel string, data []byte) error) error {
	limit := wk.limit
	shared, own := wk.views[journal.SharedGroup], wk.views[journal.PrivateGroup(agent)]
	sees := func(group string) bool { return journal.Sees(agent, group) }
	var conflicts []conflict
	for _, c := range wk.conflicts {
		if sees(c.groups[0]) && sees(c.groups[1]) {
			conflicts = append(conflicts, c)
		}
	}

	counts := map[string]int{}
	for _, v := range []*view{shared, own} {
		for name, l := range v.entities {
			counts[name] += l.total
		}
	}
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	slugs := Slugs(names)
	// Entities by how many current memories mention them, then by name.
	slices.SortFunc(names, func(x, y string) int {
		if d := counts[y] - counts[x]; d != 0 {
			return d
		}
		return strings.Compare(x, y)
	})

	latest := shared.latest
	if own.latest.After(latest) {
		latest = own.latest
	}
	b := buf
	b.Reset()
	fmt.Fprintf(b, "# Memory snapshot: %s\n\n", agent)
	fmt.Fprintf(b, "Generated by memsync from the graph; do not edit. Regenerate with `memsync cache --agent %s`.\n\n", agent)
	fmt.Fprintf(b, "- Groups: %s\n", strings.Join(journal.ReaderGroups(agent), ", "))
	fmt.Fprintf(b, "- Current memories: %d (retired: %d)\n", shared.current+own.current, shared.retired+own.retired)
	fmt.Fprintf(b, "- Newest memory: %s (importance and status are computed as of then)\n", formatTS(latest))
	core, coreTotal, _ := wk.ranked(shared.core, own.core, latest)
	fmt.Fprintf(b, "\n## Core (%d)\n\n", coreTotal)
	writeRanked(b, core, coreTotal, limit)
	coreBytes := 0
	for _, e := range core {
		coreBytes += e.size
	}
	if coreBytes > CoreWarnBytes {
		fmt.Fprintf(b, "\nWarning: the core tier holds %d bytes of text, over %d: core memories go into every packet and snapshot, keep them few.\n", coreBytes, CoreWarnBytes)
	}
	var review []*scoredEntry
	for _, s := range sections {
		l, total, _ := wk.ranked(shared.sections[s.kind], own.sections[s.kind], latest)
		fmt.Fprintf(b, "\n## %s (%d)\n\n", s.heading, total)
		writeRanked(b, l, total, limit)
	}
	wk.writeFollowUps(b, agent, shared, own, latest)
	aging, _, archived := wk.ranked(shared.aging, own.aging, latest)
	for _, e := range aging {
		if e.res.Status == score.Review {
			review = append(review, e)
		}
	}
	slices.SortFunc(review, func(x, y *scoredEntry) int {
		if newer(y.entry, x.entry) { // oldest first: the longest overdue
			return -1
		}
		if newer(x.entry, y.entry) {
			return 1
		}
		return 0
	})
	fmt.Fprintf(b, "\n## For review (%d)\n\n", len(review))
	b.WriteString("Past their max_age with importance 0.4–0.7: keep (reference or flag them) or let them go.\n\n")
	writeRanked(b, review, len(review), limit)
	if archived > 0 {
		more := ""
		if shared.aging.total+own.aging.total > len(shared.aging.heap)+len(own.aging.heap) {
			more = " among the oldest"
		}
		fmt.Fprintf(b, "\nArchived (not listed; `memsync search --all` shows them): %d%s\n", archived, more)
	}
	fmt.Fprintf(b, "\n## Open conflicts (%d)\n\n", len(conflicts))
	if len(conflicts) == 0 {
		b.WriteString("None.\n")
	}
	for i, c := range conflicts {
		if i == limit {
			fmt.Fprintf(b, "… and %d more\n", len(conflicts)-limit)
			break
		}
		fmt.Fprintf(b, "- `%s` (newer, wins) vs `%s`\n", c.winner.uuid, c.loser.uuid)
		b.WriteString("  - wins: ")
		writeEntry(b, c.winner)
		b.WriteString("  - loses: ")
		writeEntry(b, c.loser)
	}
	fmt.Fprintf(b, "\n## Entities (%d)\n\n", len(names))
	if len(names) == 0 {
		b.WriteString("None.\n")
	}
	pages := names[:min(len(names), limit, EntityPages)]
	for i, name := range names {
		if i == len(pages) {
			fmt.Fprintf(b, "… and %d more, without a page of their own (`memsync search NAME` finds their memories)\n", len(names)-len(pages))
			break
		}
		fmt.Fprintf(b, "- [%s](%s) (%d)\n", mdText(name), path.Join(EntitiesDir, slugs[name]+".md"), counts[name])
	}
	if err := emit(FactsFile, b.Bytes()); err != nil {
		return err
	}

	for _, name := range pages {
		l := merge(shared.entities[name], own.entities[name], min(limit, PageLimit))
		b.Reset()
		fmt.Fprintf(b, "# %s\n\n", mdText(name))
		fmt.Fprintf(b, "Generated by memsync from the graph for %s; do not edit. Regenerate with `memsync cache --agent %s`.\n\n", agent, agent)
		fmt.Fprintf(b, "Mentioned by %d current memories (newest first).\n\n", l.total)
		writeEntries(b, l)
		if err := emit(path.Join(EntitiesDir, slugs[name]+".md"), b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// writeFollowUps lists agent's decisions still waiting for an outcome at
// clock (score.AwaitingOutcome, among the decisions the snapshot keeps),
// oldest first, each as the question SPEC §10 asks.
func (wk *walked) writeFollowUps(b *bytes.Buffer, agent string, shared, own *view, clock time.Time) {
	var open []*entry
	for _, v := range []*view{shared, own} {
		l := v.sections[journal.KindDecision]
		if l == nil {
			continue
		}
		for _, e := range l.heap {
			if e.agent == agent && score.AwaitingOutcome(e.mem, wk.events[e.uuid], clock) {
				open = append(open, e)
			}
		}
	}
	slices.SortFunc(open, func(x, y *entry) int {
		if newer(y, x) {
			return -1
		}
		if newer(x, y) {
			return 1
		}
		return 0
	})
	fmt.Fprintf(b, "\n## Waiting for an outcome (%d)\n\n", len(open))
	if len(open) == 0 {
		b.WriteString("None.\n")
	}
	for i, e := range open {
		if i == wk.limit {
			fmt.Fprintf(b, "… and %d more\n", len(open)-wk.limit)
			break
		}
		fmt.Fprintf(b, "- %s (`%s`)\n", oneLine(score.FollowUpQuestion(e.text, e.ts)), e.uuid)
	}
}

// writeRanked writes up to limit scored entries, with their importance,
// and how many more there are of total.
func writeRanked(b *bytes.Buffer, l []*scoredEntry, total, limit int) {
	if total == 0 || len(l) == 0 {
		b.WriteString("None.\n")
		return
	}
	for i, e := range l {
		if i == limit {
			break
		}
		b.Write(e.rankedLine())
	}
	if more := total - min(limit, len(l)); more > 0 {
		fmt.Fprintf(b, "… and %d more\n", more)
	}
}

// rankedLine is s's line in a ranked list, formatted once.
func (s *scoredEntry) rankedLine() []byte {
	if s.line == nil {
		var b bytes.Buffer
		fmt.Fprintf(&b, "- (%.2f", s.res.Importance)
		if s.res.Status != score.Active {
			fmt.Fprintf(&b, ", %s", s.res.Status)
		}
		b.WriteString(") ")
		writeEntry(&b, s.entry)
		s.line = b.Bytes()
	}
	return s.line
}

func writeEntries(b *bytes.Buffer, l list) {
	if l.total == 0 {
		b.WriteString("None.\n")
		return
	}
	for _, e := range l.entries {
		b.WriteString("- ")
		writeEntry(b, e)
	}
	if more := l.total - len(l.entries); more > 0 {
		fmt.Fprintf(b, "… and %d more\n", more)
	}
}

// writeEntry writes one memory and a newline: kind, ts, author, scope,
// uuid, source line, text. The line is formatted once per walk, however
// many snapshots hold it.
func writeEntry(b *bytes.Buffer, e *entry) {
	if e.rendered == nil {
		e.rendered = fmt.Appendf(nil, "**%s** %s · %s · %s · `%s` · %s:%d — %s\n",
			e.kind, formatTS(e.ts), e.agent, e.scope, e.uuid, e.path, e.line, e.text)
	}
	b.Write(e.rendered)
}

func formatTS(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// oneLine makes text fit one markdown line: control characters (newlines
// included) become spaces, runs of space shrink to one, and a long text is
// cut at maxTextRunes with an ellipsis.
func oneLine(text string) string {
	var b strings.Builder
	space, n := false, 0
	for _, r := range strings.TrimSpace(text) {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		if n >= maxTextRunes {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// mdEscaper makes entity names fit for markdown. It is built once: a
// Replacer builds its table (a few KiB) at its first Replace, and mdText
// runs for every entity of every agent's snapshot at each walk.
var mdEscaper = strings.NewReplacer("[", `\[`, "]", `\]`, "\n", " ", "\r", " ")

// mdText is an entity name fit for a heading or a link text.
func mdText(name string) string { return mdEscaper.Replace(name) }
