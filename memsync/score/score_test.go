package score_test

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/score"
)

var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

func day(n float64) time.Time { return t0.Add(time.Duration(n * float64(score.Day))) }

func mem(kind journal.Kind, opts ...func(*score.Memory)) score.Memory {
	m := score.Memory{UUID: "mem_target", TS: t0, Agent: "alice", Group: journal.SharedGroup, Kind: kind}
	for _, o := range opts {
		o(&m)
	}
	return m
}

func tier(t string) func(*score.Memory)   { return func(m *score.Memory) { m.Tier = t } }
func maxAge(a string) func(*score.Memory) { return func(m *score.Memory) { m.MaxAge = a } }
func hint(h string) func(*score.Memory)   { return func(m *score.Memory) { m.Hint = h } }
func source(s string) func(*score.Memory) { return func(m *score.Memory) { m.SourceType = s } }
func retired(at float64) func(*score.Memory) {
	return func(m *score.Memory) { m.SupersededAt = day(at) }
}

var seq int

func ev(at float64, agent string, kind journal.Kind, rel score.Relation) score.Event {
	seq++
	return score.Event{UUID: "mem_src_" + string(rune('a'+seq%26)) + time.Duration(seq).String(), TS: day(at),
		Agent: agent, Kind: kind, Relation: rel, Visible: true}
}

func link(at float64, agent string) score.Event { return ev(at, agent, journal.KindFact, score.Links) }
func support(at float64, agent string) score.Event {
	return ev(at, agent, journal.KindFact, score.Supports)
}
func conflict(at float64) score.Event {
	return ev(at, "bob", journal.KindFact, score.ConflictsWith)
}
func outcome(at float64, result string) score.Event {
	e := ev(at, "alice", journal.KindOutcome, score.Links)
	e.Result = result
	return e
}
func flag(at float64, value string) score.Event {
	e := ev(at, "alice", journal.KindFeedback, score.Links)
	e.Feedback = value
	return e
}

// TestImportanceTable covers every row of SPEC §7's table, the decay and
// its acceleration, clamping, and tiers, with a pinned clock.
func TestImportanceTable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      score.Memory
		events []score.Event
		asOf   float64
		want   float64
	}{
		{"starts at 0.5", mem(journal.KindFact), nil, 0, 0.5},
		{"referenced by the same agent", mem(journal.KindFact), []score.Event{link(1, "alice")}, 2, 0.6},
		{"referenced by another agent", mem(journal.KindFact), []score.Event{link(1, "bob")}, 2, 0.65},
		{"supported by another agent", mem(journal.KindFact), []score.Event{support(1, "bob")}, 2, 0.65},
		{"links and supports from one record count once", mem(journal.KindFact), func() []score.Event {
			a, b := link(1, "bob"), support(1, "bob")
			b.UUID = a.UUID
			return []score.Event{a, b}
		}(), 2, 0.65},
		{"successful outcome of a decision", mem(journal.KindDecision), []score.Event{outcome(1, "success")}, 2, 0.7},
		{"successful outcome of a prediction verifies it", mem(journal.KindFact), []score.Event{outcome(1, "success")}, 2, 0.65},
		{"failed outcome is a reference", mem(journal.KindDecision), []score.Event{outcome(1, "failure")}, 2, 0.6},
		{"verified", mem(journal.KindFact), []score.Event{flag(1, "verified")}, 2, 0.65},
		{"flagged important", mem(journal.KindFact), []score.Event{flag(1, "important")}, 2, 0.95},
		{"flagged wrong", mem(journal.KindFact), []score.Event{link(1, "bob"), flag(2, "wrong")}, 3, 0},
		{"flagged unimportant", mem(journal.KindFact), []score.Event{flag(1, "unimportant")}, 2, 0.2},
		{"contradicted by a newer record", mem(journal.KindFact), []score.Event{conflict(1)}, 2, 0.3},
		{"an older record does not contradict", mem(journal.KindFact), []score.Event{conflict(-1)}, 2, 0.5},
		{"a reference older than the memory is not one", mem(journal.KindFact), []score.Event{link(-1, "bob")}, 2, 0.5},
		{"events after the clock are left out", mem(journal.KindFact), []score.Event{link(5, "bob")}, 4, 0.5},
		{"13 days unreferenced: no decay", mem(journal.KindFact), nil, 13.9, 0.5},
		{"one full 14-day period", mem(journal.KindFact), nil, 14, 0.4},
		{"two periods", mem(journal.KindFact), nil, 28, 0.3},
		{"decay counts from the last reference", mem(journal.KindFact), []score.Event{link(10, "alice")}, 23.9, 0.6},
		{"decay after the last reference", mem(journal.KindFact), []score.Event{link(10, "alice")}, 24, 0.5},
		{"below 0.2 decays twice as fast", mem(journal.KindFact), nil, 14 * 5, 0},                      // .4 .3 .2 .1 then -0.2 -> 0
		{"acceleration from 0.1", mem(journal.KindFact), []score.Event{flag(0, "unimportant")}, 28, 0}, // .2 .1 -> 0 (-.2)
		{"a contradiction is no reference: decay continues", mem(journal.KindFact), []score.Event{conflict(10)}, 14, 0.2},
		{"clamped at 1", mem(journal.KindFact), []score.Event{flag(1, "important"), link(2, "bob")}, 3, 1},
		{"clamped at 0", mem(journal.KindFact), []score.Event{flag(1, "unimportant"), flag(2, "unimportant")}, 3, 0},
		{"core never decays", mem(journal.KindFact, tier("core")), nil, 400, 0.5},
		{"working decays", mem(journal.KindFact, tier("working")), nil, 14, 0.4},
		{"later flag wins: important after wrong", mem(journal.KindFact), []score.Event{flag(1, "wrong"), flag(2, "important")}, 3, 0.95},
		{"later flag wins: wrong after important", mem(journal.KindFact), []score.Event{flag(1, "important"), flag(2, "wrong")}, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := score.Evaluate(tc.m, tc.events, day(tc.asOf))
			if r.Importance != tc.want {
				t.Fatalf("importance = %v, want %v; effects %+v", r.Importance, tc.want, r.Effects)
			}
		})
	}
}

