package journal

import "encoding/json"

// The SPEC §3 fields that carry importance signals. The parser keeps them
// verbatim among the unknown fields (Extra), so adding readers for them
// changes no record's canonical form or hash; these accessors read them.
const (
	FieldSupports = "supports"
	FieldResult   = "result"
	FieldFeedback = "feedback"
	// FieldConsolidation marks a record the consolidation cycle (SPEC §10)
	// wrote and names its action (see the Consolidation* values).
	FieldConsolidation = "consolidation"
	// FieldImportedFrom marks a record `memsync import` wrote and names
	// the format it came from. What such a record says of other memories
	// is the source's word, not feedback a person gave through memsync.
	FieldImportedFrom = "imported_from"
)

// Consolidation actions (the consolidation field of memsync's own records).
const (
	ConsolidationTheme    = "theme"        // a summary of a recurring topic
	ConsolidationCore     = "propose-core" // a procedure proposed for the core tier
	ConsolidationPrune    = "prune"        // learning records archived (duplicates, superseded, decayed)
	ConsolidationVerify   = "verify"       // a core memory contradicted by a newer record, for review
	ConsolidationFollowUp = "follow-up"    // a decision still waiting for its outcome
)

// Outcome results (the result field of an outcome record).
const (
	ResultSuccess = "success"
	ResultFailure = "failure"
	ResultMixed   = "mixed"
)

// Results lists the outcome results in a stable order.
var Results = []string{ResultSuccess, ResultFailure, ResultMixed}

// Feedback values (the feedback field of a feedback record).
const (
	FeedbackImportant   = "important"
	FeedbackWrong       = "wrong"
	FeedbackVerified    = "verified"
	FeedbackUnimportant = "unimportant"
)

// Feedbacks lists the feedback values in a stable order.
var Feedbacks = []string{FeedbackImportant, FeedbackWrong, FeedbackVerified, FeedbackUnimportant}

// Supports returns the uuids r validates (its supports field): the valid
// uuids other than r's own, in the order written; anything else there is
// kept in the record but names no memory.
func (r *Record) Supports() []string {
	raw, ok := r.Extra[FieldSupports]
	if !ok {
		return nil
	}
	var ids []string
	if json.Unmarshal(raw, &ids) != nil {
		return nil
	}
	out := ids[:0]
	for _, id := range ids {
		if ValidUUID(id) && id != r.UUID {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Result returns r's result field (success, failure, mixed), "" when
// absent or not a string.
func (r *Record) Result() string { return r.extraString(FieldResult) }

// Feedback returns r's feedback field (important, wrong, verified,
// unimportant), "" when absent or not a string.
func (r *Record) Feedback() string { return r.extraString(FieldFeedback) }

// Consolidation returns r's consolidation field (one of the
// Consolidation* actions), "" when absent or not a string.
func (r *Record) Consolidation() string { return r.extraString(FieldConsolidation) }

// ImportedFrom returns the format r was imported from (its imported_from
// field), "" for a record not written by `memsync import`.
func (r *Record) ImportedFrom() string { return r.extraString(FieldImportedFrom) }

func (r *Record) extraString(field string) string {
	raw, ok := r.Extra[field]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
