package consolidate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/compaction"
	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/consolidate"
	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/score"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func daysAgo(d float64) time.Time { return now.Add(-time.Duration(d * float64(24*time.Hour))) }

// fixture writes real journals: ada's learning records (a recurring
// topic, duplicates, a superseded one), a procedure used three times, a
// core memory and a newer record contradicting it, and decisions with
// and without outcomes.
func fixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	l := memsync.Layout{Root: root}
	add := func(r journal.Record) {
		t.Helper()
		if r.Scope == "" {
			r.Scope = journal.ScopePrivate
		}
		if _, err := journal.Append(l.JournalDir(r.Agent), &r, journal.AppendOptions{NoSync: true}); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(uuid, agent string, kind journal.Kind, tier string, ago float64, text string) journal.Record {
		return journal.Record{UUID: uuid, Agent: agent, Kind: kind, Tier: tier, TS: daysAgo(ago), Text: text}
	}
	add(rec("mem_pg1", "ada", journal.KindObservation, "learning", 5, "#postgres vacuum runs slow on the billing db"))
	add(rec("mem_pg2", "ada", journal.KindObservation, "learning", 4, "Replication lag on #postgres spikes at night"))
	add(rec("mem_pg3", "ada", journal.KindFact, "learning", 3, "#postgres 16 fixed the planner regression"))
	add(rec("mem_dup1", "ada", journal.KindObservation, "learning", 4, "The CI cache expires after two days"))
	add(rec("mem_dup2", "ada", journal.KindObservation, "learning", 2, "the ci cache expires after TWO days."))
	add(rec("mem_old", "ada", journal.KindFact, "learning", 6, "The staging cluster has three nodes"))
	newer := rec("mem_new", "ada", journal.KindFact, "learning", 1, "The staging cluster has five nodes now")
	newer.Supersedes = []string{"mem_old"}
	add(newer)
	// Shared: bob's use counts only toward a procedure bob can see.
	proc := rec("mem_proc", "ada", journal.KindProcedure, "", 9, "To rotate keys: drain, rotate, restart")
	proc.Scope = journal.ScopeShared
	add(proc)
	for i, who := range []string{"ada", "bob", "ada"} {
		r := rec("mem_use"+string(rune('1'+i)), who, journal.KindTask, "", float64(8-i), "rotated the keys again")
		r.Links = []string{"mem_proc"}
		add(r)
	}
	add(rec("mem_core", "ada", journal.KindPreference, "core", 20, "Deploys happen on Tuesdays after the standup"))
	add(rec("mem_contra", "ada", journal.KindObservation, "", 2, "Deploys never happen on Tuesdays after the standup"))
	add(rec("mem_dec_old", "ada", journal.KindDecision, "", 10, "Use blue-green deploys for the API."))
	add(rec("mem_dec_new", "ada", journal.KindDecision, "", 3, "Move the nightly jobs to 03:00"))
	add(rec("mem_dec_done", "ada", journal.KindDecision, "", 12, "Drop the legacy queue"))
	out := rec("mem_out", "ada", journal.KindOutcome, "", 1, "Dropping the queue went fine")
	out.Links = []string{"mem_dec_done"}
	out.Extra = map[string]json.RawMessage{"result": json.RawMessage(`"success"`)}
	add(out)
	return root
}

func run(t *testing.T, root string, hook func(string) error) (consolidate.Report, error) {
	t.Helper()
	return consolidate.Run(context.Background(), consolidate.Options{Root: root, Agent: "ada", NoSync: true,
		Now: func() time.Time { return now }, Hook: hook})
}

// status is what score.Evaluate says of uuid, from the journals (the
// offline signals every reader uses).
func status(t *testing.T, root, uuid string) score.Status {
	t.Helper()
	j := offline.Journals{Layout: memsync.Layout{Root: root}}
	nodes, err := j.Get(context.Background(), []string{uuid})
	if err != nil || len(nodes) != 1 {
		t.Fatalf("get %s: %v %v", uuid, nodes, err)
	}
	refs, err := j.Incoming(context.Background(), []string{uuid})
	if err != nil {
		t.Fatal(err)
	}
	var evs []score.Event
	for _, r := range refs {
		evs = append(evs, score.EventFrom(score.Relation(r.Relation), &r.Source.Record))
	}
	n := nodes[uuid]
	return score.Evaluate(score.FromRecord(&n.Record, n.InvalidAt, n.ReplacedBy), evs, now).Status
}