func TestMaxAge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      score.Memory
		events []score.Event
		want   time.Duration
	}{
		{"observation 30d", mem(journal.KindObservation), nil, 30 * score.Day},
		{"task 30d", mem(journal.KindTask), nil, 30 * score.Day},
		{"decision 90d", mem(journal.KindDecision), nil, 90 * score.Day},
		{"fact 90d", mem(journal.KindFact), nil, 90 * score.Day},
		{"preference permanent", mem(journal.KindPreference), nil, score.Permanent},
		{"procedure permanent", mem(journal.KindProcedure), nil, score.Permanent},
		{"declared wins", mem(journal.KindPreference, maxAge("14d")), nil, 14 * score.Day},
		{"0.8 doubles", mem(journal.KindFact), []score.Event{link(0.5, "bob"), link(0.6, "bob")}, 180 * score.Day},
		{"0.9 triples", mem(journal.KindFact), []score.Event{flag(0.5, "important")}, 270 * score.Day},
		{"0.79 does not", mem(journal.KindFact), []score.Event{link(0.5, "bob"), link(0.6, "alice")}, 90 * score.Day},
		{"permanent stays", mem(journal.KindProcedure), []score.Event{flag(0.5, "important")}, score.Permanent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := score.Evaluate(tc.m, tc.events, day(1)).MaxAge; got != tc.want {
				t.Fatalf("max_age = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      score.Memory
		events []score.Event
		asOf   float64
		want   score.Status
	}{
		{"fresh is active", mem(journal.KindObservation), nil, 1, score.Active},
		{"superseded once the superseder's ts is reached", mem(journal.KindFact, retired(5)), nil, 5, score.Superseded},
		{"not superseded before it", mem(journal.KindFact, retired(5)), nil, 4, score.Active},
		{"flagged wrong: archived at once", mem(journal.KindFact), []score.Event{flag(1, "wrong")}, 1, score.Archived},
		{"wrong then verified: the later flag wins", mem(journal.KindFact), []score.Event{flag(1, "wrong"), flag(2, "verified")}, 2, score.Archived}, // importance 0.15 < 0.2
		{"wrong then important", mem(journal.KindFact), []score.Event{flag(1, "wrong"), flag(2, "important")}, 2, score.Active},
		{"below 0.2 at any age", mem(journal.KindFact), []score.Event{flag(1, "unimportant"), conflict(2)}, 2, score.Archived},
		{"unused observation past max_age: archived", mem(journal.KindObservation), nil, 31, score.Archived},
		{"past max_age at 0.5: review", mem(journal.KindObservation), []score.Event{link(20, "alice")}, 31, score.Review},
		{"past max_age at 0.75: active", mem(journal.KindObservation), []score.Event{link(1, "bob"), link(2, "alice"), link(20, "alice")}, 31, score.Active},
		{"a new reference brings an archived memory back", mem(journal.KindObservation), []score.Event{link(40, "bob")}, 40, score.Review},
		{"core never archived", mem(journal.KindObservation, tier("core")), nil, 400, score.Active},
		{"core flagged wrong is retired", mem(journal.KindObservation, tier("core")), []score.Event{flag(1, "wrong")}, 2, score.Archived},
		// SPEC §7 (rewritten): durable memories never fade out.
		{"preference unreferenced for 400 days stays active", mem(journal.KindPreference), nil, 400, score.Active},
		{"procedure below 0.2 stays active", mem(journal.KindProcedure), []score.Event{flag(1, "unimportant"), conflict(2)}, 300, score.Active},
		{"declared permanent fact stays active", mem(journal.KindFact, maxAge("permanent")), nil, 365, score.Active},
		{"preference flagged wrong is retired", mem(journal.KindPreference), []score.Event{flag(1, "wrong")}, 2, score.Archived},
		{"preference superseded is retired", mem(journal.KindPreference, retired(5)), nil, 6, score.Superseded},
		{"durable preference pruned stays active", mem(journal.KindPreference, tier("learning")), []score.Event{consolidation(1, journal.ConsolidationPrune)}, 2, score.Active},
		{"a fact declared 30d unreferenced for 100 days is archived", mem(journal.KindFact, maxAge("30d")), nil, 100, score.Archived},
		{"low-confidence learning unreferenced after 7 days", mem(journal.KindFact, tier("learning"), hint("low")), nil, 8, score.Archived},
		{"low-confidence learning referenced stays", mem(journal.KindFact, tier("learning"), hint("low")), []score.Event{link(1, "alice")}, 8, score.Active},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := score.Evaluate(tc.m, tc.events, day(tc.asOf))
			if r.Status != tc.want {
				t.Fatalf("status = %s, want %s (importance %v, max_age %v)", r.Status, tc.want, r.Importance, r.MaxAge)
			}
		})
	}
}

