package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/analysis"
)

// yearDays is how many simulated days TestYearInTheLife writes; the last
// one is the test's present.
const yearDays = 400

// yearAgents is the fleet of TestYearInTheLife.
var yearAgents = []string{"ada", "bix", "cyd", "dov"}

// yearTopics are what preferences and procedures are about, and the goals
// of the planner packets that must carry them. No two share a word (after
// analysis), so a goal bears on its own topic's memories only.
var yearTopics = []string{
	"deploy the billing service",
	"rotate the api keys",
	"backup the customer database",
	"onboard a new engineer",
	"triage production incidents",
	"release the mobile app",
	"renew tls certificates",
	"migrate the search cluster",
	"review pull requests",
	"scale kafka brokers",
	"purge old invoices",
	"tune nightly batch jobs",
}

// yearVocabulary is the ordinary words of every text; none is a topic word.
var yearVocabulary = strings.Fields(`latency queue retry timeout dashboard alert budget vendor
schedule staging rollback metrics quota ticket report pipeline storage network config audit
backlog sprint region replica shard token webhook cron worker gateway ledger export sandbox
firewall terraform grafana postgres redis sentry oncall runbook canary feature flag throttle
checksum snapshot roadmap schema partner contract pricing`)

// Per agent's view (shared + its own private), at most this many current
// preferences and procedures share a topic: the packet's caps (SPEC §8.5)
// are then never what leaves one out.
const (
	yearSharedPrefs, yearPrivatePrefs = 2, 2 // 4 hard_constraints
	yearSharedProcs, yearPrivateProcs = 1, 2 // 3 procedures_to_follow
)

// yearRec is one record the fleet wrote, with what the test knows of its
// fate.
type yearRec struct {
	uuid   string
	agent  string
	kind   journal.Kind
	scope  journal.Scope
	tier   string
	maxAge string
	text   string
	query  string // its distinctive words and one ordinary word of it
	topic  int    // index in yearTopics, -1 for none
	day    int
	ts     time.Time

	supersededBy string
	wrong        bool   // flagged wrong (and never flagged otherwise)
	flag         string // the one flag it got, if any
	flagByCLI    bool   // flagged through `memsync flag` at the real clock
	linked       bool   // links or supports something (or is an outcome)
}

// retired reports whether default search must leave it out: superseded or
// flagged wrong (SPEC §7).
func (r *yearRec) retired() bool { return r.supersededBy != "" || r.wrong }

// durable reports whether SPEC §7 says it never fades out: effective
// max_age permanent, or core tier.
func (r *yearRec) durable() bool {
	if r.tier == "core" || r.maxAge == "permanent" {
		return true
	}
	return r.maxAge == "" && (r.kind == journal.KindPreference || r.kind == journal.KindProcedure)
}

// visibleTo reports whether agent may read it.
func (r *yearRec) visibleTo(agent string) bool {
	return r.scope == journal.ScopeShared || r.agent == agent
}

// yearFleet is a year of a fleet's memory, written to a repository's
// journals.
type yearFleet struct {
	now    time.Time
	recs   []*yearRec // what agents wrote, oldest first (feedback excluded)
	byUUID map[string]*yearRec
	// cliFlags are flags the test gives through `memsync flag`.
	cliFlags []*yearRec
	// feedback counts feedback records written straight into journals.
	feedback int
	// linked counts the records with links or supports (outcomes included).
	linked int
}

// yearGen generates the fleet deterministically.
type yearGen struct {
	t     *testing.T
	repo  string
	rng   *rand.Rand
	fleet *yearFleet
	used  map[string]bool // analyzed terms already in a codename or the vocabulary
	seq   int
	// slots: current preferences/procedures per (kind, topic, scope owner).
	slots map[string][]*yearRec
	// pending outcomes by day.
	outcomes map[int][]*yearRec
	links    int
}

