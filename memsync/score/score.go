// Package score holds SPEC §7's one rule for earned importance, confidence,
// decay and status: Evaluate, a pure function of a memory, the events that
// point at it and a clock. Every reader (the embedded store, Neo4j, the
// offline path, snapshots, explain, ranking) calls it; backends only store
// the signals (edges and the records they come from), never a rule.
//
// # The rule
//
// Importance starts at 0.5 and replays the memory's events in time order
// (ts, then uuid); events after the clock are left out, so a read --as-of T
// answers as the memory stood at T.
//
//   - a later record of the same agent links to or supports it: +0.10;
//     of another agent: +0.15;
//   - an outcome with result success links to it: +0.20 when it is a
//     decision (a decision that paid off), +0.15 otherwise (a prediction
//     verified); an outcome with another result counts as a reference;
//   - feedback verified: +0.15; important: set to 0.95; unimportant: −0.30;
//     wrong: set to 0 and archived at once. The latest flag decides whether
//     a memory stands flagged wrong (a later flag wins);
//   - a newer record names it in conflicts_with: −0.20 (the newer one is
//     not penalised: only a source newer than the memory counts);
//   - every full 14 days without a reference (links, supports, an outcome,
//     feedback important or verified) since the last one, or since ts:
//     −0.10, or −0.20 while importance is below 0.2.
//
// Importance is clamped to [0, 1] after every step. Core-tier memories
// never decay.
//
// Durable memories never fade out (SPEC §7): a core memory, or one whose
// effective max_age is permanent (preferences and procedures by default,
// anything declared so), may lose importance but is never archived for
// its age, its importance or a consolidation prune; only a wrong flag
// (archived, core or not) or a superseding record retires it.
//
// max_age is the declared one, else by kind (Defaults); importance ≥ 0.8
// doubles it, ≥ 0.9 triples it. Status: superseded once a superseding
// record's ts is at or before the clock; archived when flagged wrong; for
// a memory that is not durable, archived also when below
// 0.2, past max_age below 0.4, or a low-confidence learning record that
// nothing referenced within 7 days (§9), or pruned by the consolidation
// cycle (§10) with no reference since; review when past max_age with
// importance 0.4–0.7, or a core memory the consolidation cycle found
// contradicted by a newer record, until verified or flagged important
// again; active otherwise. Records the consolidation cycle writes (their
// consolidation field set) never vouch for what they name.
//
// Confidence starts from the source type (experienced 0.70, observed 0.65,
// told 0.60 — also when no source is given —, read 0.55, inferred 0.45),
// nudged ±0.10 by the declared hint; corroboration (each supports, each
// reference from another agent) adds 0.05, at most 0.20 in all;
// verification and successful outcomes add 0.15 each, at most 0.30; a
// failed outcome takes 0.15, each newer contradiction 0.15; age takes 0.05
// per full 90 days since the last reference, at most 0.20 (not for core);
// flagged wrong it is 0. It is clamped to [0, 1].
package score

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
)

// Relation is how an event's record names the memory.
type Relation string

// The relations that carry signals (SPEC §4's edges into a memory).
const (
	Links         Relation = "LINKS_TO"
	Supports      Relation = "SUPPORTS"
	ConflictsWith Relation = "CONFLICTS_WITH"
)

// Status is where a memory stands (SPEC §7).
type Status string

// The four statuses.
const (
	Active     Status = "active"
	Review     Status = "review"
	Archived   Status = "archived"
	Superseded Status = "superseded"
)

// Hidden reports whether what is offered unasked (packets, hooks,
// snapshots) leaves a memory of this status out. Search does not ask
// this: decay changes rank, never findability (see Result.Retired).
func (s Status) Hidden() bool { return s == Archived || s == Superseded }

// Retired reports whether default search leaves the memory out: it is
// superseded, or the latest flag says wrong. An archived memory that is
// neither is still found (SPEC §7: decay changes rank, never
// findability); search --all shows retired memories too.
func (r Result) Retired() bool { return r.Status == Superseded || r.FlaggedWrong }

