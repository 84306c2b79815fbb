package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/packet"
)

// packetBackend is a reader `memsync packet` is pointed at, through the
// built binary: the embedded store, Neo4j, or no graph at all (offline,
// from the journals).
type packetBackend struct {
	name    string
	offline bool
	env     func(t *testing.T) []string
}

var packetBackends = []packetBackend{
	{"embedded", false, func(t *testing.T) []string { return []string{"MEMSYNC_GRAPH=embedded"} }},
	{"neo4j", false, func(t *testing.T) []string {
		neo4jtest.Open(t) // an empty graph, and the server to this test alone
		return []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=" + os.Getenv("MEMSYNC_NEO4J_URI")}
	}},
	{"offline", true, func(t *testing.T) []string {
		return []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=bolt://127.0.0.1:1"}
	}},
}

// packetRun runs `memsync packet` through the built binary on one backend.
type packetRun struct {
	b    packetBackend
	env  []string
	repo string
}

// onEveryBackend writes recs into a new repository and calls fn once per
// backend, with the graph projected (when there is one).
func onEveryBackend(t *testing.T, recs []journal.Record, fn func(t *testing.T, pr packetRun)) {
	t.Helper()
	for _, b := range packetBackends {
		t.Run(b.name, func(t *testing.T) {
			env := b.env(t)
			repo := searchRepo(t, recs...)
			if !b.offline {
				if code, out, errOut := binRun(t, env, "sync", "--once", "--repo", repo); code != 0 {
					t.Fatalf("sync: %d\n%s%s", code, out, errOut)
				}
			}
			fn(t, packetRun{b: b, env: env, repo: repo})
		})
	}
}

// raw runs packet with args and returns exit code and streams.
func (pr packetRun) raw(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return binRun(t, pr.env, append([]string{"packet", "--repo", pr.repo}, args...)...)
}

// json runs packet --json and decodes it, checking the offline flag and
// the stderr note.
func (pr packetRun) json(t *testing.T, args ...string) packet.Packet {
	t.Helper()
	code, out, errOut := pr.raw(t, append([]string{"--json"}, args...)...)
	if code != 0 {
		t.Fatalf("packet %q: exit %d\n%s", args, code, errOut)
	}
	var p packet.Packet
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("packet --json printed %q: %v", out, err)
	}
	if p.Offline != pr.b.offline {
		t.Fatalf("offline = %v on %s", p.Offline, pr.b.name)
	}
	if pr.b.offline && (strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "offline")) {
		t.Fatalf("offline packet: want a one-line note on stderr, got %q", errOut)
	}
	if !pr.b.offline && errOut != "" {
		t.Fatalf("online packet wrote to stderr: %q", errOut)
	}
	return p
}

func asOfDay(n int) string { return dayAt(n).Format(time.RFC3339) }

func ids(items []packet.Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.UUID)
	}
	return out
}

// everyItem is every item of p, fields in order.
func everyItem(p packet.Packet) []packet.Item {
	var out []packet.Item
	for _, f := range [][]packet.Item{p.Core, p.HardConstraints, p.ProceduresToFollow, p.PitfallsToAvoid, p.RelevantFacts, p.OpenQuestions} {
		out = append(out, f...)
	}
	return out
}

func withSession(s string) func(*journal.Record) { return func(r *journal.Record) { r.Session = s } }
func withTask(s string) func(*journal.Record)    { return func(r *journal.Record) { r.Task = s } }
func supersedes(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.Supersedes = ids }
}
func conflictsWith(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.ConflictsWith = ids }
}
func supports(ids ...string) func(*journal.Record) { return extra(journal.FieldSupports, ids) }
func coreTier(r *journal.Record)                   { r.Tier = "core" }

// TestPacketPlannerReusesDurablePreference: a preference written weeks
// ago, in another session, is in a planner's hard constraints for a new
// goal; the episodes the planner does not read are not.
func TestPacketPlannerReusesDurablePreference(t *testing.T) {
	recs := []journal.Record{
		srec("mem_pref_units", "alice", 0, "weather reports always use metric units, never imperial", sShared, ofKind(journal.KindPreference), withSession("s1")),
		srec("mem_obs_rain", "alice", 0, "the weather report for monday said rain", sShared, at(1), ofKind(journal.KindObservation), withSession("s1")),
		srec("mem_proc_report", "alice", 0, "to write a weather report: fetch the forecast, then summarise the week", sShared, at(2), ofKind(journal.KindProcedure)),
		srec("mem_noise", "alice", 0, "lunch is at noon", sShared, at(3), ofKind(journal.KindPreference)),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		p := pr.json(t, "--role", "planner", "--agent", "alice", "--goal", "plan the weekly weather report", "--session", "s9", "--as-of", asOfDay(40))
		if len(p.HardConstraints) == 0 || p.HardConstraints[0].UUID != "mem_pref_units" {
			t.Fatalf("hard constraints %v, want mem_pref_units first", ids(p.HardConstraints))
		}
		if !slices.Equal(ids(p.ProceduresToFollow), []string{"mem_proc_report"}) {
			t.Fatalf("procedures %v", ids(p.ProceduresToFollow))
		}
		for _, it := range everyItem(p) {
			if it.UUID == "mem_obs_rain" {
				t.Fatalf("a planner got an episode: %+v", it)
			}
		}
		it := p.HardConstraints[0]
		if it.Kind != "preference" || it.Agent != "alice" || it.TS != "2026-11-20T09:00:00Z" || it.Why == "" || !strings.Contains(it.Why, "durable") {
			t.Fatalf("item %+v", it)
		}
		if !slices.Contains(p.SelectedMemoryIDs, "mem_pref_units") {
			t.Fatalf("selected %v", p.SelectedMemoryIDs)
		}
	})
}

