package cache

import (
	"context"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

const daySec = 24 * 60 * 60

// TestSnapshotByImportance: as of the newest memory (day 40), the core tier
// comes first, sections are ordered by importance, an unused observation
// past its max_age is left out (counted as archived), and a task past its
// max_age at importance 0.4 is listed for review.
func TestSnapshotByImportance(t *testing.T) {
	links := func(ids ...string) func(*journal.Record) { return func(r *journal.Record) { r.Links = ids } }
	tier := func(v string) func(*journal.Record) { return func(r *journal.Record) { r.Tier = v } }
	batch := []memsync.Memory{
		mem("mem_plain", "alice", 0, journal.KindFact, "plain fact", shared),
		mem("mem_used", "alice", 1, journal.KindFact, "used fact", shared),
		mem("mem_core", "alice", 2, journal.KindPreference, "core preference", shared, tier("core")),
		mem("mem_obs", "alice", 3, journal.KindObservation, "unused observation", shared),
		mem("mem_task", "alice", 4, journal.KindTask, "half-used task", shared),
		mem("mem_r1", "bob", 35*daySec, journal.KindSummary, "uses it", shared, links("mem_used")),
		mem("mem_r2", "carol", 36*daySec, journal.KindSummary, "uses it too", shared, links("mem_used")),
		mem("mem_r3", "alice", 30*daySec, journal.KindSummary, "touches the task", shared, links("mem_task")),
		mem("mem_last", "alice", 40*daySec, journal.KindReflection, "the newest memory", shared),
	}
	snaps, err := Render(context.Background(), openGraph(t, batch), []string{"alice"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	facts := string(snaps[0].Files[FactsFile])
	order := []string{
		"## Core (1)", "(0.50) **preference**", "`mem_core`",
		"## Facts (2)", "(0.60) **fact**", "`mem_used`", "(0.30) **fact**", "`mem_plain`",
		"## For review (1)", "(0.40, review) **task**", "`mem_task`",
		"Archived (not listed; `memsync search --all` shows them): 1",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(facts[at:], want)
		if i < 0 {
			t.Fatalf("%q missing or out of order (after byte %d):\n%s", want, at, facts)
		}
		at += i + len(want)
	}
	if strings.Contains(facts, "mem_obs") {
		t.Fatalf("archived observation listed:\n%s", facts)
	}
}

func TestCoreTierWarning(t *testing.T) {
	core := func(r *journal.Record) { r.Tier = "core" }
	small := []memsync.Memory{mem("mem_c1", "alice", 0, journal.KindPreference, "short", shared, core)}
	big := append(small, mem("mem_c2", "alice", 1, journal.KindProcedure, strings.Repeat("long procedure ", 150), core))
	for _, tc := range []struct {
		batch []memsync.Memory
		warn  bool
	}{{small, false}, {big, true}} {
		snaps, err := Render(context.Background(), openGraph(t, tc.batch), []string{"alice"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(snaps[0].Files[FactsFile]), "Warning: the core tier holds"); got != tc.warn {
			t.Fatalf("%d core memories: warning %v, want %v", len(tc.batch), got, tc.warn)
		}
	}
}

// TestSnapshotFollowUps is SPEC §10's outcome check in the snapshot: the
// agent's decision older than a week with no outcome is asked about
// until an outcome links to it; a recent decision and another agent's
// decision are not.
func TestSnapshotFollowUps(t *testing.T) {
	links := func(ids ...string) func(*journal.Record) { return func(r *journal.Record) { r.Links = ids } }
	batch := []memsync.Memory{
		mem("mem_d_old", "alice", 0, journal.KindDecision, "Use blue-green deploys.", shared),
		mem("mem_d_bob", "bob", 0, journal.KindDecision, "Bob's own call", shared),
		mem("mem_d_new", "alice", 8*daySec, journal.KindDecision, "Move the nightly jobs", shared),
		mem("mem_last", "alice", 10*daySec, journal.KindReflection, "the newest memory", shared),
	}
	const question = "You decided Use blue-green deploys on 2026-11-20. How did it turn out? (`mem_d_old`)"
	facts := func(batch []memsync.Memory) string {
		snaps, err := Render(context.Background(), openGraph(t, batch), []string{"alice"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return string(snaps[0].Files[FactsFile])
	}
	got := facts(batch)
	if !strings.Contains(got, "## Waiting for an outcome (1)\n\n- "+question+"\n") {
		t.Fatalf("no follow-up:\n%s", got)
	}
	outcome := mem("mem_out", "alice", 9*daySec, journal.KindOutcome, "it went fine", shared, links("mem_d_old"))
	if got := facts(append(batch, outcome)); !strings.Contains(got, "## Waiting for an outcome (0)\n\nNone.\n") {
		t.Fatalf("follow-up after the outcome:\n%s", got)
	}
}