// Durable reports whether the memory never fades out: a core memory, or
// one whose effective max_age is permanent (preferences and procedures
// by default, anything declared so). A durable memory may lose importance
// to decay but is never archived for its age or its importance; only a
// wrong flag or a superseding record retires it.
func (r Result) Durable(m Memory) bool { return m.Tier == "core" || r.MaxAge == Permanent }

// Day is 24 hours; max_age and decay count in whole days of UTC time.
const Day = 24 * time.Hour

// Permanent is the max_age of memories that never age out.
const Permanent time.Duration = math.MaxInt64

// Tuning of the rule (SPEC §7's table).
const (
	Start            = 0.5
	SameAgentRef     = 0.10
	OtherAgentRef    = 0.15
	DecisionSuccess  = 0.20
	Verified         = 0.15
	FlagImportant    = 0.95
	FlagUnimportant  = -0.30
	Contradicted     = -0.20
	DecayPeriod      = 14 * Day
	DecayStep        = -0.10
	FastDecayBelow   = 0.2
	ArchiveBelow     = 0.2
	PastAgeArchive   = 0.4
	PastAgeReviewMax = 0.7
	DoubleAgeAt      = 0.8
	TripleAgeAt      = 0.9
	LowLearningAge   = 7 * Day
)

// Memory is what the rule reads of the memory itself.
type Memory struct {
	UUID       string
	TS         time.Time
	Agent      string
	Group      string // group_id: the events whose writer cannot see it count for nothing
	Kind       journal.Kind
	Tier       string // core, working, learning or ""
	MaxAge     string // declared max_age or ""
	Hint       string // declared confidence: low, medium, high or ""
	SourceType string // source.type or ""
	// SupersededAt is the ts of the earliest record superseding it (zero if
	// none); it counts only once the clock reaches it.
	SupersededAt time.Time
	ReplacedBy   string
}

// FromRecord is the Memory of a journal record; supersededAt and
// replacedBy come from the graph (or the journals) as SPEC §4 defines them.
func FromRecord(r *journal.Record, supersededAt time.Time, replacedBy string) Memory {
	m := Memory{
		UUID: r.UUID, TS: r.TS, Agent: r.Agent, Group: r.GroupID(), Kind: r.Kind, Tier: r.Tier, MaxAge: r.MaxAge,
		Hint: r.Confidence, SupersededAt: supersededAt, ReplacedBy: replacedBy,
	}
	if r.Source != nil {
		m.SourceType = r.Source.Type
	}
	return m
}

// Event is one record that names the memory: a signal.
type Event struct {
	UUID     string // the record that names the memory
	TS       time.Time
	Agent    string
	Kind     journal.Kind
	Relation Relation
	Result   string // its result, on an outcome
	Feedback string // its feedback value, on a feedback record
	// Consolidation is the action of a record the consolidation cycle
	// wrote (journal.Consolidation*), "" for every other record.
	Consolidation string
	// Visible is false when the reader may not see the record: it still
	// counts, but explain names it without its uuid, author or time.
	Visible bool
}

// counts reports whether event e moves memory m at all: it is not m
// itself, and its writer sees m (journal.Sees: SPEC §7, references cross
// no privacy line).
func counts(m Memory, e Event) bool {
	return e.UUID != m.UUID && journal.Sees(e.Agent, m.Group)
}

// EventFrom is the event of record src naming target through rel. A
// feedback record that `memsync import` wrote (older imports turned a
// source's "verified" into one) carries no feedback value: only a flag a
// person gave through memsync (the flag command, the web view, the MCP
// flag tool) moves importance or earns a promotion.
func EventFrom(rel Relation, src *journal.Record) Event {
	e := Event{
		UUID: src.UUID, TS: src.TS, Agent: src.Agent, Kind: src.Kind, Relation: rel,
		Result: src.Result(), Feedback: src.Feedback(), Consolidation: src.Consolidation(), Visible: true,
	}
	if src.Kind == journal.KindFeedback && src.ImportedFrom() != "" {
		e.Feedback = ""
	}
	return e
}