// TestContradictionPenalisesOnlyTheOlder: a record that names an older one
// in conflicts_with lowers the older one; the older one naming the newer
// (its own conflicts_with, read from the newer's side) does not lower it.
func TestContradictionPenalisesOnlyTheOlder(t *testing.T) {
	older := score.Memory{UUID: "mem_old", TS: day(0), Agent: "alice", Group: journal.SharedGroup, Kind: journal.KindFact}
	newer := score.Memory{UUID: "mem_new", TS: day(3), Agent: "bob", Group: journal.SharedGroup, Kind: journal.KindFact}
	// Both name each other: each sees the other as a CONFLICTS_WITH event.
	fromNew := score.Event{UUID: newer.UUID, TS: newer.TS, Agent: newer.Agent, Kind: newer.Kind, Relation: score.ConflictsWith, Visible: true}
	fromOld := score.Event{UUID: older.UUID, TS: older.TS, Agent: older.Agent, Kind: older.Kind, Relation: score.ConflictsWith, Visible: true}
	if got := score.Evaluate(older, []score.Event{fromNew}, day(4)); got.Importance != 0.3 || got.Confidence >= 0.6 {
		t.Fatalf("older: importance %v confidence %v, want 0.3 and below 0.6", got.Importance, got.Confidence)
	}
	if got := score.Evaluate(newer, []score.Event{fromOld}, day(4)); got.Importance != 0.5 || got.Confidence != 0.6 {
		t.Fatalf("newer: importance %v confidence %v, want 0.5 and 0.6", got.Importance, got.Confidence)
	}
}

