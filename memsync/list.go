package memsync

import (
	"context"
	"slices"
	"time"

	"github.com/memsync/memsync/journal"
)

// ListQuery asks for memories by what they are rather than by their words:
// the scope, durable and recent candidates of a working-memory packet.
// Every condition set must hold.
type ListQuery struct {
	Groups  []string       // the group_ids the reader may see; an empty list sees nothing
	Kinds   []journal.Kind // empty: every kind
	Task    string         // non-empty: only records of this task (see ScopeWindow)
	Session string         // non-empty: only records of this session (see ScopeWindow)
	Core    bool           // only core-tier records
	Until   time.Time      // zero: no bound; else only records with ts at or before it
	Limit   int            // at most this many, newest first (ts, then uuid, descending); 0 means 10
}

// ScopeWindow bounds task and session matching: a ListQuery with a Task or
// Session finds them among the newest ScopeWindow records of each group at
// or before Until (of the core tier, when Core is set). Tasks and sessions
// are working context, so their records are recent; the bound keeps a
// lookup cheap without an index that every write would pay for.
const ScopeWindow = 1000

// Lister is a store that lists memories by their fields (ListQuery). Both
// graphs and the offline path are Listers; a reader that is not one gives
// packets lexical candidates only.
type Lister interface {
	List(ctx context.Context, q ListQuery) ([]Node, error)
}

// Matches reports whether n meets every condition of q but the limit: the
// one definition that the offline path and tests apply to records in hand.
func (q ListQuery) Matches(n *Node) bool {
	r := &n.Record
	if !containsString(q.Groups, r.GroupID()) {
		return false
	}
	if len(q.Kinds) > 0 && !containsKind(q.Kinds, r.Kind) {
		return false
	}
	if q.Task != "" && r.Task != q.Task || q.Session != "" && r.Session != q.Session {
		return false
	}
	if q.Core && r.Tier != "core" {
		return false
	}
	return q.Until.IsZero() || !r.TS.After(q.Until)
}

// NewerFirst orders nodes as List returns them: ts, then uuid, descending.
func NewerFirst(a, b Node) int {
	if c := b.TS.Compare(a.TS); c != 0 {
		return c
	}
	switch {
	case a.UUID > b.UUID:
		return -1
	case a.UUID < b.UUID:
		return 1
	}
	return 0
}

// ListFrom answers q from memories in hand: newest holds each group's
// memories newest first (NewerFirst), whatever their ts (those after
// q.Until are passed over). Per group of q it takes those at or before
// Until (of the core tier when q.Core), matches a task or session among
// the newest ScopeWindow of them, then merges the groups newest first and
// cuts to the limit (10 when q.Limit is 0). It is ListQuery's meaning in one place: the offline
// path lists with it, and the conformance suite holds the graphs' List
// to it.
func ListFrom(newest map[string][]Node, q ListQuery) []Node {
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	scoped := q.Task != "" || q.Session != ""
	var out []Node
	seen := map[string]bool{}
	for _, g := range q.Groups {
		if seen[g] {
			continue
		}
		seen[g] = true
		window := 0
		for i := range newest[g] {
			n := &newest[g][i]
			if !q.Until.IsZero() && n.TS.After(q.Until) || q.Core && n.Record.Tier != "core" {
				continue
			}
			if scoped && window >= ScopeWindow {
				break
			}
			window++
			if q.Matches(n) {
				out = append(out, *n)
			}
		}
	}
	slices.SortFunc(out, NewerFirst)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsKind(list []journal.Kind, k journal.Kind) bool {
	for _, x := range list {
		if x == k {
			return true
		}
	}
	return false
}