// newYearFleet writes 400 days of 4 agents into repo's journals. now is the
// present (day 400); every record lies 1 to 23 hours before the midnight-
// free mark now - (400-day) days, so no 14-day decay step nor max_age ends
// within an hour after now: reads a few minutes apart agree.
func newYearFleet(t *testing.T, repo string, now time.Time, seed int64) *yearFleet {
	t.Helper()
	g := &yearGen{
		t: t, repo: repo, rng: rand.New(rand.NewSource(seed)),
		fleet: &yearFleet{now: now, byUUID: map[string]*yearRec{}},
		used:  map[string]bool{}, slots: map[string][]*yearRec{}, outcomes: map[int][]*yearRec{},
	}
	for _, w := range yearVocabulary {
		if term, ok := analysis.Term(w); ok {
			g.used[term] = true
		}
	}
	for _, topic := range yearTopics {
		for _, term := range analysis.Terms(topic) {
			if g.used[term] {
				t.Fatalf("topic %q shares the term %q with another topic or the vocabulary", topic, term)
			}
			g.used[term] = true
		}
	}
	for day := 1; day <= yearDays; day++ {
		g.day(day)
	}
	f := g.fleet
	f.linked = g.links
	if g.links*10 > len(f.recs) {
		t.Fatalf("generator: %d of %d records carry links, more than 1 in 10", g.links, len(f.recs))
	}
	return f
}

// day writes one simulated day: a dozen records or so, in time order.
func (g *yearGen) day(day int) {
	type planned struct {
		offset time.Duration
		make   func(ts time.Time)
	}
	var plan []planned
	add := func(mk func(ts time.Time)) {
		off := time.Hour + time.Duration(g.rng.Intn(22*60))*time.Minute + time.Duration(g.rng.Intn(60))*time.Second
		plan = append(plan, planned{off, mk})
	}
	if day <= 2 { // the core tier: a few standing facts, within the packet's CapCore in any view
		for _, a := range yearAgents {
			add(func(ts time.Time) { g.record(day, ts, a, journal.KindFact, journal.ScopePrivate, "core", -1) })
		}
		add(func(ts time.Time) {
			g.record(day, ts, yearAgents[day%len(yearAgents)], journal.KindFact, journal.ScopeShared, "core", -1)
		})
	}
	for _, o := range g.outcomes[day] {
		add(func(ts time.Time) { g.outcome(day, ts, o) })
	}
	n := 7 + g.rng.Intn(7)
	for range n {
		add(func(ts time.Time) { g.fleetRecord(day, ts) })
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].offset > plan[j].offset })
	base := g.fleet.now.Add(-time.Duration(yearDays-day) * 24 * time.Hour)
	for _, p := range plan {
		p.make(base.Add(-p.offset))
	}
}

var yearKindWeights = []struct {
	kind journal.Kind
	w    int
}{
	{journal.KindObservation, 24}, {journal.KindFact, 15}, {journal.KindDecision, 11}, {journal.KindTask, 12},
	{journal.KindPreference, 3}, {journal.KindProcedure, 3}, {journal.KindReflection, 7},
	{journal.KindSummary, 6}, {journal.KindCorrection, 4}, {journal.KindOutcome, 2},
}

func (g *yearGen) pickKind() journal.Kind {
	total := 0
	for _, k := range yearKindWeights {
		total += k.w
	}
	n := g.rng.Intn(total)
	for _, k := range yearKindWeights {
		if n < k.w {
			return k.kind
		}
		n -= k.w
	}
	panic("unreachable")
}