// Effect is what one event did, for explain.
type Effect struct {
	Event
	Importance float64 // importance right after it
	Delta      float64 // the change it made, or with Set the value it set
	Set        bool    // it set importance to Delta rather than moving it
	Days       int     // a decay: how long the memory went unreferenced
	Why        string  // "referenced by bob" (empty for a decay)
}

// Text is the effect as explain prints it: "+0.10 referenced by bob".
// It is formatted on demand: every score computes effects, few are shown.
func (f Effect) Text() string {
	switch {
	case f.Set:
		return fmt.Sprintf("=%.2f %s", f.Delta, f.Why)
	case f.Kind == "decay" && f.Why == "":
		return fmt.Sprintf("%+.2f not referenced for %d days", f.Delta, f.Days)
	}
	return fmt.Sprintf("%+.2f %s", f.Delta, f.Why)
}

// Result is what the rule says of a memory at a clock.
type Result struct {
	Importance  float64
	Confidence  float64
	Status      Status
	MaxAge      time.Duration // effective (extended) max_age; Permanent when none
	MaxAgeLabel string        // "90d", "180d (90d doubled)", "permanent"
	Basis       []string      // confidence, one short reason each
	Effects     []Effect      // importance, in the order applied (decay included)
	// LastReference is the latest reference at or before the clock, or the
	// memory's ts: freshness counts from it.
	LastReference    time.Time
	Verified         bool // verified by feedback or a successful outcome
	FlaggedWrong     bool // the latest flag says wrong
	FlaggedImportant bool // the latest flag says important
	Referenced       bool // any reference at all at the clock
	// Pruned is true when the consolidation cycle archived the memory
	// (a duplicate, superseded or decayed learning record) and no
	// reference came after it.
	Pruned bool
	// ToReview is true when the consolidation cycle listed the (core)
	// memory as contradicted by a newer record and no verification or
	// important flag came after it.
	ToReview bool
	// Outcome is true when an outcome record (any result) links to the
	// memory at the clock.
	Outcome bool
	// StatusWhy says which rule gave Status ("" for active): "flagged
	// wrong", "superseded by a newer record at ...", "past max_age ...";
	// it names no record, so any reader may be shown it.
	StatusWhy string
}

// Defaults is the max_age of each kind when a record declares none.
func Defaults(k journal.Kind) string {
	switch k {
	case journal.KindObservation, journal.KindTask, journal.KindFeedback:
		return "30d"
	case journal.KindPreference, journal.KindProcedure:
		return "permanent"
	default:
		return "90d"
	}
}

// parseAge reads a max_age value; false for an unknown one.
func parseAge(s string) (time.Duration, bool) {
	if s == "permanent" {
		return Permanent, true
	}
	days, ok := strings.CutSuffix(s, "d")
	if !ok {
		return 0, false
	}
	// strconv, not fmt.Sscanf: every memory's score parses its max_age,
	// and a snapshot of a large store scores thousands of them.
	n, err := strconv.Atoi(days)
	if err != nil || n <= 0 {
		return 0, false
	}
	return time.Duration(n) * Day, true
}

// newer reports whether event e comes after memory m (ts, then uuid).
func newer(e Event, m Memory) bool {
	return e.TS.After(m.TS) || e.TS.Equal(m.TS) && e.UUID > m.UUID
}