// TestPacketExecutorKeepsConstraintsAndProcedures: an executor's packet
// holds both the hard constraints and the reusable procedures of its goal,
// with the facts it reads and the reflections as pitfalls.
func TestPacketExecutorKeepsConstraintsAndProcedures(t *testing.T) {
	recs := []journal.Record{
		srec("mem_pref_notes", "alice", 0, "deploy notes are written in plain english", sShared, ofKind(journal.KindPreference)),
		srec("mem_pref_window", "bob", 0, "never deploy the billing service on a friday", sShared, at(1), ofKind(journal.KindPreference)),
		srec("mem_proc_deploy", "alice", 0, "to deploy the billing service: run migrations, roll the canary, then the fleet", sShared, at(2), ofKind(journal.KindProcedure)),
		srec("mem_refl_canary", "alice", 0, "the billing deploy broke when the canary was skipped", at(3), ofKind(journal.KindReflection)),
		srec("mem_fact_port", "bob", 0, "the billing service listens on port 8443", sShared, at(4)),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		p := pr.json(t, "--role", "executor", "--agent", "alice", "--goal", "deploy the billing service", "--as-of", asOfDay(10))
		hc := ids(p.HardConstraints)
		if len(hc) != 2 || !slices.Contains(hc, "mem_pref_notes") || !slices.Contains(hc, "mem_pref_window") {
			t.Fatalf("hard constraints %v", hc)
		}
		if !slices.Equal(ids(p.ProceduresToFollow), []string{"mem_proc_deploy"}) {
			t.Fatalf("procedures %v", ids(p.ProceduresToFollow))
		}
		if !slices.Equal(ids(p.PitfallsToAvoid), []string{"mem_refl_canary"}) || !slices.Contains(ids(p.RelevantFacts), "mem_fact_port") {
			t.Fatalf("pitfalls %v facts %v", ids(p.PitfallsToAvoid), ids(p.RelevantFacts))
		}
		// A critic reads no procedures; a responder reads no reflections.
		if p := pr.json(t, "--role", "critic", "--agent", "alice", "--goal", "deploy the billing service", "--as-of", asOfDay(10)); len(p.ProceduresToFollow) != 0 || len(p.PitfallsToAvoid) != 1 {
			t.Fatalf("critic: %+v", p)
		}
		if p := pr.json(t, "--role", "responder", "--agent", "alice", "--goal", "deploy the billing service", "--as-of", asOfDay(10)); len(p.PitfallsToAvoid) != 0 || len(p.ProceduresToFollow) != 1 {
			t.Fatalf("responder: %+v", p)
		}
	})
}

// TestPacketReflectionBecomesProcedure: a lesson written as a reflection,
// then made a procedure that links it, is reusable procedure memory: the
// procedure is followed (by a planner too, who reads no reflections) and
// says what it was learned from.
func TestPacketReflectionBecomesProcedure(t *testing.T) {
	recs := []journal.Record{
		srec("mem_refl", "alice", 0, "the import job failed because the schema check ran after the load", ofKind(journal.KindReflection)),
		srec("mem_proc", "alice", 0, "import job: run the schema check before the load, stop on the first error", at(1),
			ofKind(journal.KindProcedure), linksTo("mem_refl")),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		for _, role := range []string{"planner", "executor"} {
			p := pr.json(t, "--role", role, "--agent", "alice", "--goal", "run the nightly import job", "--as-of", asOfDay(3))
			if len(p.ProceduresToFollow) != 1 || p.ProceduresToFollow[0].UUID != "mem_proc" {
				t.Fatalf("%s: procedures %v", role, ids(p.ProceduresToFollow))
			}
			proc := p.ProceduresToFollow[0]
			if !slices.Equal(proc.BuildsOn, []string{"mem_refl"}) || !strings.Contains(proc.Why, "learned from reflection mem_refl") {
				t.Fatalf("%s: procedure %+v", role, proc)
			}
			wantPitfalls := map[string][]string{"planner": {}, "executor": {"mem_refl"}}[role]
			if !slices.Equal(ids(p.PitfallsToAvoid), wantPitfalls) {
				t.Fatalf("%s: pitfalls %v", role, ids(p.PitfallsToAvoid))
			}
		}
		// The lesson earned importance by being built on.
		p := pr.json(t, "--role", "executor", "--agent", "alice", "--goal", "run the nightly import job", "--as-of", asOfDay(3))
		if p.PitfallsToAvoid[0].Importance != 0.6 {
			t.Fatalf("reflection importance %v, want 0.6", p.PitfallsToAvoid[0].Importance)
		}
	})
}

