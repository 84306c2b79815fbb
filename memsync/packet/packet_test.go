package packet

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/score"
)

var clock = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// scored evaluates rec with events at asOf, as ScoreNodes would.
func scored(rec journal.Record, asOf time.Time, events ...score.Event) memsync.Scored {
	n := memsync.Node{Memory: memsync.Memory{Record: rec}}
	m := score.FromRecord(&n.Record, time.Time{}, "")
	r := score.Evaluate(m, events, asOf)
	return memsync.Scored{Node: n, Result: r, Freshness: score.Freshness(m, r, asOf)}
}

func rec(uuid, agent string, kind journal.Kind, scope journal.Scope, day int, text string) journal.Record {
	return journal.Record{UUID: uuid, Agent: agent, Kind: kind, Scope: scope, TS: clock.Add(time.Duration(day) * score.Day), Text: text}
}

// Build is a function of the set of candidates: any order, duplicates
// included, gives the same packet.
func TestBuildOrderIndependent(t *testing.T) {
	asOf := clock.Add(30 * score.Day)
	var cands []memsync.Scored
	kinds := []journal.Kind{journal.KindPreference, journal.KindProcedure, journal.KindReflection, journal.KindFact, journal.KindSummary, journal.KindDecision}
	for i := 0; i < 80; i++ {
		r := rec(fmt.Sprintf("mem_%03d", i), "alice", kinds[i%len(kinds)], journal.ScopeShared, i%25, fmt.Sprintf("ship the release step %d", i%9))
		if i%5 == 0 {
			r.Task = "T1"
		}
		cands = append(cands, scored(r, asOf))
	}
	req := Request{Role: Executor, Agent: "alice", Goal: "ship the release", Task: "T1", AsOf: asOf}
	want, _ := json.Marshal(Build(req, cands))
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		shuffled := append([]memsync.Scored(nil), cands...)
		shuffled = append(shuffled, cands[rng.Intn(len(cands))])
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if got, _ := json.Marshal(Build(req, shuffled)); string(got) != string(want) {
			t.Fatalf("shuffle %d changed the packet:\n%s\n%s", i, got, want)
		}
	}
}

// Build leaves out what the agent may not see, what comes after an --as-of,
// and what is archived or superseded, whatever a caller hands it.
func TestBuildLeavesOut(t *testing.T) {
	asOf := clock.Add(10 * score.Day)
	priv := rec("mem_bob", "bob", journal.KindPreference, journal.ScopePrivate, 0, "ship the release BOBSECRET")
	priv.Tier = "core"
	late := rec("mem_late", "alice", journal.KindPreference, journal.ScopeShared, 11, "ship the release later")
	wrong := rec("mem_wrong", "alice", journal.KindPreference, journal.ScopeShared, 0, "ship the release wrongly")
	flag := score.Event{UUID: "mem_flag", TS: clock.Add(score.Day), Agent: "alice", Kind: journal.KindFeedback, Relation: score.Links, Feedback: journal.FeedbackWrong, Visible: true}
	old := rec("mem_old", "alice", journal.KindPreference, journal.ScopeShared, 0, "ship the release old way")
	oldScored := scored(old, asOf)
	oldScored.Result.Status = score.Superseded
	ok := rec("mem_ok", "alice", journal.KindPreference, journal.ScopeShared, 0, "ship the release")
	p := Build(Request{Role: Planner, Agent: "alice", Goal: "ship the release", AsOf: asOf, Cutoff: true},
		[]memsync.Scored{scored(priv, asOf), scored(late, asOf), scored(wrong, asOf, flag), oldScored, scored(ok, asOf)})
	b, _ := json.Marshal(p)
	for _, id := range []string{"mem_bob", "BOBSECRET", "mem_late", "mem_wrong", "mem_old"} {
		if strings.Contains(string(b), id) {
			t.Errorf("packet holds %s: %s", id, b)
		}
	}
	if len(p.HardConstraints) != 1 || p.HardConstraints[0].UUID != "mem_ok" {
		t.Fatalf("hard constraints %+v", p.HardConstraints)
	}
}