func TestConfidence(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      score.Memory
		events []score.Event
		asOf   float64
		want   float64
		basis  string
	}{
		{"no source: told", mem(journal.KindFact), nil, 1, 0.6, "no source"},
		{"experienced", mem(journal.KindFact, source("experienced")), nil, 1, 0.7, "source experienced"},
		{"observed", mem(journal.KindFact, source("observed")), nil, 1, 0.65, "source observed"},
		{"read", mem(journal.KindFact, source("read")), nil, 1, 0.55, "source read"},
		{"inferred", mem(journal.KindFact, source("inferred")), nil, 1, 0.45, "source inferred"},
		{"high hint", mem(journal.KindFact, hint("high")), nil, 1, 0.7, "declared high"},
		{"low hint", mem(journal.KindFact, hint("low")), nil, 1, 0.5, "declared low"},
		{"supported", mem(journal.KindFact), []score.Event{support(1, "alice")}, 2, 0.65, "corroborated"},
		{"referenced by another agent", mem(journal.KindFact), []score.Event{link(1, "bob")}, 2, 0.65, "corroborated"},
		{"corroboration capped", mem(journal.KindFact), []score.Event{link(1, "bob"), link(1, "carol"), link(1, "dave"), link(1, "erin"), link(1, "fay")}, 2, 0.8, "capped"},
		{"verified", mem(journal.KindFact), []score.Event{flag(1, "verified")}, 2, 0.75, "verified"},
		{"successful outcome", mem(journal.KindDecision), []score.Event{outcome(1, "success")}, 2, 0.75, "successful outcome"},
		{"failed outcome", mem(journal.KindDecision), []score.Event{outcome(1, "failure")}, 2, 0.45, "failed outcome"},
		{"contradicted", mem(journal.KindFact), []score.Event{conflict(1)}, 2, 0.45, "contradicted"},
		{"age", mem(journal.KindPreference), nil, 181, 0.5, "days since"},
		{"core does not age", mem(journal.KindPreference, tier("core")), nil, 400, 0.6, "no source"},
		{"flagged wrong", mem(journal.KindFact, hint("high")), []score.Event{flag(1, "wrong")}, 2, 0, "flagged wrong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := score.Evaluate(tc.m, tc.events, day(tc.asOf))
			if r.Confidence != tc.want {
				t.Fatalf("confidence = %v, want %v; basis %q", r.Confidence, tc.want, r.Basis)
			}
			if !strings.Contains(strings.Join(r.Basis, "\n"), tc.basis) {
				t.Fatalf("basis %q lacks %q", r.Basis, tc.basis)
			}
		})
	}
}

// TestOrderIndependent: the result does not depend on the order in which
// events are given.
func TestOrderIndependent(t *testing.T) {
	m := mem(journal.KindDecision)
	events := []score.Event{link(1, "alice"), link(2, "bob"), support(3, "carol"), conflict(4), outcome(5, "success"),
		flag(6, "verified"), flag(7, "unimportant"), link(30, "bob"), flag(40, "important")}
	want := score.Evaluate(m, events, day(90))
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		shuffled := append([]score.Event(nil), events...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := score.Evaluate(m, shuffled, day(90))
		if got.Importance != want.Importance || got.Confidence != want.Confidence || got.Status != want.Status || len(got.Effects) != len(want.Effects) {
			t.Fatalf("shuffle %d: %+v, want %+v", i, got, want)
		}
	}
}

// TestEffectsExplain: every step of importance is listed with what caused it.
func TestEffectsExplain(t *testing.T) {
	r := score.Evaluate(mem(journal.KindFact), []score.Event{link(1, "bob")}, day(16))
	var texts []string
	for _, e := range r.Effects {
		texts = append(texts, e.Text())
	}
	want := []string{"+0.15 referenced by bob", "-0.10 not referenced for 14 days"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Fatalf("effects %q, want %q", texts, want)
	}
}