// Evaluate is SPEC §7 for memory m, its events and the clock asOf. It
// does not change events. The same inputs give the same Result, whatever
// the order of events.
func Evaluate(m Memory, events []Event, asOf time.Time) Result {
	evs := make([]Event, 0, len(events))
	for _, e := range events {
		if !counts(m, e) || e.TS.After(asOf) {
			continue
		}
		evs = append(evs, e)
	}
	slices.SortFunc(evs, func(a, b Event) int {
		if c := a.TS.Compare(b.TS); c != 0 {
			return c
		}
		if c := strings.Compare(a.UUID, b.UUID); c != 0 {
			return c
		}
		return relationOrder(a.Relation) - relationOrder(b.Relation)
	})
	// One record naming the memory through links and supports is one
	// reference (kept as supports, the stronger), but a conflict is a
	// separate signal.
	evs = slices.CompactFunc(evs, func(a, b Event) bool {
		return a.UUID == b.UUID && a.Relation != ConflictsWith && b.Relation != ConflictsWith
	})

	core := m.Tier == "core"
	var r Result
	imp := Start
	last := m.TS        // the last reference, or ts
	lastVisible := true // whether the reader may see the last reference (decay counts from its ts)
	periods := 0        // decay periods already applied since last
	var flag string
	corroboration, verification, penalty := 0.0, 0.0, 0.0
	var basis []string
	add := func(e Event, delta float64, text string) {
		imp = clamp(imp + delta)
		r.Effects = append(r.Effects, Effect{Event: e, Importance: imp, Delta: delta, Why: text})
	}
	set := func(e Event, v float64, text string) {
		imp = v
		r.Effects = append(r.Effects, Effect{Event: e, Importance: imp, Delta: v, Set: true, Why: text})
	}
	decayTo := func(t time.Time) {
		if core || !t.After(last) {
			return
		}
		n := int(t.Sub(last) / DecayPeriod)
		for ; periods < n; periods++ {
			step := DecayStep
			if imp < FastDecayBelow {
				step *= 2
			}
			at := last.Add(time.Duration(periods+1) * DecayPeriod)
			before := imp
			imp = clamp(imp + step)
			if before == 0 {
				continue // nothing left to lose; not worth a line
			}
			r.Effects = append(r.Effects, Effect{
				Event:      Event{TS: at, Kind: "decay", Visible: lastVisible},
				Importance: imp,
				Delta:      imp - before,
				Days:       (periods + 1) * int(DecayPeriod/Day),
			})
		}
	}
	reference := func(e Event) {
		last, periods, lastVisible = e.TS, 0, e.Visible
		r.Referenced = true
	}
	by := func(e Event) string {
		if !e.Visible {
			return "by a record this reader may not see"
		}
		if e.Agent == m.Agent {
			return "by " + e.Agent + " (same agent)"
		}
		return "by " + e.Agent
	}
	var prunedAt, reviewAt time.Time
	for _, e := range evs {
		decayTo(e.TS)
		if e.Kind == journal.KindOutcome && e.Relation != ConflictsWith {
			r.Outcome = true
		}
		switch {
		case e.Consolidation != "":
			// The consolidation cycle's records never vouch; a prune
			// archives, a verify puts a core memory up for review.
			switch e.Consolidation {
			case journal.ConsolidationPrune:
				if prunedAt.IsZero() {
					prunedAt = e.TS
				}
				r.Effects = append(r.Effects, Effect{Event: e, Importance: imp, Why: "archived by the consolidation cycle (a later reference brings it back)"})
			case journal.ConsolidationVerify:
				if reviewAt.IsZero() {
					reviewAt = e.TS
				}
				r.Effects = append(r.Effects, Effect{Event: e, Importance: imp, Why: "contradicted by a newer record: listed for review by the consolidation cycle"})
			}
			continue
		case e.Kind == journal.KindPromotion || e.Kind == journal.KindCompaction:
			continue // memsync's own records restate or absorb; they do not vouch
		case e.Relation == ConflictsWith:
			if !newer(e, m) {
				continue // an older record does not contradict a newer one
			}
			add(e, Contradicted, "contradicted by a newer record "+by(e))
			penalty += 0.15
			basis = append(basis, fmt.Sprintf("-0.15 contradicted by a newer record %s", by(e)))
		case e.Kind == journal.KindFeedback:
			switch e.Feedback {
			case journal.FeedbackImportant:
				set(e, FlagImportant, "flagged important")
				reference(e)
			case journal.FeedbackWrong:
				set(e, 0, "flagged wrong")
			case journal.FeedbackVerified:
				add(e, Verified, "verified")
				reference(e)
				verification += 0.15
				basis = append(basis, "+0.15 verified by feedback")
			case journal.FeedbackUnimportant:
				add(e, FlagUnimportant, "flagged unimportant")
			default:
				continue // a feedback record without a known value signals nothing
			}
			flag = e.Feedback
		case e.Kind == journal.KindOutcome && e.Result == journal.ResultSuccess:
			if m.Kind == journal.KindDecision {
				add(e, DecisionSuccess, "a successful outcome "+by(e))
			} else {
				add(e, Verified, "verified by a successful outcome "+by(e))
			}
			reference(e)
			verification += 0.15
			basis = append(basis, "+0.15 successful outcome "+e.UUIDOrPrivate())
		default:
			if !newer(e, m) {
				continue // only a later record references
			}
			if e.Kind == journal.KindOutcome && e.Result == journal.ResultFailure {
				penalty += 0.15
				basis = append(basis, "-0.15 failed outcome "+e.UUIDOrPrivate())
			}
			verb := "referenced "
			if e.Relation == Supports {
				verb = "supported "
			}
			if e.Agent == m.Agent {
				add(e, SameAgentRef, verb+by(e))
			} else {
				add(e, OtherAgentRef, verb+by(e))
			}
			if e.Relation == Supports || e.Agent != m.Agent {
				corroboration += 0.05
				basis = append(basis, "+0.05 corroborated: "+verb+by(e)+visibleUUID(e))
			}
			reference(e)
		}
	}
	decayTo(asOf)
	r.Importance = round(imp)
	r.LastReference = last
	r.Pruned = !prunedAt.IsZero() && last.Before(prunedAt)
	r.ToReview = !reviewAt.IsZero() && !reconfirmedAfter(evs, reviewAt)
	r.FlaggedWrong = flag == journal.FeedbackWrong
	r.FlaggedImportant = flag == journal.FeedbackImportant
	r.Verified = verification > 0

	// max_age and its extension.
	label := m.MaxAge
	if _, ok := parseAge(label); !ok {
		label = Defaults(m.Kind)
	}
	age, _ := parseAge(label)
	r.MaxAge, r.MaxAgeLabel = age, label
	if age != Permanent {
		switch {
		case r.Importance >= TripleAgeAt:
			r.MaxAge = 3 * age
			r.MaxAgeLabel = fmt.Sprintf("%dd (%s tripled: importance >= %.1f)", 3*int(age/Day), label, TripleAgeAt)
		case r.Importance >= DoubleAgeAt:
			r.MaxAge = 2 * age
			r.MaxAgeLabel = fmt.Sprintf("%dd (%s doubled: importance >= %.1f)", 2*int(age/Day), label, DoubleAgeAt)
		}
	}

	r.Confidence, r.Basis = confidence(m, asOf, last, r.FlaggedWrong, corroboration, verification, penalty, basis)
	r.Status, r.StatusWhy = statusWhy(m, r, asOf)
	return r
}

