package importer

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
)

// The plan in two reads of the source. The first keeps of each item its
// sketch: its key, the names other items call it by, its identity and
// its time, never its content; from the sketches come the uuid of every
// item (links are resolved by name, forward ones included) and the keys
// the source still holds (follow.go). The second read builds each item's
// record from the item and its sketch and writes it at once. What an
// import holds is thus the journal's index (existing), a sketch per item
// and at most Options.ItemBudget bytes of items: a source whose items fit
// in the budget is read once, its items kept from the first read for the
// second; a larger one is read again. A source that changes between the
// two reads is refused (errSourceChanged), and the import, run again,
// completes.

// DefaultItemBudget is Options.ItemBudget when it is 0: about what the
// items of 10,000 Basic Memory notes take.
const DefaultItemBudget = 32 << 20

// itemSize is about what an item takes in memory.
func itemSize(it *Item) int {
	n := 320 + len(it.Key) + len(it.Origin) + len(it.ContentKey) + len(it.File) + len(it.LegacyKey)
	r := &it.Record
	n += 64*len(r.Refs) + len(r.Text) + len(r.Why) + len(r.Tier) + len(r.Confidence) + len(r.MaxAge) + len(r.Session) + len(r.Task)
	for _, l := range [][]string{it.Names, it.Links, it.Replaces, r.Tags, r.Entities} {
		for _, x := range l {
			n += 16 + len(x)
		}
	}
	for k, v := range r.Extra {
		n += 64 + len(k) + len(v)
	}
	return n
}

// sketch is what the plan keeps of an item between the two reads.
type sketch struct {
	key     string   // the key the item is imported under (places.go)
	legacy  string   // Item.LegacyKey
	names   []string // Item.Names
	origin  string   // Item.Origin
	content string   // contentDigest of Item.ContentKey, "" for none
	base    string   // identity(key, digest): the second read checks it
	suffix  string   // the uuid's identity part
	uuid    string
	ts      time.Time
	keyed   bool
	removed bool // Item.Removed
	skip    bool // left out (reported by the first read)
}

// contentDigest stands for a ContentKey (which can be as long as a
// memory's text) in what the plan keeps.
func contentDigest(k string) string {
	sum := sha256.Sum256([]byte(k))
	return string(sum[:16])
}

// planner makes the plan of one import.
type planner struct {
	opts Options
	have *existing
	rep  *Report
	now  time.Time

	sks  []sketch
	seen map[string]bool // suffixes planned
	// pending are the place-keyed items of the file being read, re-keyed
	// together once it is read (a group never spans files).
	pending     []pendingItem
	pendingFile string
	places      placeIndex // the groups' active records (places.go)
	// byName maps the names and keys of the items to their uuids.
	byName map[string]string
	// wantsShared, wantsContent: some item has an Origin or a
	// ContentKey (the round trip's scan is needed).
	wantsShared, wantsContent bool
	todo                      int // records the second read decides
	// kept are the items of the first read while they fit in budget
	// (keptBytes of them); once they do not, none is kept (reread).
	kept      []*Item
	keptBytes int
	budget    int
	reread    bool
}

type pendingItem struct {
	it *Item
	i  int
}

func newPlanner(opts Options, have *existing, rep *Report) *planner {
	budget := opts.ItemBudget
	if budget == 0 {
		budget = DefaultItemBudget
	}
	return &planner{opts: opts, have: have, rep: rep, now: opts.Now(), seen: map[string]bool{}, budget: budget, reread: budget < 0}
}

// keep holds it for the second read while the items fit in the budget.
func (p *planner) keep(it *Item) {
	if p.reread {
		return
	}
	if p.keptBytes += itemSize(it); p.keptBytes > p.budget {
		p.reread, p.kept = true, nil
		return
	}
	p.kept = append(p.kept, it)
}

// first takes one item of the first read.
func (p *planner) first(it *Item) {
	p.sks = append(p.sks, sketch{key: strings.Clone(it.Key), legacy: strings.Clone(it.LegacyKey), names: slicesClone(it.Names),
		origin: strings.Clone(it.Origin), keyed: it.Keyed, removed: it.Removed})
	i := len(p.sks) - 1
	s := &p.sks[i]
	p.keep(it)
	if it.ContentKey != "" {
		s.content = contentDigest(it.ContentKey)
		p.wantsContent = true
	}
	p.wantsShared = p.wantsShared || it.Origin != "" || it.ContentKey != ""
	if it.Removed {
		return
	}
	it.Record.Agent, it.Record.Scope = p.opts.Agent, p.opts.Scope
	if f, ok := followed[p.opts.Format]; ok && it.Keyed {
		if _, _, place := placeOf(f, it.Key); place {
			if it.File != p.pendingFile {
				p.flush()
				p.pendingFile = it.File
			}
			p.pending = append(p.pending, pendingItem{it, i})
			return
		}
	}
	p.identify(it, s)
}