// TestPacketReplacementRetiresStale: a record that supersedes another
// retires it: the stale one is in no packet, the new one names what it
// replaces, and the stale one keeps a forward link (replaced_by).
func TestPacketReplacementRetiresStale(t *testing.T) {
	recs := []journal.Record{
		srec("mem_old", "alice", 0, "to rotate the api keys, email the security team", sShared, ofKind(journal.KindProcedure)),
		srec("mem_new", "alice", 0, "to rotate the api keys, run the vault rotate job", sShared, at(5), ofKind(journal.KindProcedure), supersedes("mem_old")),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		args := []string{"--role", "executor", "--agent", "alice", "--goal", "rotate the api keys"}
		before := pr.json(t, append(args, "--as-of", asOfDay(2))...)
		if !slices.Equal(ids(before.ProceduresToFollow), []string{"mem_old"}) {
			t.Fatalf("before the replacement: %v", ids(before.ProceduresToFollow))
		}
		after := pr.json(t, append(args, "--as-of", asOfDay(6))...)
		if !slices.Equal(ids(after.ProceduresToFollow), []string{"mem_new"}) || !slices.Equal(after.ProceduresToFollow[0].Replaces, []string{"mem_old"}) {
			t.Fatalf("after the replacement: %+v", after.ProceduresToFollow)
		}
		for _, it := range everyItem(after) {
			if it.UUID == "mem_old" || slices.Contains(after.SelectedMemoryIDs, "mem_old") {
				t.Fatalf("the stale memory is in the packet: %+v", it)
			}
		}
		code, out, errOut := binRun(t, pr.env, "explain", "mem_old", "--agent", "alice", "--json", "--repo", pr.repo, "--as-of", asOfDay(6))
		var ex explainResult
		if code != 0 || json.Unmarshal([]byte(out), &ex) != nil || ex.Status != "superseded" || ex.ReplacedBy != "mem_new" {
			t.Fatalf("explain the stale memory: %d %s %s", code, out, errOut)
		}
	})
}

// TestPacketNewerContradictionOutranksStale: a newer preference that
// contradicts an older one outranks it; the stale one is penalised (and
// says by what), the newer one is not.
func TestPacketNewerContradictionOutranksStale(t *testing.T) {
	recs := []journal.Record{
		srec("mem_tabs", "alice", 0, "indent the billing code with tabs", sShared, ofKind(journal.KindPreference)),
		srec("mem_spaces", "bob", 0, "indent the billing code with four spaces", sShared, at(3), ofKind(journal.KindPreference), conflictsWith("mem_tabs")),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		p := pr.json(t, "--role", "executor", "--agent", "alice", "--goal", "indent the billing code with tabs", "--as-of", asOfDay(4))
		hc := ids(p.HardConstraints)
		if len(hc) == 0 || hc[0] != "mem_spaces" {
			t.Fatalf("hard constraints %v: the newer contradicting memory must lead", hc)
		}
		for _, it := range p.HardConstraints {
			switch it.UUID {
			case "mem_tabs":
				if !strings.Contains(it.Why, "contradicted by mem_spaces") || it.Importance != 0.3 {
					t.Fatalf("stale: %+v", it)
				}
			case "mem_spaces":
				if strings.Contains(it.Why, "contradicted") || it.Importance != 0.5 {
					t.Fatalf("newer: %+v", it)
				}
			}
		}
		// Before the contradiction, the better match led.
		if p := pr.json(t, "--role", "executor", "--agent", "alice", "--goal", "indent the billing code with tabs", "--as-of", asOfDay(2)); !slices.Equal(ids(p.HardConstraints), []string{"mem_tabs"}) {
			t.Fatalf("before: %v", ids(p.HardConstraints))
		}
	})
}

// TestPacketSupportedProcedureOutranksStronger: of two procedures for the
// goal, the one a later record supports outranks the slightly stronger
// match that nothing supports; before the support, the stronger led.
func TestPacketSupportedProcedureOutranksStronger(t *testing.T) {
	recs := []journal.Record{
		srec("mem_strong", "alice", 0, "restore the orders database from the nightly snapshot", sShared, ofKind(journal.KindProcedure)),
		srec("mem_supported", "alice", 0, "restore the orders database from the replica", sShared, at(1), ofKind(journal.KindProcedure)),
		srec("mem_evidence", "carol", 0, "replica restore worked in the drill, 4 minutes", sShared, at(3), ofKind(journal.KindObservation), supports("mem_supported")),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		args := []string{"--role", "planner", "--agent", "alice", "--goal", "restore orders database nightly"}
		before := pr.json(t, append(args, "--as-of", asOfDay(2))...)
		if !slices.Equal(ids(before.ProceduresToFollow), []string{"mem_strong", "mem_supported"}) {
			t.Fatalf("before the support: %v", ids(before.ProceduresToFollow))
		}
		if d := before.ProceduresToFollow[0].Score - before.ProceduresToFollow[1].Score; d <= 0 || d > 0.1 {
			t.Fatalf("the unsupported one should lead slightly: %+v", before.ProceduresToFollow)
		}
		after := pr.json(t, append(args, "--as-of", asOfDay(4))...)
		if !slices.Equal(ids(after.ProceduresToFollow), []string{"mem_supported", "mem_strong"}) {
			t.Fatalf("after the support: %v", ids(after.ProceduresToFollow))
		}
		if !strings.Contains(after.ProceduresToFollow[0].Why, "supported by 1") {
			t.Fatalf("why: %q", after.ProceduresToFollow[0].Why)
		}
	})
}