func TestFreshnessAndBlend(t *testing.T) {
	m := mem(journal.KindFact)
	r := score.Evaluate(m, nil, day(0))
	if f := score.Freshness(m, r, day(0)); f != 1 {
		t.Fatalf("freshness at ts = %v", f)
	}
	r90 := score.Evaluate(m, nil, day(90))
	if f := score.Freshness(m, r90, day(90)); f != 0.75 {
		t.Fatalf("freshness after 90 days = %v, want 0.75", f)
	}
	hi := score.Result{Importance: 0.9, Confidence: 0.6, Status: score.Active}
	lo := score.Result{Importance: 0.3, Confidence: 0.6, Status: score.Active}
	if score.Blend(1, 1, hi, 1).Score <= score.Blend(1, 1, lo, 1).Score {
		t.Fatal("importance does not raise the blend")
	}
	if score.Blend(0.9, 1, hi, 1).Score <= score.Blend(1, 1, lo, 1).Score {
		t.Fatal("a slightly weaker lexical match of an important memory should outrank")
	}
	if score.Blend(0.2, 1, hi, 1).Score >= score.Blend(1, 1, lo, 0.5).Score {
		t.Fatal("a clearly better match must not be buried by importance")
	}
	archived := lo
	archived.Status = score.Archived
	if score.Blend(1, 1, archived, 1).Score >= score.Blend(0.95, 1, lo, 1).Score {
		t.Fatal("an archived memory must rank below an active one of similar relevance")
	}
	worst := score.Result{Importance: 0, Confidence: 0, Status: score.Superseded}
	if score.Blend(1, 1, worst, 0.5).Score <= score.Blend(0.19, 1, hi, 1).Score {
		t.Fatal("a five times better match must rank first, whatever its factors")
	}
}

// TestBlendFactorsMultiply: the printed factors multiply exactly into the
// score: relevance × importance × freshness × confidence × status.
func TestBlendFactorsMultiply(t *testing.T) {
	for _, r := range []score.Result{
		{Importance: 0.5, Confidence: 0.6, Status: score.Active},
		{Importance: 0.123, Confidence: 0.77, Status: score.Archived},
		{Importance: 0, Confidence: 0, Status: score.Superseded},
		{Importance: 1, Confidence: 1, Status: score.Review, FlaggedWrong: true},
	} {
		for _, lex := range []float64{0.001, 0.37, 1, 2.5} {
			f := score.Blend(lex, 2.5, r, 0.61)
			want := f.Relevance * f.Importance * f.Freshness * f.Confidence * f.Status
			if f.Score != want || f.Score <= 0 || f.Score > 1 {
				t.Fatalf("%+v lex %v: score %v, factors give %v", r, lex, f.Score, want)
			}
		}
	}
}

func TestPromotedAt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []score.Event
		asOf   float64
		at     float64 // -1: not promoted
	}{
		{"nothing", nil, 100, -1},
		{"flagged important", []score.Event{flag(3, "important")}, 100, 3},
		{"flag after the clock", []score.Event{flag(3, "important")}, 2, -1},
		{"references reach 0.8", []score.Event{link(1, "bob"), link(2, "carol"), link(5, "alice")}, 100, 2},
		{"verified at 0.65", []score.Event{flag(4, "verified")}, 100, 4},
		{"verified but decayed below 0.6 first", []score.Event{flag(30, "verified")}, 100, -1}, // 0.3 + 0.15
		{"promotion records do not vouch", []score.Event{ev(1, "alice", journal.KindPromotion, score.Links), link(2, "bob")}, 100, -1},
		{"wrong after important: still promoted once", []score.Event{flag(3, "important"), flag(4, "wrong")}, 100, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, ok := score.PromotedAt(mem(journal.KindFact), tc.events, day(tc.asOf))
			if tc.at < 0 {
				if ok {
					t.Fatalf("promoted at %v", at)
				}
				return
			}
			if !ok || !at.Equal(day(tc.at)) {
				t.Fatalf("promoted %v at %v, want day %v", ok, at, tc.at)
			}
		})
	}
}

