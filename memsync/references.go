package memsync

import (
	"context"

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
// nil) every reference that changes nothing, in journal order. The targets
// are checked in parts (0: as many as the journals' size asks for, as
// verify's) from one read of the journals (VerifyAll without a graph).
func CheckReferencesEach(layout Layout, parts int, each func(field, blocked, source, target string)) (ReferenceReport, error) {
	_, rep, err := VerifyAll(context.Background(), layout.Root, nil, VerifyOptions{Parts: parts, References: true, EachReference: each})
	return rep, err
}