// reconfirmedAfter reports whether a verification or an important flag
// came at or after t: a human looked at the memory again.
func reconfirmedAfter(evs []Event, t time.Time) bool {
	for _, e := range evs {
		if e.TS.Before(t) || e.Kind != journal.KindFeedback || e.Consolidation != "" {
			continue
		}
		if e.Feedback == journal.FeedbackVerified || e.Feedback == journal.FeedbackImportant {
			return true
		}
	}
	return false
}

// relationOrder sorts the relations of one record: a conflict first, then
// supports before links.
func relationOrder(r Relation) int {
	switch r {
	case ConflictsWith:
		return 0
	case Supports:
		return 1
	}
	return 2
}

// FollowUpAfter is how long a decision may wait for its outcome before it
// is followed up (SPEC §10's outcome check).
const FollowUpAfter = 7 * Day

// AwaitingOutcome reports whether m is a decision still waiting for its
// outcome at asOf: older than FollowUpAfter, no outcome record (any
// result) links to it at asOf, and not hidden (superseded or archived).
// Snapshots and the consolidation cycle ask it with the events Evaluate
// reads; packets and the web view, which scored the memory already, ask
// AwaitingOutcomeOf. The two are one rule.
func AwaitingOutcome(m Memory, events []Event, asOf time.Time) bool {
	if !followUpDue(m.Kind, m.TS, asOf) {
		return false // spares the Evaluate
	}
	return AwaitingOutcomeOf(m.Kind, m.TS, Evaluate(m, events, asOf), asOf)
}