func consolidation(at float64, action string) score.Event {
	e := ev(at, "alice", journal.KindFeedback, score.Links)
	e.Consolidation = action
	return e
}

// TestConsolidationEvents: the consolidation cycle's records (SPEC §10)
// never vouch for what they name; a prune archives a learning record
// until a new reference revives it; a verify puts a core memory up for
// review until a human verifies it again.
func TestConsolidationEvents(t *testing.T) {
	learning := mem(journal.KindFact, tier("learning"))
	core := mem(journal.KindPreference, tier("core"))
	cases := []struct {
		name   string
		m      score.Memory
		events []score.Event
		at     float64
		imp    float64
		status score.Status
	}{
		{"a theme summary linking it does not vouch", learning, []score.Event{consolidation(1, journal.ConsolidationTheme)}, 2, 0.5, score.Active},
		{"pruned: archived", learning, []score.Event{consolidation(1, journal.ConsolidationPrune)}, 2, 0.5, score.Archived},
		{"pruned, not yet at the clock", learning, []score.Event{consolidation(3, journal.ConsolidationPrune)}, 2, 0.5, score.Active},
		{"pruned, then referenced: back", learning, []score.Event{consolidation(1, journal.ConsolidationPrune), link(2, "alice")}, 3, 0.6, score.Active},
		{"referenced, then pruned: archived", learning, []score.Event{link(1, "alice"), consolidation(2, journal.ConsolidationPrune)}, 3, 0.6, score.Archived},
		{"core is never pruned", core, []score.Event{consolidation(1, journal.ConsolidationPrune)}, 2, 0.5, score.Active},
		{"core contradicted: review", core, []score.Event{consolidation(1, journal.ConsolidationVerify)}, 2, 0.5, score.Review},
		{"core contradicted, then verified: active", core, []score.Event{consolidation(1, journal.ConsolidationVerify), flag(2, "verified")}, 3, 0.65, score.Active},
		{"core verified before it was contradicted: review", core, []score.Event{flag(1, "verified"), consolidation(2, journal.ConsolidationVerify)}, 3, 0.65, score.Review},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := score.Evaluate(c.m, c.events, day(c.at))
			if r.Importance != c.imp || r.Status != c.status {
				t.Errorf("importance %v status %s, want %v %s", r.Importance, r.Status, c.imp, c.status)
			}
		})
	}
}

// TestAwaitingOutcome is SPEC §10's outcome check: a decision older than
// a week with no outcome linking to it waits, until an outcome does.
func TestAwaitingOutcome(t *testing.T) {
	decision := mem(journal.KindDecision)
	cases := []struct {
		name   string
		m      score.Memory
		events []score.Event
		at     float64
		want   bool
	}{
		{"a week old, no outcome", decision, nil, 8, true},
		{"six days old", decision, nil, 6, false},
		{"exactly a week", decision, nil, 7, true},
		{"an outcome links to it", decision, []score.Event{outcome(3, "failure")}, 8, false},
		{"an outcome after the clock", decision, []score.Event{outcome(9, "success")}, 8, true},
		{"only referenced", decision, []score.Event{link(2, "alice")}, 8, true},
		{"not a decision", mem(journal.KindFact), nil, 8, false},
		{"superseded", mem(journal.KindDecision, retired(2)), nil, 8, false},
		{"followed up already: still waiting", decision, []score.Event{consolidation(8, journal.ConsolidationFollowUp)}, 9, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := score.AwaitingOutcome(c.m, c.events, day(c.at)); got != c.want {
				t.Errorf("AwaitingOutcome = %v, want %v", got, c.want)
			}
		})
	}
	if q := score.FollowUpQuestion("Use #postgres for billing.", t0); q != "You decided Use #postgres for billing on 2026-10-01. How did it turn out?" {
		t.Errorf("question %q", q)
	}
}