// fleetRecord writes one ordinary record of a random agent and kind, with
// its occasional link, supersession, contradiction or flag.
func (g *yearGen) fleetRecord(day int, ts time.Time) {
	agent := yearAgents[g.rng.Intn(len(yearAgents))]
	kind := g.pickKind()
	scope := journal.ScopePrivate
	if g.rng.Intn(10) < 4 {
		scope = journal.ScopeShared
	}
	if kind == journal.KindPreference || kind == journal.KindProcedure {
		g.durable(day, ts, agent, kind, scope)
		return
	}
	topic := -1
	if g.rng.Intn(10) < 3 {
		topic = g.rng.Intn(len(yearTopics))
	}
	tier := ""
	if kind == journal.KindObservation && g.rng.Intn(5) == 0 {
		tier = "learning"
	}
	r := g.newRec(day, ts, agent, kind, scope, tier, topic)
	switch {
	case kind == journal.KindFact && g.rng.Intn(30) == 0:
		r.maxAge = "permanent"
	case kind == journal.KindObservation && g.rng.Intn(30) == 0:
		r.maxAge = "14d"
	}
	rec := g.journalRec(r)
	switch x := g.rng.Intn(1000); {
	case x < 35: // builds on something it can see
		if target := g.pickVisible(agent, day, 90, false); target != nil {
			rec.Links = []string{target.uuid}
		}
	case x < 45: // later evidence for something
		if target := g.pickVisible(agent, day, 120, false); target != nil {
			rec.Extra = map[string]json.RawMessage{journal.FieldSupports: mustJSON([]string{target.uuid})}
		}
	case x < 65 && (kind == journal.KindFact || kind == journal.KindDecision || kind == journal.KindCorrection):
		// replaces an older fact or decision of the same group
		if target := g.pickSameGroup(r, day); target != nil {
			rec.Supersedes = []string{target.uuid}
			target.supersededBy = r.uuid
		}
	case x < 85: // contradicts something older
		if target := g.pickVisible(agent, day, 200, true); target != nil {
			rec.ConflictsWith = []string{target.uuid}
		}
	}
	if kind == journal.KindDecision && g.rng.Intn(4) == 0 {
		when := day + 3 + g.rng.Intn(28)
		if when <= yearDays {
			g.outcomes[when] = append(g.outcomes[when], r)
		}
	}
	g.write(r, rec)
	g.maybeFlag(day, ts)
}

// durable writes a preference or procedure about a topic, retiring (with
// supersedes) the oldest current one of its slot when the slot is full.
func (g *yearGen) durable(day int, ts time.Time, agent string, kind journal.Kind, scope journal.Scope) {
	topic := g.rng.Intn(len(yearTopics))
	owner, limit := "shared", yearSharedPrefs
	if kind == journal.KindProcedure {
		limit = yearSharedProcs
	}
	if scope == journal.ScopePrivate {
		owner, limit = agent, yearPrivatePrefs
		if kind == journal.KindProcedure {
			limit = yearPrivateProcs
		}
	}
	key := fmt.Sprintf("%s/%d/%s", kind, topic, owner)
	r := g.newRec(day, ts, agent, kind, scope, "", topic)
	rec := g.journalRec(r)
	cur := g.slots[key][:0:0]
	for _, o := range g.slots[key] {
		if !o.retired() {
			cur = append(cur, o)
		}
	}
	if len(cur) >= limit {
		old := cur[0]
		rec.Supersedes = []string{old.uuid}
		old.supersededBy = r.uuid
		cur = cur[1:]
	}
	g.slots[key] = append(cur, r)
	g.write(r, rec)
	g.maybeFlag(day, ts)
}

// outcome judges decision d: success or failure, linking it.
func (g *yearGen) outcome(day int, ts time.Time, d *yearRec) {
	agent, scope := d.agent, d.scope
	if scope == journal.ScopeShared {
		agent = yearAgents[g.rng.Intn(len(yearAgents))]
	}
	r := g.newRec(day, ts, agent, journal.KindOutcome, scope, "", d.topic)
	rec := g.journalRec(r)
	result := "success"
	if g.rng.Intn(10) < 3 {
		result = "failure"
	}
	rec.Links = []string{d.uuid}
	rec.Extra = map[string]json.RawMessage{journal.FieldResult: mustJSON(result)}
	g.write(r, rec)
}