// TestPacketDenseMemoryCaps: thousands of preferences, procedures and
// reflections that all match the goal, more core memories than the core
// cap, and many decisions waiting for outcomes: every cap holds, every
// item carries uuid, kind, agent, ts and why, and the markdown stays
// under 4 KB with its uuids.
func TestPacketDenseMemoryCaps(t *testing.T) {
	long := strings.Repeat(" with a long tail of words that matter to nobody", 6)
	var recs []journal.Record
	kinds := []journal.Kind{journal.KindPreference, journal.KindProcedure, journal.KindReflection, journal.KindObservation, journal.KindSummary}
	n := 0
	for i := 0; i < 600; i++ {
		for _, k := range kinds {
			n++
			recs = append(recs, srec(fmt.Sprintf("mem_dense_%s_%04d", k, i), []string{"alice", "bob", "carol"}[i%3], n,
				fmt.Sprintf("%s %d: ship the search release carefully%s", k, i, long), sShared, ofKind(k)))
		}
	}
	for i := 0; i < 12; i++ {
		n++
		recs = append(recs, srec(fmt.Sprintf("mem_dense_core_%02d", i), "alice", n, fmt.Sprintf("core rule %d: answer in english%s", i, long), ofKind(journal.KindPreference), coreTier))
	}
	for i := 0; i < 40; i++ {
		n++
		recs = append(recs, srec(fmt.Sprintf("mem_dense_decision_%02d", i), "bob", n, fmt.Sprintf("decision %d: ship the search release on a monday%s", i, long), sShared, ofKind(journal.KindDecision)))
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		for _, role := range packet.Roles {
			args := []string{"--role", string(role), "--agent", "alice", "--goal", "ship the search release", "--as-of", asOfDay(30),
				"--constraint", "carefully", "--failure", "release broke search", "--question", "who signs off the release?", "--question", "is the index rebuilt?"}
			p := pr.json(t, args...)
			for _, c := range []struct {
				name  string
				items []packet.Item
				cap   int
			}{
				{"core", p.Core, packet.CapCore}, {"hard_constraints", p.HardConstraints, 4}, {"procedures_to_follow", p.ProceduresToFollow, 3},
				{"pitfalls_to_avoid", p.PitfallsToAvoid, 3}, {"relevant_facts", p.RelevantFacts, 3}, {"open_questions", p.OpenQuestions, 5},
			} {
				if len(c.items) > c.cap {
					t.Errorf("%s: %s holds %d, cap %d", role, c.name, len(c.items), c.cap)
				}
			}
			if len(p.Core) != packet.CapCore || len(p.HardConstraints) != 4 || len(p.OpenQuestions) != 5 {
				t.Errorf("%s: core %d, hard constraints %d, open questions %d: want every cap filled", role, len(p.Core), len(p.HardConstraints), len(p.OpenQuestions))
			}
			if len(p.SelectedMemoryIDs) > len(p.Core)+5 {
				t.Errorf("%s: %d selected ids", role, len(p.SelectedMemoryIDs))
			}
			if p.OpenQuestions[0].Text != "who signs off the release?" || p.OpenQuestions[0].UUID != "" || p.OpenQuestions[2].UUID == "" ||
				!strings.HasPrefix(p.OpenQuestions[2].Text, `You decided decision`) {
				t.Errorf("%s: open questions %+v", role, p.OpenQuestions)
			}
			for _, it := range everyItem(p) {
				if it.UUID == "" && it.Kind == "question" {
					continue
				}
				if it.UUID == "" || it.Kind == "" || it.Agent == "" || it.TS == "" || it.Why == "" || utf8.RuneCountInString(it.Text) > packet.MaxText {
					t.Errorf("%s: incomplete item %+v", role, it)
				}
			}
			code, md, errOut := pr.raw(t, append(args, "--markdown")...)
			if code != 0 || len(md) >= 4096 {
				t.Fatalf("%s: markdown: exit %d, %d bytes\n%s%s", role, code, len(md), md, errOut)
			}
			for _, id := range p.SelectedMemoryIDs {
				if !strings.Contains(md, id) {
					t.Errorf("%s: markdown lacks %s:\n%s", role, id, md)
				}
			}
		}
	})
}