// flush re-keys the pending place-keyed items and gives them their
// identity.
func (p *planner) flush() {
	if len(p.pending) == 0 {
		return
	}
	places := make([]*placed, len(p.pending))
	for k, x := range p.pending {
		places[k] = &placed{key: x.it.Key, text: textHash(x.it.Record.Text)}
	}
	rekeyPlaces(p.opts.Format, p.opts.Scope, places, p.have, &p.places)
	for k, x := range p.pending {
		x.it.Key = places[k].key
		p.sks[x.i].key = places[k].key
		p.identify(x.it, &p.sks[x.i])
	}
	p.pending = p.pending[:0]
}

// identify decides whether the item is imported and gives it its suffix.
func (p *planner) identify(it *Item, s *sketch) {
	opts, have, r := p.opts, p.have, &it.Record
	where := fmt.Sprintf("%s:%d", it.File, it.Line)
	s.base = identity(opts.Format, it.Key, opts.Scope, digest(it))
	s.skip = true
	if it.Private && it.Owner != "" && it.Owner != opts.Agent && !opts.IncludePrivate {
		p.rep.Skipped = append(p.rep.Skipped, Skip{Source: where + " (" + it.Owner + ")", Reason: SkipOthersPrivate})
		return
	}
	if r.TS.IsZero() {
		p.rep.Unparsable = append(p.rep.Unparsable, Problem{it.File, it.Line, "no time for this memory"})
		return
	}
	if r.TS.After(p.now.Add(24 * time.Hour)) {
		p.rep.Unparsable = append(p.rep.Unparsable, Problem{it.File, it.Line, fmt.Sprintf("dated %s, more than a day ahead", r.TS.UTC().Format(time.RFC3339))})
		return
	}
	suffix := s.base
	if it.LegacyKey != "" && have.suffixes[suffix] == "" {
		if legacy := identity(opts.Format, it.LegacyKey, opts.Scope, digest(it)); have.suffixes[legacy] != "" {
			suffix = legacy
		}
	}
	// A keyed item back to a version an earlier import wrote, since
	// replaced (A, B, A again; or removed and back): a new record,
	// which replaces the current one.
	for it.Keyed {
		u := have.suffixes[suffix]
		if u == "" || !have.retired[u] || have.retiredBy[u] != opts.Scope {
			break
		}
		suffix = identity(opts.Format, it.Key, opts.Scope, digest(it)+"\x00revived\x00"+u)
	}
	if p.seen[suffix] {
		p.rep.Skipped = append(p.rep.Skipped, Skip{Source: where, Reason: "duplicate of an earlier item of the source"})
		return
	}
	p.seen[suffix] = true
	s.skip, s.suffix, s.ts = false, suffix, r.TS
}

// resolve gives every item its uuid, once the first read is done (and
// the round trip's scan, which already needs, with it).
func (p *planner) resolve() {
	p.flush()
	p.seen = nil
	have := p.have
	p.byName = map[string]string{}
	for i := range p.sks {
		s := &p.sks[i]
		if s.skip || s.removed {
			continue
		}
		p.todo++
		// A new version of an edited keyed item is dated after the one
		// it replaces, so the newer claim is the newer record.
		prior, done := have.suffixes[s.suffix]
		if u, there := have.already(s.origin, s.content); !done && there {
			prior, done = u, true
			have.suffixes[s.suffix] = u // planned as already imported
		}
		if s.keyed && !done {
			for _, old := range have.byKey[s.key] {
				if t := have.ts[old]; !s.ts.After(t) {
					s.ts = t.Add(time.Second)
				}
			}
		}
		s.uuid = "mem_" + journal.UUIDTime(s.ts) + "_" + p.opts.Agent + "_" + s.suffix
		if done {
			// Written by an earlier run (maybe dated after a version
			// it replaced): links name that record.
			s.uuid = prior
		}
		for _, n := range append([]string{s.key}, s.names...) {
			if _, dup := p.byName[n]; !dup {
				p.byName[n] = s.uuid
			}
		}
		s.names = nil
	}
}

// errSourceChanged: the second read of the source does not give the
// items of the first.
var errSourceChanged = fmt.Errorf("the source changed while it was imported (run the import again)")