// AwaitingOutcomeOf is AwaitingOutcome for a memory of kind made at ts of
// which Evaluate said r at asOf.
func AwaitingOutcomeOf(kind journal.Kind, ts time.Time, r Result, asOf time.Time) bool {
	return followUpDue(kind, ts, asOf) && !r.Outcome && !r.Status.Hidden()
}

// followUpDue reports whether a memory of kind made at ts is a decision old
// enough at asOf to be asked about its outcome.
func followUpDue(kind journal.Kind, ts time.Time, asOf time.Time) bool {
	return kind == journal.KindDecision && asOf.Sub(ts) >= FollowUpAfter
}

// FollowUpQuestion is the question an open follow-up asks of decision
// text made at ts: "You decided X on DATE. How did it turn out?".
func FollowUpQuestion(text string, ts time.Time) string {
	text = strings.TrimRight(strings.TrimSpace(text), ".!")
	return fmt.Sprintf("You decided %s on %s. How did it turn out?", text, ts.UTC().Format("2006-01-02"))
}

// Promotion thresholds (SPEC §7).
const (
	PromoteAt         = 0.8
	PromoteVerifiedAt = 0.6
)

// Promotable reports whether r earns a private memory its promotion:
// importance ≥ 0.8, or verified with importance ≥ 0.6, or the latest flag
// says important.
func Promotable(r Result) bool {
	return r.Importance >= PromoteAt || r.Verified && r.Importance >= PromoteVerifiedAt || r.FlaggedImportant
}

// PromotedAt is the ts of the first event after which m was promotable
// (Evaluate at that instant), if any event up to asOf made it so. It is a
// function of the events, not of when it is asked, so every process that
// asks derives the same promotion.
func PromotedAt(m Memory, events []Event, asOf time.Time) (time.Time, bool) {
	ts := make([]time.Time, 0, len(events))
	for _, e := range events {
		if counts(m, e) && !e.TS.After(asOf) && !e.TS.Before(m.TS) {
			ts = append(ts, e.TS)
		}
	}
	slices.SortFunc(ts, time.Time.Compare)
	ts = slices.Compact(ts)
	for _, t := range ts {
		if Promotable(Evaluate(m, events, t)) {
			return t, true
		}
	}
	return time.Time{}, false
}

// visibleUUID is " " and the event's uuid, or "" when the reader may not
// see it (by already says so).
func visibleUUID(e Event) string {
	if e.Visible {
		return " " + e.UUID
	}
	return ""
}

// Named is the event's uuid and time as its reader may be told them: both
// zero for a record the reader may not see (a decay counted from it would
// give its time away too). explain and the web view both ask it.
func (e Event) Named() (string, time.Time) {
	if !e.Visible {
		return "", time.Time{}
	}
	return e.UUID, e.TS
}

