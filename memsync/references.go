package memsync

import (
	"slices"

	"github.com/memsync/memsync/journal"
)

// ReferenceReport counts the references that change nothing (SPEC §7,
// references cross no privacy line): a record's links, supports,
// conflicts_with or supersedes naming a uuid that no journal holds
// (dangling), or a memory its writer cannot see (crossing: another agent's
// private memory). No agent's read tells either apart from the other; this
// report is for the person who owns the repository (memsync verify).
type ReferenceReport struct {
	Dangling int `json:"dangling_references"`
	Crossing int `json:"crossing_references"`
	// Sample names up to SampleSize of them as "source -> target".
	Sample []string `json:"blocked_references,omitempty"`
	// ByKind counts them by the field that names the target and why it
	// changes nothing, each with a few examples.
	ByKind []ReferenceKind `json:"blocked_by_kind,omitempty"`
}

// ReferenceKind is one kind of reference that changes nothing.
type ReferenceKind struct {
	Field   string   `json:"field"`   // links, supports, conflicts_with or supersedes
	Blocked string   `json:"blocked"` // BlockedNoRecord or BlockedNotVisible
	Count   int      `json:"count"`
	Sample  []string `json:"sample"` // at most KindSampleSize, "source -> target"
}

// Why a reference changes nothing (ReferenceKind.Blocked).
const (
	BlockedNoRecord   = "to no record"
	BlockedNotVisible = "to a memory the writer cannot see"
)

// KindSampleSize bounds the examples of each ReferenceKind.
const KindSampleSize = 3

// referenceFields are the fields of a record that name other memories, in
// the order a target named twice by one record is counted once.
var referenceFields = []struct {
	name  string
	names func(*journal.Record) []string
}{
	{"links", func(r *journal.Record) []string { return r.Links }},
	{"supports", func(r *journal.Record) []string { return r.Supports() }},
	{"conflicts_with", func(r *journal.Record) []string { return r.ConflictsWith }},
	{"supersedes", func(r *journal.Record) []string { return r.Supersedes }},
}

// CheckReferences reads every journal of layout and reports the references
// that change nothing.
func CheckReferences(layout Layout) (ReferenceReport, error) {
	return CheckReferencesEach(layout, 0, nil)
}

// CheckReferencesEach is CheckReferences telling each (when each is not
// nil) every reference that changes nothing, as it is found. The targets
// are checked in parts (0: as many as the journals' size asks for, as
// verify's): a read of the journals gathers the groups of a part's
// records while it checks every reference to the part before, so it holds
// two parts' uuids, not every record's, in parts+1 reads.
func CheckReferencesEach(layout Layout, parts int, each func(field, blocked, source, target string)) (ReferenceReport, error) {
	var rep ReferenceReport
	agents, files, err := listJournals(layout)
	if err != nil {
		return rep, err
	}
	if parts <= 0 {
		parts = guessParts(files)
	}
	eachRecord := func(fn func(*journal.Record)) error {
		for _, f := range files {
			err := eachLine(layout, f.path, func(l journal.Line) error {
				if l.Err == nil && journal.CheckOwner(&l.Record, agents[f.agent]) == nil {
					fn(&l.Record)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	kinds := map[[2]string]*ReferenceKind{}
	var groupNames []string
	groupIndex := map[string]uint32{}
	// Each read of the journals checks the references to part i-1 (whose
	// groups the previous read gathered) and gathers the groups of part i:
	// parts+1 reads, two parts' uuids held at a time.
	var prev map[uint64]uint32
	var prevPart partition
	for i := 0; i <= parts; i++ {
		pt := partition{i, parts}
		var groups map[uint64]uint32 // the part's uuids -> their first record's group
		if i < parts {
			groups = map[uint64]uint32{}
		}
		err := eachRecord(func(r *journal.Record) {
			if groups != nil {
				if k := digest(r.UUID); pt.holds(k) {
					if _, ok := groups[k]; !ok {
						g := r.GroupID()
						gi, ok := groupIndex[g]
						if !ok {
							gi = uint32(len(groupNames))
							groupIndex[g] = gi
							groupNames = append(groupNames, g)
						}
						groups[k] = gi
					}
				}
			}
			if prev == nil {
				return
			}
			var seen []string
			for _, f := range referenceFields {
				for _, id := range f.names(r) {
					k := digest(id)
					if id == r.UUID || !prevPart.holds(k) || slices.Contains(seen, id) {
						continue
					}
					seen = append(seen, id)
					blocked := ""
					switch gi, ok := prev[k]; {
					case !ok:
						blocked = BlockedNoRecord
						rep.Dangling++
					case !journal.Sees(r.Agent, groupNames[gi]):
						blocked = BlockedNotVisible
						rep.Crossing++
					default:
						continue
					}
					ref := r.UUID + " -> " + id
					if len(rep.Sample) < SampleSize {
						rep.Sample = append(rep.Sample, ref)
					}
					kk := kinds[[2]string{f.name, blocked}]
					if kk == nil {
						kk = &ReferenceKind{Field: f.name, Blocked: blocked}
						kinds[[2]string{f.name, blocked}] = kk
					}
					kk.Count++
					if len(kk.Sample) < KindSampleSize {
						kk.Sample = append(kk.Sample, ref)
					}
					if each != nil {
						each(f.name, blocked, r.UUID, id)
					}
				}
			}
		})
		if err != nil {
			return rep, err
		}
		prev, prevPart = groups, pt
	}
	for _, f := range referenceFields {
		for _, b := range []string{BlockedNoRecord, BlockedNotVisible} {
			if k := kinds[[2]string{f.name, b}]; k != nil {
				rep.ByKind = append(rep.ByKind, *k)
			}
		}
	}
	return rep, nil
}
