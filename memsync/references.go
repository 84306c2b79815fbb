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
}

// CheckReferences reads every journal of layout and reports the references
// that change nothing. It reads the journals three times (what the
// references name, the groups of those memories, then each reference
// against them), so that it holds only the uuids references name, not
// every record.
func CheckReferences(layout Layout) (ReferenceReport, error) {
	var rep ReferenceReport
	agents, files, err := listJournals(layout)
	if err != nil {
		return rep, err
	}
	each := func(fn func(*journal.Record)) error {
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
	named := func(r *journal.Record) []string {
		return slices.Concat(r.Links, r.Supports(), r.ConflictsWith, r.Supersedes)
	}
	groups := map[string]string{} // every uuid a record names -> its group ("" while unseen)
	err = each(func(r *journal.Record) {
		for _, id := range named(r) {
			groups[id] = ""
		}
	})
	if err != nil {
		return rep, err
	}
	err = each(func(r *journal.Record) {
		if g, ok := groups[r.UUID]; ok && g == "" {
			groups[r.UUID] = r.GroupID()
		}
	})
	if err != nil {
		return rep, err
	}
	err = each(func(r *journal.Record) {
		seen := map[string]bool{}
		for _, id := range named(r) {
			if seen[id] || id == r.UUID {
				continue
			}
			seen[id] = true
			switch g := groups[id]; {
			case g == "":
				rep.Dangling++
			case !journal.Sees(r.Agent, g):
				rep.Crossing++
			default:
				continue
			}
			if len(rep.Sample) < SampleSize {
				rep.Sample = append(rep.Sample, r.UUID+" -> "+id)
			}
		}
	})
	return rep, err
}