// UUIDOrPrivate is the event's uuid, or a note that the reader may not see it.
func (e Event) UUIDOrPrivate() string {
	if e.Visible {
		return e.UUID
	}
	return "(a record this reader may not see)"
}

func confidence(m Memory, asOf, last time.Time, wrong bool, corroboration, verification, penalty float64, events []string) (float64, []string) {
	var basis []string
	c := 0.6
	switch m.SourceType {
	case "experienced":
		c = 0.70
	case "observed":
		c = 0.65
	case "told":
		c = 0.60
	case "read":
		c = 0.55
	case "inferred":
		c = 0.45
	}
	if m.SourceType == "" {
		basis = append(basis, fmt.Sprintf("%.2f no source given (taken as told)", c))
	} else {
		basis = append(basis, fmt.Sprintf("%.2f source %s", c, m.SourceType))
	}
	switch m.Hint {
	case "high":
		c += 0.10
		basis = append(basis, "+0.10 declared high")
	case "low":
		c -= 0.10
		basis = append(basis, "-0.10 declared low")
	case "medium":
		basis = append(basis, "+0.00 declared medium")
	}
	basis = append(basis, events...)
	c += math.Min(corroboration, 0.20) + math.Min(verification, 0.30) - penalty
	if corroboration > 0.20 {
		basis = append(basis, "corroboration capped at +0.20")
	}
	if verification > 0.30 {
		basis = append(basis, "verification capped at +0.30")
	}
	if m.Tier != "core" && asOf.After(last) {
		if n := int(asOf.Sub(last) / (90 * Day)); n > 0 {
			d := math.Min(0.05*float64(n), 0.20)
			c -= d
			basis = append(basis, fmt.Sprintf("-%.2f %d days since its last reference", d, int(asOf.Sub(last)/Day)))
		}
	}
	if wrong {
		basis = append(basis, "=0.00 flagged wrong")
		return 0, basis
	}
	return round(clamp(c)), basis
}

// statusWhy is a memory's status and, for one other than active, why:
// the one place that says which rule gave it (Result.StatusWhy).
func statusWhy(m Memory, r Result, asOf time.Time) (Status, string) {
	if !m.SupersededAt.IsZero() && !m.SupersededAt.After(asOf) {
		return Superseded, "superseded by a newer record at " + m.SupersededAt.UTC().Format(time.RFC3339)
	}
	if r.FlaggedWrong {
		return Archived, "flagged wrong" // retired, core or not: a person said it is wrong
	}
	if r.Durable(m) {
		// Never archived for age or importance (nor pruned as a
		// repeat): a durable memory stays offered until a wrong flag or
		// a superseding record retires it.
		if r.ToReview {
			return Review, "core memory contradicted by a newer record (the consolidation cycle listed it for review)"
		}
		return Active, ""
	}
	if r.Pruned {
		return Archived, "pruned by the consolidation cycle, with no reference since"
	}
	if r.Importance < ArchiveBelow {
		return Archived, fmt.Sprintf("importance %.2f below %.2f", r.Importance, ArchiveBelow)
	}
	age := asOf.Sub(m.TS)
	if m.Tier == "learning" && m.Hint == "low" && !r.Referenced && age > LowLearningAge {
		return Archived, fmt.Sprintf("low-confidence learning record nothing referenced within %d days", LowLearningAge/Day)
	}
	if r.MaxAge != Permanent && age > r.MaxAge {
		switch {
		case r.Importance < PastAgeArchive:
			return Archived, fmt.Sprintf("past max_age %s with importance %.2f below %.2f", r.MaxAgeLabel, r.Importance, PastAgeArchive)
		case r.Importance <= PastAgeReviewMax:
			return Review, fmt.Sprintf("past max_age %s with importance %.2f (%.2f to %.2f is reviewed)", r.MaxAgeLabel, r.Importance, PastAgeArchive, PastAgeReviewMax)
		}
	}
	return Active, ""
}