// TestOpenQuestionsAskTheFollowUp: a packet's open questions are the
// decisions score.AwaitingOutcomeOf names, asked in score.FollowUpQuestion's
// words. The packet once kept its own copy of both: it took any outcome
// among the effects for an answer (so an outcome that contradicts the
// decision closed it, and one stamped before it did not) and quoted the
// text with Go escapes.
func TestOpenQuestionsAskTheFollowUp(t *testing.T) {
	asOf := clock.Add(10 * score.Day)
	open := rec("mem_open", "alice", journal.KindDecision, journal.ScopeShared, 0, `Use "blue-green" deploys.`)
	contra := rec("mem_contra", "alice", journal.KindDecision, journal.ScopeShared, 0, "use kafka for the queue")
	against := score.Event{UUID: "mem_out1", TS: clock.Add(2 * score.Day), Agent: "alice", Kind: journal.KindOutcome, Relation: score.ConflictsWith, Result: journal.ResultFailure, Visible: true}
	early := rec("mem_early", "alice", journal.KindDecision, journal.ScopeShared, 0, "use kafka for the log")
	before := score.Event{UUID: "mem_out2", TS: clock.Add(-time.Hour), Agent: "alice", Kind: journal.KindOutcome, Relation: score.Links, Result: journal.ResultFailure, Visible: true}
	p := Build(Request{Role: Planner, Agent: "alice", Goal: "deploys kafka", AsOf: asOf},
		[]memsync.Scored{scored(open, asOf), scored(contra, asOf, against), scored(early, asOf, before)})
	var got []string
	for _, it := range p.OpenQuestions {
		got = append(got, it.UUID+": "+it.Text)
	}
	want := []string{
		"mem_contra: " + score.FollowUpQuestion(contra.Text, contra.TS),
		"mem_open: You decided Use \"blue-green\" deploys on 2026-11-20. How did it turn out?",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("open questions\n%q\nwant\n%q", got, want)
	}
}