// TestPacketGroupIsolation: a packet for alice never holds bob's private
// memories, whatever their task, session, words, tier or links say, and
// whatever they do to alice's memories (support, contradict, supersede).
func TestPacketGroupIsolation(t *testing.T) {
	recs := []journal.Record{
		srec("mem_a_pref", "alice", 0, "deploy the payments service only after a green build", sShared, ofKind(journal.KindPreference), withTask("T1"), withSession("S1")),
		srec("mem_a_proc", "alice", 0, "payments deploy: build, test, canary, fleet", ofKind(journal.KindProcedure), withTask("T1"), at(1)),
		srec("mem_a_old", "alice", 0, "payments deploy needs a manual approval", sShared, ofKind(journal.KindPreference), at(1)),
		// bob's private memories: every door into alice's packet.
		srec("mem_bsecret_task", "bob", 0, "BOBSECRET deploy the payments service task notes", ofKind(journal.KindProcedure), withTask("T1"), withSession("S1"), at(2)),
		srec("mem_bsecret_core", "bob", 0, "BOBSECRET core rule for the payments deploy", ofKind(journal.KindPreference), coreTier, withTask("T1"), at(2)),
		srec("mem_bsecret_refl", "bob", 0, "BOBSECRET payments deploy pitfall", ofKind(journal.KindReflection), withSession("S1"), at(2)),
		srec("mem_bsecret_dec", "bob", 0, "BOBSECRET decided to deploy payments on sundays", ofKind(journal.KindDecision), withTask("T1"), at(2)),
		srec("mem_bsecret_fact", "bob", 0, "BOBSECRET payments deploy fact", withTask("T1"), withSession("S1"), at(2)),
		srec("mem_bsecret_sup", "bob", 0, "BOBSECRET supports the payments procedure", ofKind(journal.KindObservation), supports("mem_a_proc"), linksTo("mem_a_pref"), at(3)),
		srec("mem_bsecret_con", "bob", 0, "BOBSECRET payments deploy contradiction", ofKind(journal.KindPreference), conflictsWith("mem_a_pref"), at(3)),
		srec("mem_bsecret_rep", "bob", 0, "BOBSECRET payments deploy replacement", ofKind(journal.KindPreference), supersedes("mem_a_old"), at(3)),
		// alice's own record naming bob's private ones.
		srec("mem_a_links", "alice", 0, "payments deploy follow-up", ofKind(journal.KindProcedure), linksTo("mem_bsecret_task", "mem_bsecret_refl"), supports("mem_bsecret_fact"), supersedes("mem_bsecret_dec"), withTask("T1"), at(4)),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		for _, role := range packet.Roles {
			for _, format := range []string{"--json", "--markdown"} {
				args := []string{"--role", string(role), "--agent", "alice", "--goal", "deploy the payments service BOBSECRET bsecret", "--task", "T1", "--session", "S1",
					"--constraint", "payments", "--failure", "payments deploy failed", "--question", "payments?", "--as-of", asOfDay(20), format}
				code, out, errOut := pr.raw(t, args...)
				if code != 0 {
					t.Fatalf("%s %s: exit %d: %s", role, format, code, errOut)
				}
				// The goal is echoed; past it, nothing of bob's.
				body := strings.Replace(out, "deploy the payments service BOBSECRET bsecret", "", 1)
				if strings.Contains(body, "BOBSECRET") || strings.Contains(body, "bsecret") || strings.Contains(errOut, "bsecret") {
					t.Fatalf("%s %s: alice's packet shows bob's private memory:\n%s", role, format, out)
				}
			}
		}
		// alice still gets her own, and bob his.
		p := pr.json(t, "--role", "executor", "--agent", "alice", "--goal", "deploy the payments service", "--task", "T1", "--as-of", asOfDay(20))
		if !slices.Contains(ids(p.ProceduresToFollow), "mem_a_proc") || !slices.Contains(ids(p.HardConstraints), "mem_a_pref") {
			t.Fatalf("alice's own: %+v", p)
		}
		if p := pr.json(t, "--role", "executor", "--agent", "bob", "--goal", "deploy the payments service", "--task", "T1", "--as-of", asOfDay(20)); !slices.Equal(ids(p.Core), []string{"mem_bsecret_core"}) {
			t.Fatalf("bob's core: %v", ids(p.Core))
		}
	})
}

// TestPacketCoreAndOpenQuestions: the core tier is in every role's packet
// whatever the goal; open questions are the --questions, then decisions a
// week old that no outcome names (not younger ones, not answered ones).
func TestPacketCoreAndOpenQuestions(t *testing.T) {
	recs := []journal.Record{
		srec("mem_core", "alice", 0, "always answer in french", ofKind(journal.KindFact), coreTier),
		srec("mem_dec_open", "alice", 0, "move the queue to kafka", sShared, ofKind(journal.KindDecision)),
		srec("mem_dec_done", "alice", 0, "move the cache to redis", sShared, ofKind(journal.KindDecision), at(1)),
		srec("mem_outcome", "bob", 0, "redis halved the latency", sShared, ofKind(journal.KindOutcome), linksTo("mem_dec_done"), extra(journal.FieldResult, journal.ResultSuccess), at(5)),
		srec("mem_dec_young", "alice", 0, "move the logs to loki", sShared, ofKind(journal.KindDecision), at(8)),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		for _, role := range packet.Roles {
			p := pr.json(t, "--role", string(role), "--agent", "alice", "--goal", "unrelated words entirely", "--question", "what next?", "--as-of", asOfDay(10))
			if !slices.Equal(ids(p.Core), []string{"mem_core"}) || p.SelectedMemoryIDs[0] != "mem_core" {
				t.Fatalf("%s: core %v selected %v", role, ids(p.Core), p.SelectedMemoryIDs)
			}
			if !slices.Equal(ids(p.OpenQuestions), []string{"", "mem_dec_open"}) ||
				p.OpenQuestions[1].Text != `You decided move the queue to kafka on 2026-11-20. How did it turn out?` {
				t.Fatalf("%s: open questions %+v", role, p.OpenQuestions)
			}
		}
	})
}