func clamp(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// round keeps four decimals, so that sums of steps compare and print
// the same on every path (0.1+0.2 is not 0.3 in floating point).
func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// Freshness is the ranking factor for recency: 1 at the last reference,
// halving every 90 days towards a floor of 0.5, so recency nudges but never
// buries a memory that proved itself. Core memories are always fresh.
func Freshness(m Memory, r Result, asOf time.Time) float64 {
	if m.Tier == "core" || !asOf.After(r.LastReference) {
		return 1
	}
	days := asOf.Sub(r.LastReference).Hours() / 24
	return round(0.5 + 0.5*math.Exp2(-days/90))
}

// The ranking factors' ranges (SPEC §7 Ranking): each is at most 1 and at
// least its floor, so that together they reorder memories of similar
// relevance and never bury a clearly better match: the product of the
// floors is 0.8 × 0.8 × 0.8 × 0.6 ≈ 0.31, so a hit 3.3 times as
// relevant always ranks first. (Tuned on LoCoMo dev through the command:
// with floors 0.7/0.75/0.75 and archived 0.6, a question asked the day
// after a months-long conversation lost 0.022–0.027 recall@10 to the
// backends' order, the older turns being archived.)
const (
	ImportanceFloor  = 0.8 // at importance 0; 1 at importance 1
	FreshnessFloor   = 0.6 // freshness (0.5..1, see Freshness) counts 0.8..1
	ConfidenceFloor  = 0.8
	ArchivedFactor   = 0.75 // an archived memory ranks below an active one of similar relevance
	RetiredFactor    = 0.6  // superseded or flagged wrong (search --all)
	factorDecimals   = 1e4
	relevanceDecimal = 1e6
)

// Factors is the ranking score of one search hit, factor by factor, each
// rounded as printed, so that the printed factors multiply exactly into
// the printed score:
//
//	Score = Relevance × Importance × Freshness × Confidence × Status × Order
//
// Relevance is the hit's lexical score (package recall) over the best of
// the candidates, in (0, 1]; the other factors refine it. Order is 1 from
// Blend; ranking (read.Rank) lowers it when its two rules hold a hit
// below one that scores less — a memory holding more of the query's
// terms (the superset-of-terms property), or, for a session neighbour,
// the hit that brought it in (recall.OrderFrom) —: the hit then scores
// what the one above it does, so the printed order is the printed
// scores'.
type Factors struct {
	Relevance  float64
	Importance float64
	Freshness  float64
	Confidence float64
	Status     float64
	Order      float64
	Score      float64
}

// Reorder sets the score to score, Order to what it takes to get there.
func (f *Factors) Reorder(score float64) {
	if product := f.Score / f.Order; product > 0 {
		f.Order = score / product
	}
	f.Score = score
}

// Blend is the ranking score of a hit with lexical score lexical where the
// best candidate scores best, and r, freshness what Evaluate and
// Freshness say of it.
func Blend(lexical, best float64, r Result, freshness float64) Factors {
	rel := 1.0
	if best > 0 && lexical > 0 {
		rel = math.Min(1, lexical/best)
	}
	f := Factors{
		Relevance:  math.Round(rel*relevanceDecimal) / relevanceDecimal,
		Importance: roundFactor(ImportanceFloor + (1-ImportanceFloor)*r.Importance),
		Freshness:  roundFactor(FreshnessFloor + (1-FreshnessFloor)*freshness),
		Confidence: roundFactor(ConfidenceFloor + (1-ConfidenceFloor)*r.Confidence),
		Status:     1,
		Order:      1,
	}
	switch {
	case r.Retired():
		f.Status = RetiredFactor
	case r.Status == Archived:
		f.Status = ArchivedFactor
	}
	f.Score = f.Relevance * f.Importance * f.Freshness * f.Confidence * f.Status
	return f
}

func roundFactor(v float64) float64 { return math.Round(v*factorDecimals) / factorDecimals }