// TestSignalsCrossNoPrivacyLine: an event counts only when its writer sees
// the memory (journal.Sees): another agent's links, supports, outcome,
// contradiction and flags leave a private memory exactly as it was, and
// never promote it; its own agent's still count.
func TestSignalsCrossNoPrivacyLine(t *testing.T) {
	private := func(m *score.Memory) { m.Group = journal.PrivateGroup("alice") }
	plain := score.Evaluate(mem(journal.KindDecision, private), nil, day(20))
	foreign := []score.Event{
		link(1, "bob"), link(2, "bob"), support(3, "bob"), support(4, "bob"),
		ev(5, "bob", journal.KindOutcome, score.Links), ev(6, "bob", journal.KindFact, score.ConflictsWith),
		ev(7, "bob", journal.KindFeedback, score.Links), ev(8, "bob", journal.KindFeedback, score.Links),
	}
	foreign[4].Result = journal.ResultSuccess
	foreign[6].Feedback = journal.FeedbackImportant
	foreign[7].Feedback = journal.FeedbackWrong
	tests := []struct {
		name   string
		m      score.Memory
		events []score.Event
		moved  bool
	}{
		{"another agent's signals at a private memory", mem(journal.KindDecision, private), foreign, false},
		{"the owner's own signals at its private memory", mem(journal.KindDecision, private), []score.Event{link(1, "alice"), link(2, "alice")}, true},
		{"another agent's signals at a shared memory", mem(journal.KindDecision), foreign[:2], true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := score.Evaluate(tc.m, tc.events, day(20))
			same := got.Importance == plain.Importance && got.Confidence == plain.Confidence &&
				got.Status == plain.Status && len(got.Effects) == len(plain.Effects)
			if same == tc.moved {
				t.Fatalf("moved = %v, want %v: %+v", !same, tc.moved, got)
			}
			if _, promoted := score.PromotedAt(tc.m, tc.events, day(20)); promoted && !tc.moved {
				t.Fatal("promoted by signals its writers cannot see")
			}
		})
	}
}

// TestInvisibleEventsAreNotNamed: explain's text for a record the reader
// may not see names no agent, and the decay counted from it is marked
// invisible too (its time would give the record's ts away).
func TestInvisibleEventsAreNotNamed(t *testing.T) {
	e := link(1, "bob")
	e.Visible = false
	got := score.Evaluate(mem(journal.KindFact), []score.Event{e}, day(40))
	if len(got.Effects) < 2 {
		t.Fatalf("effects %+v, want the reference and its decay", got.Effects)
	}
	for _, f := range got.Effects {
		if strings.Contains(f.Text(), "bob") || f.Visible {
			t.Errorf("effect %q (visible %v) gives away a record the reader may not see", f.Text(), f.Visible)
		}
	}
	for _, b := range got.Basis {
		if strings.Contains(b, "bob") || strings.Contains(b, e.UUID) {
			t.Errorf("basis %q names a record the reader may not see", b)
		}
	}
}

// TestImportedFeedbackSignalsNothing: a feedback record that an import
// wrote (older imports turned a source's verified into one) neither
// verifies nor promotes; the same flag given through memsync does.
func TestImportedFeedbackSignalsNothing(t *testing.T) {
	ts := time.Date(2026, 2, 14, 0, 0, 0, 0, time.UTC)
	m := score.Memory{UUID: "mem_a", TS: ts, Agent: "a", Group: journal.PrivateGroup("a"), Kind: journal.KindFact}
	fb := journal.Record{UUID: "mem_f", TS: ts, Agent: "a", Kind: journal.KindFeedback,
		Extra: map[string]json.RawMessage{journal.FieldFeedback: json.RawMessage(`"verified"`)}}
	if _, ok := score.PromotedAt(m, []score.Event{score.EventFrom(score.Links, &fb)}, ts.Add(time.Hour)); !ok {
		t.Fatal("a verified flag through memsync does not promote")
	}
	fb.Extra[journal.FieldImportedFrom] = json.RawMessage(`"vault"`)
	e := score.EventFrom(score.Links, &fb)
	if r := score.Evaluate(m, []score.Event{e}, ts.Add(time.Hour)); r.Verified {
		t.Errorf("an imported feedback record verifies: %+v", r)
	}
	if at, ok := score.PromotedAt(m, []score.Event{e}, ts.Add(time.Hour)); ok {
		t.Errorf("an imported feedback record promotes at %v", at)
	}
}