func TestParseRoleAndRouting(t *testing.T) {
	for _, tc := range []struct {
		role  Role
		reads []Class
	}{
		{Planner, []Class{Preference, Procedure, Summary}},
		{Executor, []Class{Preference, Procedure, Reflection, Episode}},
		{Critic, []Class{Preference, Reflection, Summary}},
		{Responder, []Class{Preference, Procedure, Summary}},
	} {
		if r, err := ParseRole(string(tc.role)); err != nil || r != tc.role {
			t.Fatalf("ParseRole(%q) = %q, %v", tc.role, r, err)
		}
		var got []Class
		for _, c := range Classes {
			if tc.role.Reads(c) {
				got = append(got, c)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.reads) {
			t.Errorf("%s reads %v, want %v", tc.role, got, tc.reads)
		}
	}
	if _, err := ParseRole("boss"); err == nil {
		t.Fatal("ParseRole(boss) accepted")
	}
	for k, want := range map[journal.Kind]Class{journal.KindCompaction: Summary, journal.KindOutcome: Episode, journal.KindConflict: Episode, journal.KindPromotion: Episode} {
		if c, ok := ClassOf(k); !ok || c != want {
			t.Errorf("ClassOf(%s) = %s", k, c)
		}
	}
	if _, ok := ClassOf(journal.KindFeedback); ok {
		t.Error("feedback is a class")
	}
}

// Markdown stays under its budget with every field full of long texts.
func TestMarkdownBudget(t *testing.T) {
	long := strings.Repeat("ü", 300) + strings.Repeat(" word", 200)
	it := Item{UUID: "mem_20261120T090000Z_averylongagentname_0001", Kind: "preference", Agent: "a", TS: "2026-11-20T09:00:00Z", Text: long, Why: long}
	fill := func(n int) []Item {
		out := make([]Item, n)
		for i := range out {
			out[i] = it
		}
		return out
	}
	p := Packet{Role: "executor", Agent: "averylongagentname", Goal: long, Task: long, Session: long, AsOf: "2026-11-20T09:00:00Z",
		Core: fill(CapCore), HardConstraints: fill(CapHardConstraints), ProceduresToFollow: fill(CapProcedures),
		PitfallsToAvoid: fill(CapPitfalls), RelevantFacts: fill(CapRelevantFacts), OpenQuestions: fill(CapOpenQuestions),
		SelectedMemoryIDs: []string{it.UUID, it.UUID, it.UUID, it.UUID, it.UUID, it.UUID, it.UUID, it.UUID, it.UUID, it.UUID}}
	md := Markdown(p)
	if len(md) > MarkdownBudget || strings.Count(md, it.UUID) < 23 {
		t.Fatalf("%d bytes:\n%s", len(md), md)
	}
}

// TestBuildRoleKindsAreWeights: a planner reads no episodes, yet a
// decision scoped to its task or session, or one that answers the goal
// clearly better than every memory of the planner's kinds, enters
// relevant_facts; one that answers no better stays out (SPEC §8.4).
func TestBuildRoleKindsAreWeights(t *testing.T) {
	asOf := clock.Add(3 * score.Day)
	goal := "billing migration to postgres" // terms: bill, migrat, postgr
	with := func(r journal.Record, f func(*journal.Record)) journal.Record { f(&r); return r }
	proc := func(text string) journal.Record {
		return rec("mem_proc", "alice", journal.KindProcedure, journal.ScopeShared, 0, text)
	}
	dec := func(text string) journal.Record {
		return rec("mem_dec", "alice", journal.KindDecision, journal.ScopeShared, 1, text)
	}
	for _, tc := range []struct {
		name string
		recs []journal.Record
		req  func(*Request)
		in   bool
		why  string
	}{
		{"task-scoped, no goal word", []journal.Record{proc("billing runbook"), with(dec("pick the weekend"), func(r *journal.Record) { r.Task = "BILL-42" })},
			func(q *Request) { q.Task = "BILL-42" }, true, "in scope"},
		{"session-scoped, no goal word", []journal.Record{proc("billing runbook"), with(dec("pick the weekend"), func(r *journal.Record) { r.Session = "S1" })},
			func(q *Request) { q.Session = "S1" }, true, "in scope"},
		{"another task", []journal.Record{proc("billing runbook"), with(dec("pick the weekend"), func(r *journal.Record) { r.Task = "BILL-41" })},
			func(q *Request) { q.Task = "BILL-42" }, false, ""},
		{"3/3 against 1/3: clearly better", []journal.Record{proc("billing runbook"), dec("the billing migration goes to postgres")},
			nil, true, "clearly better"},
		{"3/3 against 2/3: exactly 1.5×", []journal.Record{proc("billing migration runbook"), dec("the billing migration goes to postgres")},
			nil, true, "clearly better"},
		{"2/3 against 2/3: as well", []journal.Record{proc("billing migration runbook"), dec("the billing migration starts monday")},
			nil, false, ""},
		{"2/3 against 1/3: twice as good", []journal.Record{proc("billing runbook"), dec("the billing migration starts monday")},
			nil, true, "clearly better"},
		{"1/3 with no role-kind match: one word beats none", []journal.Record{proc("release runbook"), dec("postgres is fast")},
			nil, true, "clearly better"},
		{"1/3 against 1/3: as well", []journal.Record{proc("billing runbook"), dec("the billing service is slow")},
			nil, false, ""},
		{"no goal word at all", []journal.Record{proc("release runbook"), dec("the weekend is free")},
			nil, false, ""},
		{"2/3 with no role-kind match", []journal.Record{proc("release runbook"), dec("postgres migration done")},
			nil, true, "clearly better"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Role: Planner, Agent: "alice", Goal: goal, AsOf: asOf}
			if tc.req != nil {
				tc.req(&req)
			}
			var cands []memsync.Scored
			for _, r := range tc.recs {
				cands = append(cands, scored(r, asOf))
			}
			p := Build(req, cands)
			got := false
			for _, it := range p.RelevantFacts {
				if it.UUID == "mem_dec" {
					got = true
					if !strings.Contains(it.Why, tc.why) {
						t.Errorf("why %q, want %q", it.Why, tc.why)
					}
				}
			}
			if got != tc.in {
				b, _ := json.Marshal(p)
				t.Fatalf("decision in relevant_facts = %v, want %v: %s", got, tc.in, b)
			}
			if len(p.ProceduresToFollow) != 1 {
				t.Fatalf("procedures %+v", p.ProceduresToFollow)
			}
		})
	}
}

// TestBuildOffRoleRanksBelow: of a summary (a planner's kind) and a
// decision of the same relevance, both scoped to the task, the summary
// ranks first; the off-role one still takes a free place.
func TestBuildOffRoleRanksBelow(t *testing.T) {
	asOf := clock.Add(3 * score.Day)
	sum := rec("mem_b_sum", "alice", journal.KindSummary, journal.ScopeShared, 1, "billing migration to postgres: where it stands")
	dec := rec("mem_a_dec", "alice", journal.KindDecision, journal.ScopeShared, 1, "billing migration to postgres: where it stands")
	sum.Task, dec.Task = "BILL-42", "BILL-42"
	p := Build(Request{Role: Planner, Agent: "alice", Goal: "billing migration to postgres", Task: "BILL-42", AsOf: asOf},
		[]memsync.Scored{scored(dec, asOf), scored(sum, asOf)})
	if got := fmt.Sprint(ids(p.RelevantFacts)); got != "[mem_b_sum mem_a_dec]" {
		t.Fatalf("relevant facts %s, want the summary first", got)
	}
	if d := p.RelevantFacts[0].Score - p.RelevantFacts[1].Score; d < OffRolePenalty-1e-9 {
		t.Fatalf("scores %v and %v: want the off-role one %v lower", p.RelevantFacts[0].Score, p.RelevantFacts[1].Score, OffRolePenalty)
	}
}