// TestPacketBadInput: an unknown role, an empty goal, an unknown agent
// (and the other usage faults) are one line on stderr, exit 2, nothing on
// stdout.
func TestPacketBadInput(t *testing.T) {
	recs := []journal.Record{srec("mem_x", "alice", 0, "something", sShared)}
	for _, b := range []packetBackend{packetBackends[0], packetBackends[2]} {
		t.Run(b.name, func(t *testing.T) {
			env := b.env(t)
			repo := searchRepo(t, recs...)
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"--role", "boss", "--agent", "alice", "--goal", "g"}, `--role: unknown role "boss"`},
				{[]string{"--agent", "alice", "--goal", "g"}, "--role: required"},
				{[]string{"--role", "planner", "--agent", "alice"}, "--goal: required"},
				{[]string{"--role", "planner", "--agent", "alice", "--goal", "  \t"}, "--goal: required"},
				{[]string{"--role", "planner", "--goal", "g"}, "--agent: required"},
				{[]string{"--role", "planner", "--agent", "zed", "--goal", "g"}, `--agent: unknown agent "zed"`},
				{[]string{"--role", "planner", "--agent", "../etc", "--goal", "g"}, "--agent: invalid agent name"},
				{[]string{"--role", "planner", "--agent", "alice", "--goal", "g", "--json", "--markdown"}, "choose one"},
				{[]string{"--role", "planner", "--agent", "alice", "--goal", "g", "--as-of", "yesterday"}, "--as-of"},
				{[]string{"--role", "planner", "--agent", "alice", "--goal", "g", "stray"}, "unexpected argument"},
			} {
				code, out, errOut := binRun(t, env, append([]string{"packet", "--repo", repo}, tc.args...)...)
				if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "memsync packet: ") || !strings.Contains(errOut, tc.want) {
					t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.want)
				}
			}
		})
	}
}

// TestPacketDeterministic: the same memory, request and clock give
// byte-identical packets, run after run; and the embedded store, Neo4j and
// the journals give the same packet.
func TestPacketDeterministic(t *testing.T) {
	var recs []journal.Record
	for i := 0; i < 60; i++ {
		k := []journal.Kind{journal.KindPreference, journal.KindProcedure, journal.KindReflection, journal.KindFact, journal.KindSummary, journal.KindDecision}[i%6]
		opts := []func(*journal.Record){sShared, ofKind(k), at(i % 20)}
		if i%7 == 0 && i > 0 {
			opts = append(opts, supports(fmt.Sprintf("mem_det_%02d", i-1)))
		}
		if i%11 == 0 && i > 0 {
			opts = append(opts, conflictsWith(fmt.Sprintf("mem_det_%02d", i-5)))
		}
		if i%4 == 0 {
			opts = append(opts, withTask("T7"))
		}
		recs = append(recs, srec(fmt.Sprintf("mem_det_%02d", i), []string{"alice", "bob"}[i%2], i, fmt.Sprintf("note %d about the search index rebuild and its ranking", i), opts...))
	}
	outputs := map[string]string{}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		for _, role := range packet.Roles {
			for _, format := range []string{"--json", "--markdown"} {
				args := []string{"--role", string(role), "--agent", "alice", "--goal", "rebuild the search index", "--task", "T7", "--failure", "ranking", "--as-of", asOfDay(25), format}
				var first string
				for i := 0; i < 3; i++ {
					code, out, errOut := pr.raw(t, args...)
					if code != 0 {
						t.Fatalf("exit %d: %s", code, errOut)
					}
					if i == 0 {
						first = out
					} else if out != first {
						t.Fatalf("%s %s: run %d differs:\n%s\n---\n%s", role, format, i, first, out)
					}
				}
				if format == "--json" {
					var p packet.Packet
					json.Unmarshal([]byte(first), &p)
					p.Offline, p.OfflineReason = false, ""
					b, _ := json.Marshal(p)
					first = string(b)
				} else {
					first = strings.Replace(first, " (offline: from the journals)", "", 1)
				}
				outputs[pr.b.name+" "+string(role)+format] = first
			}
		}
	})
	for key, out := range outputs {
		emb := outputs["embedded "+strings.SplitN(key, " ", 2)[1]]
		if out != emb {
			t.Errorf("%s differs from the embedded store's:\n%s\n---\n%s", key, out, emb)
		}
	}
}

