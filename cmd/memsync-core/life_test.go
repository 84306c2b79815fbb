package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
)

// binRun runs the built memsync with env added; it returns the exit code
// and both streams.
func binRun(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH="), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// TestMonthInTheLife is SPEC §7 end to end: 60 days of records written to
// real journals, the daemon projecting them, people flagging through the
// binary, and every answer read back through the binary at a pinned clock
// (--as-of). A referenced decision rises; an unused observation is
// archived; a fact flagged wrong leaves search; a private memory flagged
// important is promoted, once, across a restart and a rebuild, and another
// agent sees the promotion; explain says why each time.
func TestMonthInTheLife(t *testing.T) {
	for _, b := range daemonBackends {
		t.Run(b.name, func(t *testing.T) { monthInTheLife(t, b) })
	}
}

func monthInTheLife(t *testing.T, b daemonBackend) {
	repo := newRepo(t, "alice", "bob", "carol")
	env, open := b.setup(t, repo)
	now := time.Now().UTC().Truncate(time.Second)
	base := now.Add(-60 * 24 * time.Hour)
	day := func(n int) time.Time { return base.Add(time.Duration(n) * 24 * time.Hour) }
	write := func(r journal.Record) string {
		t.Helper()
		if r.Scope == "" {
			r.Scope = journal.ScopeShared
		}
		if _, err := journal.Append(core.Layout{Root: repo}.JournalDir(r.Agent), &r, journal.AppendOptions{NoSync: true}); err != nil {
			t.Fatal(err)
		}
		return r.UUID
	}
	dec := write(journal.Record{TS: day(0), Agent: "alice", Kind: journal.KindDecision, Text: "move the billing ledger to postgres", Why: "month close is too slow"})
	obs := write(journal.Record{TS: day(1), Agent: "alice", Kind: journal.KindObservation, Text: "the billing ledger export was slow on monday"})
	port := write(journal.Record{TS: day(2), Agent: "bob", Kind: journal.KindFact, Text: "the billing ledger database listens on port 5433"})
	secret := write(journal.Record{TS: day(5), Agent: "alice", Kind: journal.KindProcedure, Scope: journal.ScopePrivate,
		Text: "to reconcile the billing ledger, replay the outbox first"})
	for i, d := range []int{8, 15, 22, 40, 55} {
		agent := []string{"bob", "carol"}[i%2]
		write(journal.Record{TS: day(d), Agent: agent, Kind: journal.KindTask, Text: "ledger migration step", Links: []string{dec}})
	}
	write(journal.Record{TS: day(30), Agent: "carol", Kind: journal.KindOutcome, Text: "month close took 2 hours, not 9", Links: []string{dec},
		Extra: map[string]json.RawMessage{journal.FieldResult: json.RawMessage(`"success"`)}})

	d := startDaemon(t, repo, env)
	// People flag while the daemon runs (the flag's ts is now).
	for _, args := range [][]string{
		{"flag", port, "--wrong", "--by", "Shaun", "--note", "it is 5432", "--agent", "carol"},
		{"flag", secret, "--important", "--by", "Shaun"},
	} {
		if code, _, errOut := binRun(t, env, append(args, "--repo", repo)...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
	}
	promo := core.PromotionUUID(secret)
	asOf := now.Add(time.Hour).Format(time.RFC3339)
	search := func(agent string, extra ...string) searchResult {
		t.Helper()
		code, out, errOut := binRun(t, env, append([]string{"search", "billing ledger", "--agent", agent, "--json", "--repo", repo, "--as-of", asOf}, extra...)...)
		if code != 0 {
			t.Fatalf("search: %d %s", code, errOut)
		}
		var res searchResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	// The daemon projects everything, sees the flag and journals the promotion.
	deadline := time.Now().Add(2 * time.Minute)
	for !slices.Contains(hitIDs(search("bob")), promo) {
		if time.Now().After(deadline) {
			t.Fatalf("no promotion visible to bob after 2 minutes; hits %v\nlog:\n%s", hitIDs(search("bob")), tail(d.stderr.String(), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	explain := func(agent, uuid string) explainResult {
		t.Helper()
		code, out, errOut := binRun(t, env, "explain", uuid, "--agent", agent, "--json", "--repo", repo, "--as-of", asOf)
		if code != 0 {
			t.Fatalf("explain %s: %d %s", uuid, code, errOut)
		}
		var res explainResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.Offline {
			t.Fatalf("explain %s answered offline", uuid)
		}
		return res
	}
	hits := search("alice")
	got := hitIDs(hits)
	// Decay changes rank, never findability: the archived observation is
	// found (marked, ranked below the decision); the wrong fact is retired.
	if got[0] != dec || !slices.Contains(got, obs) || slices.Contains(got, port) {
		t.Fatalf("alice's search: %v (decision %s first; %s found; %s hidden)", got, dec, obs, port)
	}
	for _, h := range hits.Results {
		if h.UUID == obs && h.Status != "archived" {
			t.Fatalf("the unused observation: %+v, want status archived", h)
		}
	}
	if hits.Offline || hits.Results[0].Importance < 0.9 || hits.Results[0].Status != "active" {
		t.Fatalf("decision hit: %+v", hits.Results[0])
	}
	status := map[string]string{}
	for _, h := range search("alice", "--all").Results {
		status[h.UUID] = h.Status
	}
	if status[obs] != "archived" || status[port] != "archived" {
		t.Fatalf("--all statuses: %v", status)
	}
	// Explain: why each stands where it does.
	ex := explain("alice", dec)
	if ex.Importance < 0.9 || !strings.HasPrefix(ex.MaxAge, "270d") || len(ex.Events) < 6 || !strings.Contains(ex.Events[len(ex.Events)-1].Effect+ex.Events[len(ex.Events)-2].Effect, "referenced by") {
		t.Fatalf("explain decision: %+v", ex)
	}
	if ex := explain("alice", obs); ex.Status != "archived" || ex.Importance >= 0.4 || !strings.Contains(ex.Events[0].Effect, "not referenced for 14 days") {
		t.Fatalf("explain observation: %+v", ex)
	}
	if ex := explain("bob", port); ex.Status != "archived" || ex.Importance != 0 || !strings.Contains(ex.Events[len(ex.Events)-1].Effect, "flagged wrong") {
		t.Fatalf("explain wrong fact: %+v", ex)
	}
	if ex := explain("bob", promo); ex.Kind != "promotion" || ex.Agent != "alice" || !strings.Contains(ex.Text, "replay the outbox") {
		t.Fatalf("explain promotion as bob: %+v", ex)
	}
	if ex := explain("alice", secret); ex.Importance != 0.95 || !strings.Contains(ex.Events[len(ex.Events)-1].Effect, "flagged important") {
		t.Fatalf("explain promoted original: %+v", ex)
	}
	// bob still may not read alice's private original.
	if code, out, errOut := binRun(t, env, "explain", secret, "--agent", "bob", "--repo", repo); code != exitNotFound || out != "" || strings.Contains(errOut, "replay the outbox") {
		t.Fatalf("bob explained alice's private memory: %d %q %q", code, out, errOut)
	}
	// Exactly once, across a restart and a rebuild.
	countPromotions := func() int {
		n := 0
		filepath.WalkDir(filepath.Join(repo, "agents"), func(p string, de os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".jsonl") && strings.Contains(p, "journal") {
				data, _ := os.ReadFile(p)
				n += strings.Count(string(data), `"uuid":"`+promo+`"`)
			}
			return nil
		})
		return n
	}
	if n := countPromotions(); n != 1 {
		t.Fatalf("%d promotion lines, want 1", n)
	}
	if _, err := d.stop(t); err != nil {
		t.Fatalf("daemon exit: %v", err)
	}
	d = startDaemon(t, repo, env)
	for !strings.Contains(d.stderr.String(), "memsync running") { // signals are handled from here on
		if time.Now().After(deadline.Add(time.Minute)) {
			t.Fatalf("restarted daemon not running:\n%s", d.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a first pass: it must not promote again
	if _, err := d.stop(t); err != nil {
		t.Fatalf("daemon exit: %v", err)
	}
	if code, _, errOut := binRun(t, env, "rebuild", "--yes", "--repo", repo); code != 0 {
		t.Fatalf("rebuild: %d %s", code, errOut)
	}
	if n := countPromotions(); n != 1 {
		t.Fatalf("after a restart and a rebuild: %d promotion lines, want 1", n)
	}
	if rep := verifyGraph(t, repo, open()); !rep.OK {
		t.Fatalf("verify after rebuild: %+v", rep)
	}
	if !slices.Contains(hitIDs(search("carol")), promo) {
		t.Fatal("promotion gone after the rebuild")
	}
}