func actions(rep consolidate.Report, action string) []consolidate.Action {
	var out []consolidate.Action
	for _, a := range rep.Actions {
		if a.Action == action {
			out = append(out, a)
		}
	}
	return out
}

// TestConsolidate is SPEC §10 on real journals: a theme seen 3 times
// becomes one summary (and MEMORY.md lists it), a procedure used 3 times
// is proposed for core, duplicates and superseded learning records are
// archived, a core-vs-newer contradiction is listed (and the core memory
// goes to review), a decision with no outcome after a week is followed
// up until an outcome links to it; a second run changes nothing.
func TestConsolidate(t *testing.T) {
	root := fixture(t)
	dry, err := consolidate.Run(context.Background(), consolidate.Options{Root: root, Agent: "ada", DryRun: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	rep, err := run(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dry.Actions, rep.Actions) {
		t.Errorf("dry run %+v\nrun %+v", dry.Actions, rep.Actions)
	}
	if th := actions(rep, journal.ConsolidationTheme); len(th) != 1 || !reflect.DeepEqual(th[0].Targets, []string{"mem_pg1", "mem_pg2", "mem_pg3"}) ||
		!strings.Contains(th[0].Text, "#postgres in 3 learning records") {
		t.Errorf("themes %+v", th)
	}
	if pc := actions(rep, journal.ConsolidationCore); len(pc) != 1 || pc[0].Targets[0] != "mem_proc" || !strings.Contains(pc[0].Text, "used 3 times") {
		t.Errorf("core proposals %+v", pc)
	}
	pruned := map[string]bool{}
	for _, a := range actions(rep, journal.ConsolidationPrune) {
		for _, id := range a.Targets {
			pruned[id] = true
		}
	}
	if !reflect.DeepEqual(pruned, map[string]bool{"mem_dup2": true, "mem_old": true}) {
		t.Errorf("pruned %v", pruned)
	}
	if v := actions(rep, journal.ConsolidationVerify); len(v) != 1 || !reflect.DeepEqual(v[0].Targets, []string{"mem_core", "mem_contra"}) {
		t.Errorf("verify %+v", v)
	}
	if len(rep.Review) != 1 || rep.Review[0].Core != "mem_core" {
		t.Errorf("review %+v", rep.Review)
	}
	if len(rep.FollowUps) != 1 || rep.FollowUps[0].Decision != "mem_dec_old" ||
		rep.FollowUps[0].Question != "You decided Use blue-green deploys for the API on 2026-11-11. How did it turn out?" {
		t.Errorf("follow-ups %+v", rep.FollowUps)
	}
	for uuid, want := range map[string]score.Status{
		"mem_dup2": score.Archived, "mem_dup1": score.Active, "mem_old": score.Superseded,
		"mem_core": score.Review, "mem_pg1": score.Active, "mem_proc": score.Active,
	} {
		if got := status(t, root, uuid); got != want {
			t.Errorf("%s: %s, want %s", uuid, got, want)
		}
	}
	page, _ := os.ReadFile(filepath.Join(root, "agents", "ada", "memory", "MEMORY.md"))
	for _, want := range []string{"<!-- memsync:consolidation:begin -->", "Recurring topic #postgres", "`mem_proc` (used 3 times): To rotate keys",
		"You decided Use blue-green deploys for the API on 2026-11-11. How did it turn out?", "`mem_core` is contradicted by the newer `mem_contra`"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("MEMORY.md lacks %q:\n%s", want, page)
		}
	}
	after := snapshot(t, root)
	if reflect.DeepEqual(before, after) {
		t.Fatal("nothing written")
	}

	// Twice: no change.
	again, err := run(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Actions) != 0 || again.Page || !reflect.DeepEqual(snapshot(t, root), after) {
		t.Errorf("second run: %+v", again.Actions)
	}
	if len(again.FollowUps) != 1 || len(again.Review) != 1 {
		t.Errorf("second run lists %+v %+v", again.FollowUps, again.Review)
	}

	// An outcome links to the decision: the follow-up is gone.
	o := journal.Record{Agent: "ada", Kind: journal.KindOutcome, TS: now.Add(-time.Hour), Text: "blue-green worked", Links: []string{"mem_dec_old"},
		Extra: map[string]json.RawMessage{"result": json.RawMessage(`"mixed"`)}}
	if _, err := journal.Append(memsync.Layout{Root: root}.JournalDir("ada"), &o, journal.AppendOptions{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	third, err := run(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(third.FollowUps) != 0 || len(third.Actions) != 0 || !third.Page {
		t.Errorf("after the outcome: %+v, actions %+v, page %v", third.FollowUps, third.Actions, third.Page)
	}
	if page, _ := os.ReadFile(filepath.Join(root, "agents", "ada", "memory", "MEMORY.md")); strings.Contains(string(page), "blue-green deploys") {
		t.Errorf("MEMORY.md still asks:\n%s", page)
	}
}

// TestConsolidateCrash injects a crash before each step: nothing is lost,
// and the next run finishes with exactly what one clean run writes.
func TestConsolidateCrash(t *testing.T) {
	clean := fixture(t)
	if _, err := run(t, clean, nil); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, clean)
	crash := errors.New("crash")
	for _, step := range []string{consolidate.StepPromote, consolidate.StepPrune, consolidate.StepVerify, consolidate.StepOutcome, consolidate.StepPage} {
		t.Run(step, func(t *testing.T) {
			root := fixture(t)
			if _, err := run(t, root, func(s string) error {
				if s == step {
					return crash
				}
				return nil
			}); !errors.Is(err, crash) {
				t.Fatalf("crash: %v", err)
			}
			if _, err := run(t, root, nil); err != nil {
				t.Fatal(err)
			}
			if got := snapshot(t, root); !reflect.DeepEqual(got, want) {
				t.Errorf("after a crash before %s:\n%v\nwant\n%v", step, keys(got, want), "")
			}
			if rep, err := run(t, root, nil); err != nil || len(rep.Actions) != 0 {
				t.Errorf("third run: %+v %v", rep.Actions, err)
			}
		})
	}
}

// snapshot is every file under agents/ by path, with its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(filepath.Join(root, "agents"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// keys lists the files that differ.
func keys(a, b map[string]string) []string {
	var out []string
	for k := range a {
		if a[k] != b[k] {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestConsolidationInTheGraph: the consolidation records project like any
// other, and the graph path (Graph.Get, Graph.Incoming, score.Evaluate)
// says what the journals say: the pruned duplicate archived, the
// contradicted core memory up for review, nothing else moved. On the
// embedded store, and on Neo4j when MEMSYNC_NEO4J_URI names one.
func TestConsolidationInTheGraph(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		g, err := embedded.Open(t.TempDir(), zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		graphAgrees(t, g)
	})
	t.Run("neo4j", func(t *testing.T) { graphAgrees(t, neo4jtest.Open(t)) })
}

func graphAgrees(t *testing.T, g memsync.Graph) {
	root := fixture(t)
	if _, err := run(t, root, nil); err != nil {
		t.Fatal(err)
	}
	eng, err := memsync.New(memsync.Options{Root: root, Graph: g, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, uuid := range []string{"mem_dup1", "mem_dup2", "mem_old", "mem_core", "mem_pg1", "mem_proc", "mem_dec_old"} {
		nodes, err := g.Get(ctx, []string{uuid})
		if err != nil || len(nodes) != 1 {
			t.Fatalf("get %s: %v", uuid, err)
		}
		refs, err := g.Incoming(ctx, []string{uuid})
		if err != nil {
			t.Fatal(err)
		}
		var evs []score.Event
		for _, r := range refs {
			evs = append(evs, score.EventFrom(score.Relation(r.Relation), &r.Source.Record))
		}
		n := nodes[uuid]
		got := score.Evaluate(score.FromRecord(&n.Record, n.InvalidAt, n.ReplacedBy), evs, now)
		if want := status(t, root, uuid); got.Status != want {
			t.Errorf("%s: graph says %s, journals %s", uuid, got.Status, want)
		}
	}
}

// TestSchedulerRunOnce: the daemon's round consolidates every agent; an
// agent whose compaction holds its lock is left for the next round.
func TestSchedulerRunOnce(t *testing.T) {
	root := fixture(t)
	bob := journal.Record{Agent: "bob", Kind: journal.KindDecision, Scope: journal.ScopePrivate, TS: daysAgo(9), Text: "bob's decision"}
	if _, err := journal.Append(memsync.Layout{Root: root}.JournalDir("bob"), &bob, journal.AppendOptions{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	unlock, err := compaction.Lock(root, "ada")
	if err != nil {
		t.Fatal(err)
	}
	s := &consolidate.Scheduler{Root: root, Interval: time.Hour, Options: consolidate.Options{NoSync: true, Now: func() time.Time { return now }}}
	reps := s.RunOnce(context.Background())
	if len(reps) != 1 || reps[0].Agent != "bob" || len(reps[0].FollowUps) != 1 {
		t.Fatalf("with ada busy: %+v", reps)
	}
	unlock()
	reps = s.RunOnce(context.Background())
	if len(reps) != 2 || reps[0].Agent != "ada" || len(reps[0].Actions) == 0 || len(reps[1].Actions) != 0 {
		t.Fatalf("second round: %+v", reps)
	}
}

// TestSchedulerNext: a host's first daemon starts the count; the last
// round is remembered across restarts, so a round overdue runs at once.
func TestSchedulerNext(t *testing.T) {
	root := t.TempDir()
	s := &consolidate.Scheduler{Root: root, Interval: 6 * time.Hour}
	if next := s.Next(now); !next.Equal(now.Add(6 * time.Hour)) {
		t.Fatalf("first start: next %v", next)
	}
	later := now.Add(4 * time.Hour) // a restart
	if next := s.Next(later); !next.Equal(now.Add(6 * time.Hour)) {
		t.Fatalf("after a restart: next %v, want the first count kept", next)
	}
	if next := s.Next(now.Add(30 * time.Hour)); next.After(now.Add(30 * time.Hour)) {
		t.Fatalf("overdue: next %v", next)
	}
}

// TestConsolidationIgnoresCrossingSignals: records that cannot see ada's
// private memories (SPEC §7) count for nothing in her cycle: bob's use of
// her private procedure is not a use, and bob's shared record naming her
// private core memory in conflicts_with lists nothing for review.
func TestConsolidationIgnoresCrossingSignals(t *testing.T) {
	root := t.TempDir()
	l := memsync.Layout{Root: root}
	add := func(r journal.Record) {
		t.Helper()
		if _, err := journal.Append(l.JournalDir(r.Agent), &r, journal.AppendOptions{NoSync: true}); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(uuid, agent string, kind journal.Kind, scope journal.Scope, ago float64, text string) journal.Record {
		return journal.Record{UUID: uuid, Agent: agent, Kind: kind, Scope: scope, TS: daysAgo(ago), Text: text}
	}
	add(rec("mem_proc", "ada", journal.KindProcedure, journal.ScopePrivate, 9, "To rotate keys: drain, rotate, restart"))
	for i, who := range []string{"ada", "bob", "ada"} {
		r := rec("mem_use"+string(rune('1'+i)), who, journal.KindTask, journal.ScopeShared, float64(8-i), "rotated the keys again")
		r.Links = []string{"mem_proc"}
		add(r)
	}
	core := rec("mem_core", "ada", journal.KindPreference, journal.ScopePrivate, 20, "Deploys happen on Tuesdays after the standup")
	core.Tier = "core"
	add(core)
	contra := rec("mem_bob_contra", "bob", journal.KindFact, journal.ScopeShared, 2, "the deploy day changed")
	contra.ConflictsWith = []string{"mem_core"}
	add(contra)
	rep, err := run(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{journal.ConsolidationCore, journal.ConsolidationVerify} {
		if got := actions(rep, action); len(got) != 0 {
			t.Errorf("%s: %+v, want none (bob cannot see ada's private memories)", action, got)
		}
	}
	if st := status(t, root, "mem_core"); st != score.Active {
		t.Errorf("mem_core is %s, want active", st)
	}
}