// TestPacketRoleKindsAreWeights (SPEC §8.4, issue 24 item 5): a planner
// reads no episodes, yet a decision or task scoped to its --task or
// --session, or a decision that answers the goal clearly better than
// anything of the planner's kinds, is in its relevant_facts, below a
// role-matched memory of similar relevance; an episode that answers no
// better than the planner's kinds stays out.
func TestPacketRoleKindsAreWeights(t *testing.T) {
	recs := []journal.Record{
		srec("mem_pref_friday", "bob", 0, "never deploy the billing service on fridays", sShared, ofKind(journal.KindPreference)),
		srec("mem_proc_runbook", "alice", 0, "billing runbook: page the on-call before any change", sShared, at(1), ofKind(journal.KindProcedure)),
		// The repro: the task itself and the decision that chose its database.
		srec("mem_task_bill42", "alice", 0, "BILL-42: migrate billing to postgres", sShared, at(2), ofKind(journal.KindTask), withTask("BILL-42")),
		srec("mem_dec_postgres", "bob", 0, "we chose postgres for the billing migration", sShared, at(3), ofKind(journal.KindDecision), withTask("BILL-42")),
		srec("mem_sum_bill42", "alice", 0, "BILL-42 so far: billing migration to postgres half done", sShared, at(3), ofKind(journal.KindSummary), withTask("BILL-42")),
		// Session-scoped, and no goal word.
		srec("mem_dec_session", "alice", 0, "ship the exporter behind a feature flag", sShared, at(4), ofKind(journal.KindDecision), withSession("S7")),
		// Answers "invoice queue migration" 3/3, where the planner's kinds answer 1/3.
		srec("mem_dec_queue", "bob", 0, "the invoice queue migration moves to kafka", sShared, at(5), ofKind(journal.KindDecision)),
		srec("mem_proc_invoice", "alice", 0, "invoice runbook: resend the failed ones by hand", sShared, at(5), ofKind(journal.KindProcedure)),
		// Answers "billing runbook on-call" no better than the procedure.
		srec("mem_obs_runbook", "carol", 0, "the billing runbook pages the on-call", sShared, at(6), ofKind(journal.KindObservation)),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		planner := func(goal string, more ...string) packet.Packet {
			return pr.json(t, append([]string{"--role", "planner", "--agent", "alice", "--goal", goal, "--as-of", asOfDay(10)}, more...)...)
		}
		// Task-scoped: the task and the decision, below the summary of the task.
		p := planner("billing migration to postgres", "--task", "BILL-42")
		if got := ids(p.RelevantFacts); len(got) != 3 || got[0] != "mem_sum_bill42" || !slices.Contains(got, "mem_task_bill42") || !slices.Contains(got, "mem_dec_postgres") {
			t.Fatalf("task: relevant facts %v, want the summary, then the task and the decision", got)
		}
		for _, it := range p.RelevantFacts[1:] {
			if !strings.Contains(it.Why, "task BILL-42") || !strings.Contains(it.Why, "beyond the role's kinds") || it.Score >= p.RelevantFacts[0].Score {
				t.Fatalf("task: %+v", it)
			}
		}
		if !slices.Contains(ids(p.HardConstraints), "mem_pref_friday") || !slices.Contains(ids(p.ProceduresToFollow), "mem_proc_runbook") {
			t.Fatalf("task: the planner's own kinds are gone: %+v", p)
		}
		// Session-scoped, no goal word.
		if p := planner("plan the release", "--session", "S7"); !slices.Contains(ids(p.RelevantFacts), "mem_dec_session") {
			t.Fatalf("session: relevant facts %v", ids(p.RelevantFacts))
		}
		// Without the scope, the same decision stays out.
		if p := planner("plan the release"); slices.Contains(ids(p.RelevantFacts), "mem_dec_session") {
			t.Fatalf("no session: relevant facts %v", ids(p.RelevantFacts))
		}
		// Without the scope but with a goal word that nothing of the
		// planner's kinds holds: one word is clearly better than none.
		if p := planner("plan the exporter release"); !slices.Contains(ids(p.RelevantFacts), "mem_dec_session") {
			t.Fatalf("goal word: relevant facts %v", ids(p.RelevantFacts))
		}
		// Clearly better than the planner's kinds.
		p = planner("invoice queue migration")
		if len(p.RelevantFacts) == 0 || p.RelevantFacts[0].UUID != "mem_dec_queue" || !strings.Contains(p.RelevantFacts[0].Why, "answers the goal clearly better") {
			t.Fatalf("clearly better: relevant facts %+v", p.RelevantFacts)
		}
		if !slices.Contains(ids(p.ProceduresToFollow), "mem_proc_invoice") {
			t.Fatalf("clearly better: procedures %v", ids(p.ProceduresToFollow))
		}
		// As good as the planner's kinds, no better: out.
		p = planner("billing runbook on-call")
		if slices.Contains(ids(p.RelevantFacts), "mem_obs_runbook") || !slices.Contains(ids(p.ProceduresToFollow), "mem_proc_runbook") {
			t.Fatalf("as good: relevant facts %v, procedures %v", ids(p.RelevantFacts), ids(p.ProceduresToFollow))
		}
	})
}