func ids(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.UUID)
	}
	return out
}

// TestBuildAnalyzerOverlap: goal overlap compares memsync/analysis terms,
// as search does: word forms meet through Porter stems, whatever the case
// and stopwords. Porter's own quirk stays: "deployment" stems to deploy,
// "deploy" to deploi, so that pair meets only on its other words.
func TestBuildAnalyzerOverlap(t *testing.T) {
	asOf := clock.Add(3 * score.Day)
	for _, tc := range []struct{ goal, text, why string }{
		{"migrating our billing database", "Migration of the billing DATABASES: freeze writes first", "goal 3/3 words"},
		{"deployments of the billing services", "deployment: billing service canary first", "goal 3/3 words"},
		{"deployment of billing", "deploy billing: canary first, then the fleet", "goal 1/2 words"},
	} {
		t.Run(tc.goal, func(t *testing.T) {
			proc := rec("mem_proc", "alice", journal.KindProcedure, journal.ScopeShared, 0, tc.text)
			p := Build(Request{Role: Planner, Agent: "alice", Goal: tc.goal, AsOf: asOf}, []memsync.Scored{scored(proc, asOf)})
			if len(p.ProceduresToFollow) != 1 || !strings.Contains(p.ProceduresToFollow[0].Why, tc.why) {
				t.Fatalf("procedures %+v, want %q", p.ProceduresToFollow, tc.why)
			}
		})
	}
}

// TestBuildAtThePresentSeesFutureDated: without a cutoff (no --as-of) a
// record dated after the clock (another host's clock runs ahead) is in the
// packet, as search finds it (SPEC §7 "The clock").
func TestBuildAtThePresentSeesFutureDated(t *testing.T) {
	now := clock.Add(10 * score.Day)
	late := rec("mem_late", "alice", journal.KindPreference, journal.ScopeShared, 11, "ship the release later")
	for _, cutoff := range []bool{false, true} {
		p := Build(Request{Role: Planner, Agent: "alice", Goal: "ship the release", AsOf: now, Cutoff: cutoff}, []memsync.Scored{scored(late, now)})
		if got := len(p.HardConstraints) == 1; got == cutoff {
			t.Fatalf("cutoff %v: hard constraints %+v", cutoff, p.HardConstraints)
		}
	}
}

// TestBuildEmptyOnlyWithoutGoalTerm (issue 49 item 1): for every role
// and every kind, a packet whose only memory shares one term of three
// with the goal shows it; one whose only memory shares none is empty
// unless the role reads its kind (durable memories are always offered).
// The README's own case, a planner planning "the billing migration" with
// only the decision "Use #postgres for @Mira's billing service", is one
// of them.
func TestBuildEmptyOnlyWithoutGoalTerm(t *testing.T) {
	asOf := clock.Add(2 * score.Day)
	goal := "plan the billing migration" // terms: plan, bill, migrat
	kinds := []journal.Kind{journal.KindPreference, journal.KindProcedure, journal.KindReflection, journal.KindSummary,
		journal.KindDecision, journal.KindFact, journal.KindObservation, journal.KindTask, journal.KindOutcome}
	for _, role := range Roles {
		for _, kind := range kinds {
			for _, tc := range []struct {
				text  string
				share bool
			}{{"Use #postgres for @Mira's billing service", true}, {"Deploys happen on Tuesdays", false}} {
				t.Run(fmt.Sprintf("%s/%s/share=%v", role, kind, tc.share), func(t *testing.T) {
					r := rec("mem_one", "planner", kind, journal.ScopeShared, 1, tc.text)
					p := Build(Request{Role: role, Agent: "critic", Goal: goal, AsOf: asOf}, []memsync.Scored{scored(r, asOf)})
					var shown []string
					for _, f := range [][]Item{p.Core, p.HardConstraints, p.ProceduresToFollow, p.PitfallsToAvoid, p.RelevantFacts, p.OpenQuestions} {
						for _, it := range f {
							shown = append(shown, it.UUID)
						}
					}
					c, _ := ClassOf(kind)
					want := tc.share || role.Reads(c)
					if got := len(shown) == 1; got != want {
						b, _ := json.Marshal(p)
						t.Fatalf("shown %v, want the memory: %v\n%s", shown, want, b)
					}
				})
			}
		}
	}
}