// build makes the record of the i-th item of the second read; ok false
// when it is not planned (skipped, removed, or not valid: reported).
func (p *planner) build(i int, it *Item) (planned, bool, error) {
	if i >= len(p.sks) {
		return planned{}, false, fmt.Errorf("%s:%d: %w", it.File, it.Line, errSourceChanged)
	}
	s := &p.sks[i]
	if s.removed != it.Removed || (!s.removed && identity(p.opts.Format, s.key, p.opts.Scope, digest(it)) != s.base) {
		return planned{}, false, fmt.Errorf("%s:%d: %w", it.File, it.Line, errSourceChanged)
	}
	if s.skip || s.removed {
		return planned{}, false, nil
	}
	opts, have, rep := p.opts, p.have, p.rep
	it.Key = s.key
	r := &it.Record
	r.Agent, r.Scope, r.TS, r.UUID = opts.Agent, opts.Scope, s.ts, s.uuid
	where := fmt.Sprintf("%s:%d", it.File, it.Line)
	if r.Source == nil {
		r.Source = &journal.Source{}
	}
	r.Source.Type = opts.SourceType
	if r.Source.Context == "" {
		if it.Keyed {
			r.Source.Context = it.Key
		} else {
			r.Source.Context = where
		}
	}
	if r.Extra == nil {
		r.Extra = map[string]json.RawMessage{}
	}
	r.Extra[FieldImport] = json.RawMessage(quote(opts.Format))
	if it.Verified {
		r.Extra[FieldSourceVerified] = json.RawMessage("true")
		if it.VerifiedBy != "" {
			r.Extra[FieldSourceVerifiedBy] = json.RawMessage(quote(it.VerifiedBy))
		}
	}
	for _, l := range it.Links {
		id, ok := p.byName[l]
		if !ok {
			for _, old := range have.byKey[l] {
				if !have.removal[old] {
					id, ok = old, true
				}
			}
		}
		if id == r.UUID {
			continue // a note naming itself
		}
		if !ok {
			rep.Unresolved = append(rep.Unresolved, Skip{Source: where, Reason: fmt.Sprintf("link to %q: not in the source", l)})
			continue
		}
		if !slices.Contains(r.Links, id) {
			r.Links = append(r.Links, id)
		}
	}
	for _, l := range it.Replaces {
		id, ok := p.byName[l]
		if !ok || id == r.UUID {
			rep.Unresolved = append(rep.Unresolved, Skip{Source: where, Reason: fmt.Sprintf("supersedes %q: not in the source", l)})
			continue
		}
		if !slices.Contains(r.Supersedes, id) {
			r.Supersedes = append(r.Supersedes, id)
		}
	}
	if it.Private {
		r.Scope = journal.ScopePrivate
	}
	if it.Keyed {
		for _, old := range have.byKey[it.Key] {
			if old != r.UUID && !have.retired[old] && derivedSuffix(old) != s.suffix {
				r.Supersedes = append(r.Supersedes, old)
			}
		}
		sort.Strings(r.Supersedes)
	}
	if err := r.Validate(); err != nil {
		rep.Unparsable = append(rep.Unparsable, Problem{it.File, it.Line, err.Error()})
		return planned{}, false, nil
	}
	// The record as the journal reads it back (unknown fields in their
	// canonical form): what is written is what is read.
	back, err := journal.Parse(r.Canonical())
	if err != nil {
		rep.Unparsable = append(rep.Unparsable, Problem{it.File, it.Line, err.Error()})
		return planned{}, false, nil
	}
	// source goes into the report: a copy, which holds no line.
	return planned{rec: back, suffix: s.suffix, source: strings.Clone(back.Source.Context), ok: have.suffixes[s.suffix] == ""}, true, nil
}

// stillThere is what the source's keyed items say for retirements: the keys
// still there, the groups still there, and the keys the source says were
// removed.
func (p *planner) stillThere() (present, groups, gone map[string]bool) {
	present, groups, gone = map[string]bool{}, map[string]bool{}, map[string]bool{}
	f, ok := followed[p.opts.Format]
	if !ok {
		return
	}
	for i := range p.sks {
		s := &p.sks[i]
		if s.keyed && !s.removed {
			present[s.key] = true
			if g := f.group(s.key); g != "" {
				groups[g] = true
			}
		}
	}
	for i := range p.sks {
		s := &p.sks[i]
		if s.keyed && s.removed && !present[s.key] {
			gone[s.key] = true
		}
	}
	return
}