// TestPacketDurableStayArchivedGo (SPEC §7, issue 24 item 1 as packets
// see it): 300 days on, with nothing referencing them, a preference, a
// procedure and a decision declared permanent are still in the packets
// (the decision, scoped to the task, in a planner's relevant_facts), while
// a fact and a decision of the same age and task, archived by decay, are
// in none. Status comes from memsync/score alone.
func TestPacketDurableStayArchivedGo(t *testing.T) {
	recs := []journal.Record{
		srec("mem_pref_old", "bob", 0, "never deploy the billing service on fridays", sShared, ofKind(journal.KindPreference)),
		srec("mem_proc_old", "alice", 0, "to deploy the billing service: canary first, then the fleet", sShared, ofKind(journal.KindProcedure)),
		srec("mem_dec_forever", "alice", 0, "billing deploys go through the release train", sShared, ofKind(journal.KindDecision), withTask("T9"),
			func(r *journal.Record) { r.MaxAge = "permanent" }),
		srec("mem_fact_old", "alice", 0, "the billing service deploys from the release branch", sShared, withTask("T9")),
		srec("mem_dec_old", "alice", 0, "deploy billing with the old script", sShared, ofKind(journal.KindDecision), withTask("T9")),
	}
	onEveryBackend(t, recs, func(t *testing.T, pr packetRun) {
		for _, role := range []string{"planner", "executor"} {
			p := pr.json(t, "--role", role, "--agent", "alice", "--goal", "deploy the billing service", "--task", "T9", "--as-of", asOfDay(300))
			if !slices.Contains(ids(p.HardConstraints), "mem_pref_old") || !slices.Contains(ids(p.ProceduresToFollow), "mem_proc_old") ||
				!slices.Contains(ids(p.RelevantFacts), "mem_dec_forever") {
				t.Fatalf("%s: durable memories missing: hard constraints %v, procedures %v, facts %v", role, ids(p.HardConstraints), ids(p.ProceduresToFollow), ids(p.RelevantFacts))
			}
			for _, it := range everyItem(p) {
				if it.UUID == "mem_fact_old" || it.UUID == "mem_dec_old" || it.Status == "archived" {
					t.Fatalf("%s: an archived memory is in the packet: %+v", role, it)
				}
			}
		}
	})
}

// TestPacketReadmePlannerSeesTheDecision (issue 49 item 1, SPEC §8.4):
// the README's "Using it" block, run as written: planner decides "Use
// #postgres for @Mira's billing service", critic notes that deploys
// happen on Tuesdays, one sync; then a planner packet for critic, "plan
// the billing migration", holds the decision (it shares "billing" with
// the goal, and nothing of the planner's kinds exists), in markdown and
// in --json. A goal no memory shares a word with still gets an empty
// packet (the one way a packet is empty), which says why.
func TestPacketReadmePlannerSeesTheDecision(t *testing.T) {
	repo := newRepo(t, "planner", "critic")
	env := []string{"MEMSYNC_GRAPH=embedded", "MEMSYNC_REPO=" + repo}
	code, id, errOut := binRun(t, env, "append", "--agent", "planner", "--kind", "decision", "--scope", "shared",
		"--why", "cheaper at our size", "Use #postgres for @Mira's billing service")
	if code != 0 {
		t.Fatalf("append: %d %s", code, errOut)
	}
	id = strings.TrimSpace(id)
	cmd := exec.Command(memsyncBinary(t), "append", "--agent", "critic", "--kind", "fact", "--scope", "shared", "-")
	cmd.Env = append(append(os.Environ(), "MEMSYNC_GRAPH="), env...)
	cmd.Stdin = strings.NewReader("Deploys happen on Tuesdays\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("append -: %v %s", err, out)
	}
	if code, out, errOut := binRun(t, env, "sync", "--once"); code != 0 {
		t.Fatalf("sync: %d\n%s%s", code, out, errOut)
	}
	args := []string{"packet", "--role", "planner", "--agent", "critic", "--goal", "plan the billing migration"}
	code, md, errOut := binRun(t, env, args...)
	if code != 0 || !strings.Contains(md, "## Relevant facts") || !strings.Contains(md, "Use #postgres for @Mira's billing service ["+id+" decision] (recent decision; goal 1/3 words;") ||
		!strings.Contains(md, "Selected: "+id) {
		t.Fatalf("packet: %d\n%s%s", code, md, errOut)
	}
	code, out, _ := binRun(t, env, append(args, "--json")...)
	var p packet.Packet
	if err := json.Unmarshal([]byte(out), &p); code != 0 || err != nil {
		t.Fatalf("packet --json: %d %v\n%s", code, err, out)
	}
	if got := ids(p.RelevantFacts); len(got) != 1 || got[0] != id || p.RelevantFacts[0].Score <= 0 ||
		!strings.Contains(p.RelevantFacts[0].Why, "goal 1/3 words") {
		t.Fatalf("relevant facts %+v", p.RelevantFacts)
	}
	if code, out, _ := binRun(t, env, "packet", "--role", "planner", "--agent", "critic", "--goal", "tune the kafka consumers", "--json"); code != 0 ||
		json.Unmarshal([]byte(out), &p) != nil || len(everyItem(p)) != 0 {
		t.Fatalf("unrelated goal: %d\n%s", code, out)
	}
	// ... and says why, rather than a header with nothing under it.
	if code, md, _ := binRun(t, env, "packet", "--role", "planner", "--agent", "critic", "--goal", "tune the kafka consumers"); code != 0 ||
		!strings.Contains(md, "Nothing for this step: of the memories critic may see, none is of the kinds a planner reads") {
		t.Fatalf("unrelated goal: %d\n%s", code, md)
	}
}