// TestKeepSelectsWhatIsShown (issue 49 item 3): Keep leaves the packet
// Build made as it is when it keeps everything, and otherwise makes the
// selection again from what is left: the core tier's and the best
// CapSelected of the rest, never an id it no longer shows.
func TestKeepSelectsWhatIsShown(t *testing.T) {
	asOf := clock.Add(3 * score.Day)
	var cands []memsync.Scored
	kinds := []journal.Kind{journal.KindPreference, journal.KindProcedure, journal.KindReflection, journal.KindFact}
	for i := 0; i < 16; i++ {
		r := rec(fmt.Sprintf("mem_%02d", i), "alice", kinds[i%len(kinds)], journal.ScopeShared, i%3, fmt.Sprintf("ship the release step %d", i))
		if i == 0 {
			r.Tier = "core"
		}
		cands = append(cands, scored(r, asOf))
	}
	p := Build(Request{Role: Executor, Agent: "alice", Goal: "ship the release", AsOf: asOf}, cands)
	if len(p.SelectedMemoryIDs) != 1+CapSelected || p.SelectedMemoryIDs[0] != "mem_00" {
		t.Fatalf("selected %v", p.SelectedMemoryIDs)
	}
	all, _ := json.Marshal(p.Keep(func(Item) bool { return true }))
	if want, _ := json.Marshal(p); string(all) != string(want) {
		t.Fatalf("Keep(everything) changed the packet:\n%s\n%s", all, want)
	}
	for _, tc := range []struct {
		name string
		drop []string
	}{
		{"no core", []string{"mem_00"}},
		{"no core, not the best two", []string{"mem_00", p.SelectedMemoryIDs[1], p.SelectedMemoryIDs[2]}},
		{"nothing left", shownIDs(p)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := p.Keep(func(it Item) bool { return !slices.Contains(tc.drop, it.UUID) })
			shown := shownIDs(k)
			for _, id := range k.SelectedMemoryIDs {
				if !slices.Contains(shown, id) {
					t.Fatalf("selected %s, not shown: %v", id, shown)
				}
			}
			if want := min(CapSelected, len(shown)); len(k.SelectedMemoryIDs) != want {
				t.Fatalf("selected %v of %v, want %d", k.SelectedMemoryIDs, shown, want)
			}
		})
	}
	if len(p.Core) != 1 || len(p.SelectedMemoryIDs) != 1+CapSelected {
		t.Fatal("Keep changed the packet it was called on")
	}
}

// shownIDs is every uuid p shows, fields in order.
func shownIDs(p Packet) []string {
	var out []string
	for _, f := range [][]Item{p.Core, p.HardConstraints, p.ProceduresToFollow, p.PitfallsToAvoid, p.RelevantFacts, p.OpenQuestions} {
		for _, it := range f {
			if it.UUID != "" {
				out = append(out, it.UUID)
			}
		}
	}
	return out
}

// TestMarkdownSaysWhyEmpty (issue 49 item 5): a packet with no item says
// why instead of printing a header with nothing under it; one with an
// item, or a question of the step, does not.
func TestMarkdownSaysWhyEmpty(t *testing.T) {
	asOf := clock.Add(score.Day)
	fact := scored(rec("mem_f", "alice", journal.KindFact, journal.ScopeShared, 0, "deploys happen on tuesdays"), asOf)
	for _, tc := range []struct {
		name  string
		req   Request
		cands []memsync.Scored
		want  string // "" for no explanation
	}{
		{"nothing shares a word", Request{Role: Planner, Agent: "alice", Goal: "plan the billing migration", AsOf: asOf}, []memsync.Scored{fact},
			"Nothing for this step: of the memories alice may see, none is of the kinds a planner reads (preference, procedure, summary),"},
		{"no memory at all", Request{Role: Critic, Agent: "bob", Goal: "review", AsOf: asOf}, nil,
			"none is of the kinds a critic reads (preference, reflection, summary)"},
		{"a word shared", Request{Role: Planner, Agent: "alice", Goal: "plan the tuesday deploys", AsOf: asOf}, []memsync.Scored{fact}, ""},
		{"a question of the step", Request{Role: Planner, Agent: "alice", Goal: "plan the billing migration", Questions: []string{"who owns it?"}, AsOf: asOf}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := Markdown(Build(tc.req, tc.cands))
			if tc.want == "" {
				if strings.Contains(md, "Nothing for this step") {
					t.Fatalf("an explanation in a packet with items:\n%s", md)
				}
				return
			}
			if !strings.Contains(md, tc.want) {
				t.Fatalf("want %q in:\n%s", tc.want, md)
			}
		})
	}
}
