package memsync

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
)

// This file holds what a store answers of a window of recent records
// without the reader decoding them: the web view's queue candidates and
// its entity index. A store gives the fields it holds (the records that
// name a conflict, the learning-tier records declared low confidence, the
// promotions; the entities the records mention, counted); every rule that
// judges them (status, importance, confidence) stays in package score and
// read, which the page applies to the few candidates.

// WindowQuery is a window of records: the newest Limit records of the
// reader's groups with ts at or after Since, in NewerFirst order (ts,
// then uuid, descending).
type WindowQuery struct {
	Groups []string  // the group_ids the reader may see; an empty list sees nothing
	Since  time.Time // zero: no lower bound on ts
	Limit  int       // the window's size at most; 0 means DefaultWindow
}

// DefaultWindow is a WindowQuery's Limit when it sets none.
const DefaultWindow = 5000

// Window says what a WindowQuery's window holds.
type Window struct {
	Records int  // records in the window
	Bounded bool // Limit stopped the window before Since: older records at or after Since were left out
}

// Candidates are a window's records that the queue judges, each list
// newest first (NewerFirst), a record in every list it meets.
type Candidates struct {
	Window
	Conflicting []string // records that name at least one conflicts_with target
	LowLearning []string // learning-tier records declared confidence low
	Promotions  []string // promotion records
}

// EntityCount is one entity the records of one group in a window
// mention, spelled as a record named it (journal.Record.AllEntities).
type EntityCount struct {
	Name     string
	Group    string
	Mentions int       // records of the window, of Group, that mention Name
	Newest   time.Time // the newest ts among them
}

// Mentions are the entities a window's records mention, counted per
// group and name, in EntityOrder.
type Mentions struct {
	Window
	Entities []EntityCount
}

// WindowReader is a store that answers window questions from the fields
// it holds, without the reader decoding the window's records. The
// embedded store, Neo4j and the offline path are; the web view falls back
// to reading the window itself from one that is not. Both methods answer
// what CandidatesFrom and MentionsFrom answer over the same records.
type WindowReader interface {
	// WindowCandidates returns the queue's candidates of q's window.
	WindowCandidates(ctx context.Context, q WindowQuery) (Candidates, error)
	// WindowMentions returns the entities q's window mentions.
	WindowMentions(ctx context.Context, q WindowQuery) (Mentions, error)
}

// Size is q's Limit, DefaultWindow when it sets none.
func (q WindowQuery) Size() int {
	if q.Limit <= 0 {
		return DefaultWindow
	}
	return q.Limit
}

// WindowFrom is q's window over memories in hand: newest holds each
// group's memories newest first (NewerFirst). It is WindowQuery's meaning
// in one place: the offline path answers with it, and the conformance
// suite holds the stores to it.
func WindowFrom(newest map[string][]Node, q WindowQuery) ([]Node, bool) {
	limit := q.Size()
	var out []Node
	groups := slices.Clone(q.Groups)
	slices.Sort(groups)
	for _, g := range slices.Compact(groups) {
		for _, n := range newest[g] {
			if n.TS.Before(q.Since) {
				break
			}
			out = append(out, n)
		}
	}
	slices.SortFunc(out, NewerFirst)
	if len(out) > limit {
		return out[:limit], true
	}
	return out, false
}

// CandidatesFrom is the queue's candidates among window (NewerFirst).
func CandidatesFrom(window []Node, bounded bool) Candidates {
	c := Candidates{Window: Window{Records: len(window), Bounded: bounded}}
	for i := range window {
		r := &window[i].Record
		c.Add(CandidateFields{UUID: r.UUID, Kind: r.Kind, Tier: r.Tier, Confidence: r.Confidence, Conflicts: len(r.ConflictsWith) > 0})
	}
	return c
}

// CandidateFields are the fields of one record that make it a queue
// candidate, as a store holds them.
type CandidateFields struct {
	UUID             string
	Kind             journal.Kind
	Tier, Confidence string // as declared; "" when not
	Conflicts        bool   // it names at least one conflicts_with target
}

// Add puts the record f describes in the lists it belongs to: the one
// definition of a candidate, for CandidatesFrom and the stores. Records
// are added newest first.
func (c *Candidates) Add(f CandidateFields) {
	if f.Conflicts {
		c.Conflicting = append(c.Conflicting, f.UUID)
	}
	if f.Tier == "learning" && f.Confidence == "low" {
		c.LowLearning = append(c.LowLearning, f.UUID)
	}
	if f.Kind == journal.KindPromotion {
		c.Promotions = append(c.Promotions, f.UUID)
	}
}

// MentionsFrom is the entities window mentions (journal.Record.AllEntities
// of each record), counted per group and name.
func MentionsFrom(window []Node, bounded bool) Mentions {
	var t MentionTally
	for i := range window {
		n := &window[i]
		t.Add(n.Record.GroupID(), n.TS, n.Record.AllEntities())
	}
	return t.Mentions(Window{Records: len(window), Bounded: bounded})
}

// MentionTally counts a window's mentions record by record: what
// MentionsFrom counts, for a store that reads the records' entities
// itself. The zero MentionTally is empty and ready.
type MentionTally struct {
	by map[mentionKey]*EntityCount
}

type mentionKey struct{ group, name string }

// Add counts one record of group, dated ts, that mentions entities
// (its AllEntities: each name once).
func (t *MentionTally) Add(group string, ts time.Time, entities []string) {
	if t.by == nil {
		t.by = map[mentionKey]*EntityCount{}
	}
	for _, e := range entities {
		k := mentionKey{group, e}
		c := t.by[k]
		if c == nil {
			c = &EntityCount{Name: e, Group: group}
			t.by[k] = c
		}
		c.Mentions++
		if ts.After(c.Newest) {
			c.Newest = ts
		}
	}
}

// Mentions is what t counted, over the window w describes.
func (t *MentionTally) Mentions(w Window) Mentions {
	m := Mentions{Window: w}
	for _, c := range t.by {
		m.Entities = append(m.Entities, *c)
	}
	slices.SortFunc(m.Entities, EntityOrder)
	return m
}

// EntityOrder orders entity counts by group, then name.
func EntityOrder(a, b EntityCount) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Name, b.Name))
}
