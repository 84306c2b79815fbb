package importer

import (
	"hash/fnv"
	"sort"
	"strconv"

	"github.com/memsync/memsync/journal"
)

// Place-keyed items: a Basic Memory observation or an OpenClaw entry is
// keyed by its group (the note, the section) and its place in it
// (espresso#3). The place alone would make every entry below an inserted
// one look edited, so a re-import first matches unchanged content: each
// item takes the key of an active record of its group with the same
// text (the one at its own place when there are several). The items left
// over are paired with the active records left over: first in the gap
// after the same matched record, in order, then the rest in order; such a
// pair is an edit, and the new version supersedes the old. An item left
// without a pair is new: it keeps its place's key when no active record
// holds it, else takes a place of the group no import wrote to. An active record
// left without a pair has left the group and is retired (follow.go).
// Inserting one entry anywhere thus writes one record; reordering
// writes none.

// placed is what re-keying needs of a place-keyed item: its key (set to
// the key it is imported under) and a hash of its text.
type placed struct {
	key  string
	text uint64
}

// textHash is the hash of a record's text that pairs unchanged items.
func textHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// placeOf splits a place key group#N into the group and N; ok false for
// any other key.
func placeOf(f follow, key string) (group string, n int, ok bool) {
	g := f.group(key)
	if g == "" || len(key) <= len(g)+1 {
		return "", 0, false
	}
	n, err := strconv.Atoi(key[len(g)+1:])
	if err != nil || n < 1 {
		return "", 0, false
	}
	return g, n, true
}

// activePlace is an active record of a group, one per key.
type activePlace struct {
	key   string
	place int
	texts []uint64
	taken bool
}

// placesByGroup is, per group, the keys of the import's own scope that
// hold an active record (not retired, not a removal), by place; and every
// place key an earlier import wrote.
func placesByGroup(f follow, scope journal.Scope, have *existing) (map[string][]*activePlace, map[string]bool) {
	out, known := map[string][]*activePlace{}, map[string]bool{}
	for k, uuids := range have.byKey {
		g, n, ok := placeOf(f, k)
		if !ok {
			continue
		}
		known[k] = true
		var ap *activePlace
		for _, u := range uuids {
			if have.retired[u] || have.removal[u] || have.scope[u] != scope {
				continue
			}
			if ap == nil {
				ap = &activePlace{key: k, place: n}
			}
			ap.texts = append(ap.texts, have.text[u])
		}
		if ap != nil {
			out[g] = append(out[g], ap)
		}
	}
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i].place < ps[j].place })
	}
	return out, known
}

func (a *activePlace) says(text uint64) bool {
	for _, t := range a.texts {
		if t == text {
			return true
		}
	}
	return false
}

// placeIndex is the active records of every group, made once per import
// (placesByGroup) when the first group is re-keyed.
type placeIndex struct {
	act   map[string][]*activePlace
	known map[string]bool
}

// rekeyPlaces sets the key each place-keyed item of format is imported
// under (items in source order; items without a place key are left as
// they are); idx is made on the first call that needs it.
func rekeyPlaces(format string, scope journal.Scope, items []*placed, have *existing, idx *placeIndex) {
	f, ok := followed[format]
	if !ok {
		return
	}
	groups := map[string][]*placed{}
	var order []string
	for _, it := range items {
		g, _, ok := placeOf(f, it.key)
		if !ok {
			continue
		}
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], it)
	}
	if len(groups) == 0 {
		return
	}
	if idx.act == nil {
		idx.act, idx.known = placesByGroup(f, scope, have)
	}
	for _, g := range order {
		rekeyGroup(g, groups[g], idx.act[g], idx.known)
	}
}

// rekeyGroup re-keys the items of one group against its active records.
func rekeyGroup(group string, items []*placed, act []*activePlace, known map[string]bool) {
	byKey := map[string]*activePlace{}
	for _, a := range act {
		a.taken = false // a group seen before, in another file
		byKey[a.key] = a
	}
	match := make([]*activePlace, len(items)) // the record each item is
	// Unchanged at its own place, then unchanged elsewhere.
	for i, it := range items {
		if a := byKey[it.key]; a != nil && !a.taken && a.says(it.text) {
			a.taken, match[i] = true, a
		}
	}
	byText := map[uint64][]*activePlace{} // in place order
	for _, a := range act {
		for _, t := range a.texts {
			byText[t] = append(byText[t], a)
		}
	}
	for i, it := range items {
		if match[i] != nil {
			continue
		}
		q := byText[it.text]
		for len(q) > 0 && q[0].taken {
			q = q[1:]
		}
		if len(q) > 0 {
			q[0].taken, match[i] = true, q[0]
			q = q[1:]
		}
		byText[it.text] = q
	}
	// The rest paired by place: the gap after the same matched record.
	gapOf := map[*activePlace]string{}
	anchor := ""
	for _, a := range act {
		if a.taken {
			anchor = a.key
			continue
		}
		gapOf[a] = anchor
	}
	left := map[string][]*activePlace{}
	for _, a := range act {
		if !a.taken {
			left[gapOf[a]] = append(left[gapOf[a]], a)
		}
	}
	anchor = ""
	for i := range items {
		if match[i] != nil {
			anchor = match[i].key
			continue
		}
		if gap := left[anchor]; len(gap) > 0 {
			gap[0].taken, match[i] = true, gap[0]
			left[anchor] = gap[1:]
		}
	}
	// Then in order, whatever their gaps: the place an earlier import saw
	// an entry at is not kept, only its key (a deletion and an insertion
	// in one import of a group are taken as an edit).
	var rest []*activePlace
	for _, a := range act {
		if !a.taken {
			rest = append(rest, a)
		}
	}
	for i := range items {
		if match[i] == nil && len(rest) > 0 {
			rest[0].taken, match[i] = true, rest[0]
			rest = rest[1:]
		}
	}
	// Keys held: every active record's, then each item's as it gets one.
	used := map[string]bool{}
	for _, a := range act {
		used[a.key] = true
	}
	for i, it := range items {
		if match[i] != nil {
			it.key = match[i].key
		}
	}
	next := 1
	for i, it := range items {
		if match[i] != nil {
			continue
		}
		if used[it.key] {
			// A place no import has written to: a new entry supersedes
			// nothing.
			for used[group+"#"+strconv.Itoa(next)] || known[group+"#"+strconv.Itoa(next)] {
				next++
			}
			it.key = group + "#" + strconv.Itoa(next)
		}
		used[it.key] = true
	}
}