// maybeFlag flags, now and then, an earlier record: straight into the
// journal as a feedback record at ts, or (later, at the real clock)
// through `memsync flag`.
func (g *yearGen) maybeFlag(day int, ts time.Time) {
	if g.rng.Intn(100) >= 2 {
		return
	}
	var feedback string
	switch x := g.rng.Intn(10); {
	case x < 4:
		feedback = "wrong"
	case x < 6:
		feedback = "important"
	case x < 8:
		feedback = "verified"
	default:
		feedback = "unimportant"
	}
	target := g.pickFlagTarget(feedback, day)
	if target == nil {
		return
	}
	target.flag = feedback
	target.wrong = feedback == "wrong"
	if g.rng.Intn(2) == 0 {
		target.flagByCLI = true
		g.fleet.cliFlags = append(g.fleet.cliFlags, target)
		return
	}
	writer := target.agent
	if target.scope == journal.ScopeShared {
		writer = yearAgents[g.rng.Intn(len(yearAgents))]
	}
	rec := journal.Record{
		UUID: g.uuid(ts.Add(time.Second), writer), TS: ts.Add(time.Second), Agent: writer, Kind: journal.KindFeedback,
		Scope: target.scope, Text: fmt.Sprintf("Shaun flagged %s %s", target.uuid, feedback), Links: []string{target.uuid},
		Source: &journal.Source{Type: "told", Actor: "Shaun"},
		Extra:  map[string]json.RawMessage{journal.FieldFeedback: mustJSON(feedback)},
	}
	g.append(&rec)
	g.fleet.feedback++
}

// pickFlagTarget chooses a record no flag, supersession or promotion will
// make ambiguous: important and verified go to decisions and facts only
// (a promoted preference would be a second copy competing for the
// packet's caps); wrong and unimportant may hit preferences and procedures.
func (g *yearGen) pickFlagTarget(feedback string, day int) *yearRec {
	recs := g.fleet.recs
	for range 20 {
		r := recs[g.rng.Intn(len(recs))]
		if r.retired() || r.flag != "" || r.tier == "core" || r.kind == journal.KindOutcome {
			continue
		}
		durable := r.kind == journal.KindPreference || r.kind == journal.KindProcedure
		if durable && (feedback == "important" || feedback == "verified") {
			continue
		}
		if !durable && r.kind != journal.KindFact && r.kind != journal.KindDecision && r.kind != journal.KindObservation {
			continue
		}
		return r
	}
	return nil
}

// pickVisible chooses a current record that agent can see, at most
// maxDays old; never a preference or procedure (their importance stays
// below promotion), and for a contradiction never a core memory.
func (g *yearGen) pickVisible(agent string, day, maxDays int, contradiction bool) *yearRec {
	recs := g.fleet.recs
	for range 20 {
		if len(recs) == 0 {
			return nil
		}
		r := recs[len(recs)-1-g.rng.Intn(min(len(recs), 400))]
		if day-r.day > maxDays || r.retired() || !r.visibleTo(agent) || r.kind == journal.KindPreference || r.kind == journal.KindProcedure {
			continue
		}
		if contradiction && r.tier == "core" {
			continue
		}
		return r
	}
	return nil
}

// pickSameGroup chooses an older current fact or decision that r may
// replace: a shared one for a shared r, r's author's own for a private one.
func (g *yearGen) pickSameGroup(r *yearRec, day int) *yearRec {
	recs := g.fleet.recs
	for range 30 {
		if len(recs) == 0 {
			return nil
		}
		o := recs[g.rng.Intn(len(recs))]
		if o.retired() || o.flag != "" || o.tier == "core" || o.maxAge == "permanent" || o.scope != r.scope ||
			(r.scope == journal.ScopePrivate && o.agent != r.agent) ||
			(o.kind != journal.KindFact && o.kind != journal.KindDecision) {
			continue
		}
		return o
	}
	return nil
}

// record writes a plain record (the core tier's).
func (g *yearGen) record(day int, ts time.Time, agent string, kind journal.Kind, scope journal.Scope, tier string, topic int) {
	r := g.newRec(day, ts, agent, kind, scope, tier, topic)
	g.write(r, g.journalRec(r))
}

// newRec makes a record with fresh distinctive words.
func (g *yearGen) newRec(day int, ts time.Time, agent string, kind journal.Kind, scope journal.Scope, tier string, topic int) *yearRec {
	code := g.codename() + " " + g.codename()
	w1 := yearVocabulary[g.rng.Intn(len(yearVocabulary))]
	w2 := yearVocabulary[g.rng.Intn(len(yearVocabulary))]
	about := w1 + " " + w2
	if topic >= 0 {
		about = yearTopics[topic] + " " + w1
	}
	var text string
	switch kind {
	case journal.KindPreference:
		text = fmt.Sprintf("%s: %s %s, keep the %s in mind", code, []string{"never", "always", "prefer to"}[g.rng.Intn(3)], yearTopics[topic], w1)
	case journal.KindProcedure:
		text = fmt.Sprintf("%s: to %s, first check the %s, then the %s", code, yearTopics[topic], w1, w2)
	case journal.KindObservation:
		text = fmt.Sprintf("%s: noticed the %s looked off today", code, about)
	case journal.KindFact:
		text = fmt.Sprintf("%s: the %s is owned by platform", code, about)
	case journal.KindDecision:
		text = fmt.Sprintf("%s: decided to change how we %s", code, about)
	case journal.KindTask:
		text = fmt.Sprintf("%s: follow up on %s", code, about)
	case journal.KindReflection:
		text = fmt.Sprintf("%s: lesson: %s went wrong because of haste", code, about)
	case journal.KindSummary:
		text = fmt.Sprintf("%s: summary of the week: %s", code, about)
	case journal.KindCorrection:
		text = fmt.Sprintf("%s: correction about %s", code, about)
	case journal.KindOutcome:
		text = fmt.Sprintf("%s: result of %s", code, about)
	default:
		text = fmt.Sprintf("%s: %s", code, about)
	}
	r := &yearRec{
		uuid: g.uuid(ts, agent), agent: agent, kind: kind, scope: scope, tier: tier, text: text,
		query: code + " " + w1, topic: topic, day: day, ts: ts,
	}
	return r
}

func (g *yearGen) uuid(ts time.Time, agent string) string {
	g.seq++
	return fmt.Sprintf("mem_%s_%s_y%05d", journal.UUIDTime(ts), agent, g.seq)
}

func (g *yearGen) journalRec(r *yearRec) journal.Record {
	return journal.Record{
		UUID: r.uuid, TS: r.ts, Agent: r.agent, Kind: r.kind, Scope: r.scope, Text: r.text,
		Tier: r.tier, MaxAge: r.maxAge,
	}
}

// write journals rec and keeps r in the fleet.
func (g *yearGen) write(r *yearRec, rec journal.Record) {
	rec.MaxAge = r.maxAge
	if len(rec.Links) > 0 || rec.Extra[journal.FieldSupports] != nil {
		r.linked = true
		g.links++
	}
	g.append(&rec)
	g.fleet.recs = append(g.fleet.recs, r)
	g.fleet.byUUID[r.uuid] = r
}

func (g *yearGen) append(rec *journal.Record) {
	dir := core.Layout{Root: g.repo}.JournalDir(rec.Agent)
	if _, err := journal.Append(dir, rec, journal.AppendOptions{NoSync: true}); err != nil {
		g.t.Fatalf("append %s: %v", rec.UUID, err)
	}
}

// codename is a made-up word no other record holds (after analysis).
func (g *yearGen) codename() string {
	const cons, vows = "bdfgklmnprstvz", "aeiou"
	for {
		var b strings.Builder
		for range 3 {
			b.WriteByte(cons[g.rng.Intn(len(cons))])
			b.WriteByte(vows[g.rng.Intn(len(vows))])
		}
		b.WriteByte(cons[g.rng.Intn(len(cons))])
		w := b.String()
		term, ok := analysis.Term(w)
		if !ok || g.used[term] {
			continue
		}
		g.used[term] = true
		return w
	}
}

// current lists the fleet's records that no supersession or wrong flag
// retired, filtered by keep.
func (f *yearFleet) current(keep func(*yearRec) bool) []*yearRec {
	var out []*yearRec
	for _, r := range f.recs {
		if !r.retired() && keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// yearSample picks up to n of recs, spread over the year, deterministically.
func yearSample(recs []*yearRec, n int, seed int64) []*yearRec {
	if len(recs) <= n {
		return recs
	}
	rng := rand.New(rand.NewSource(seed))
	idx := rng.Perm(len(recs))[:n]
	slices.Sort(idx)
	out := make([]*yearRec, n)
	for i, j := range idx {
		out[i] = recs[j]
	}
	return out
}
