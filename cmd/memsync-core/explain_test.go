package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

func dayAt(n int) time.Time { return searchClock.Add(time.Duration(n) * 24 * time.Hour) }

func at(n int) func(*journal.Record) { return func(r *journal.Record) { r.TS = dayAt(n) } }
func linksTo(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.Links = ids }
}
func ofKind(k journal.Kind) func(*journal.Record) { return func(r *journal.Record) { r.Kind = k } }
func extra(field string, v any) func(*journal.Record) {
	return func(r *journal.Record) {
		b, _ := json.Marshal(v)
		if r.Extra == nil {
			r.Extra = map[string]json.RawMessage{}
		}
		r.Extra[field] = b
	}
}

// lifeCorpus: over 40 days a decision is referenced by other agents and
// pays off, an observation on the same topic is never used, and a third
// memory will be flagged wrong.
func lifeCorpus(t *testing.T) string {
	return searchRepo(t,
		srec("mem_dec", "alice", 0, "use postgres for the billing ledger", sShared, ofKind(journal.KindDecision)),
		srec("mem_obs", "alice", 1, "postgres billing ledger latency spike seen today", sShared, ofKind(journal.KindObservation)),
		srec("mem_port", "alice", 2, "the postgres billing ledger listens on port 5433", sShared),
		srec("mem_priv", "bob", 3, "bob private postgres billing ledger worry BOBSECRET"),
		srec("mem_ref1", "bob", 0, "schema for the ledger", sShared, at(3), linksTo("mem_dec")),
		srec("mem_ref2", "carol", 0, "ledger migration plan", sShared, at(10), linksTo("mem_dec")),
		srec("mem_ref3", "bob", 0, "private follow-up", at(20), linksTo("mem_dec")),
		srec("mem_out", "carol", 0, "the ledger moved: month close took 2 hours, not 9", sShared, at(25),
			ofKind(journal.KindOutcome), linksTo("mem_dec"), extra(journal.FieldResult, journal.ResultSuccess)),
	)
}

func explainJSON(t *testing.T, iv invocation, args ...string) explainResult {
	t.Helper()
	r := iv.run(t, append([]string{"explain", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("explain %q: exit %d: %s", args, r.code, r.stderr)
	}
	var res explainResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("explain --json printed %q: %v", r.stdout, err)
	}
	return res
}

// TestRankingOverTime: search and explain, online and offline, at pinned
// clocks: the referenced decision rises to the top, the unused observation
// is archived (hidden, shown by --all), a wrong-flagged fact is gone, and
// explain tells why.
func TestRankingOverTime(t *testing.T) {
	repo := lifeCorpus(t)
	flagAt := invocation{now: dayAt(30), env: map[string]string{"USER": "shaun"}}
	if r := flagAt.run(t, "flag", "mem_port", "--wrong", "--note", "it is 5432", "--repo", repo); r.code != 0 {
		t.Fatalf("flag: %d %s", r.code, r.stderr)
	}
	syncRepo(t, repo)
	for _, iv := range []invocation{{}, unreachableNeo4j} {
		search := func(asOf time.Time, extra ...string) searchResult {
			args := append([]string{"search", "postgres billing ledger", "--agent", "alice", "--json", "--repo", repo, "--as-of", asOf.Format(time.RFC3339)}, extra...)
			return decodeSearch(t, iv.run(t, args...))
		}
		// Day 1: everything fresh and equal but for words.
		early := search(dayAt(1))
		if got := hitIDs(early); !slices.Equal(got, []string{"mem_dec", "mem_obs", "mem_port"}) && len(got) != 3 {
			t.Fatalf("day 1: %v", got)
		}
		for _, h := range early.Results {
			if h.Importance != 0.5 || h.Status != "active" {
				t.Fatalf("day 1: %+v", h)
			}
		}
		// Day 40: the decision leads; the archived observation is still
		// found, marked, below it; the flagged fact is retired.
		late := search(dayAt(40))
		if got := hitIDs(late); got[0] != "mem_dec" || !slices.Contains(got, "mem_obs") || slices.Contains(got, "mem_port") {
			t.Fatalf("day 40: %v", got)
		}
		for _, h := range late.Results {
			if h.UUID == "mem_obs" && h.Status != "archived" {
				t.Fatalf("day 40 observation: %+v", h)
			}
		}
		if h := late.Results[0]; h.Importance < 0.8 || h.Confidence <= 0.6 {
			t.Fatalf("day 40 decision: %+v", h)
		}
		all := search(dayAt(40), "--all")
		status := map[string]string{}
		for _, h := range all.Results {
			status[h.UUID] = h.Status
		}
		if status["mem_obs"] != "archived" || status["mem_port"] != "archived" || status["mem_dec"] != "active" || all.Results[0].UUID != "mem_dec" {
			t.Fatalf("day 40 --all: %v (%v)", status, hitIDs(all))
		}
		// Explain the decision: every event, visible or not.
		ex := explainJSON(t, iv, "mem_dec", "--agent", "alice", "--as-of", dayAt(40).Format(time.RFC3339), "--repo", repo)
		var effects []string
		for _, e := range ex.Events {
			effects = append(effects, e.UUID+" "+e.Effect)
		}
		want := []string{
			"mem_ref1 +0.15 referenced by bob",
			"mem_ref2 +0.15 referenced by carol",
			" +0.15 referenced by a record this reader may not see", // bob's private record: counted, never named
			"mem_out +0.20 a successful outcome by carol",
			" -0.10 not referenced for 14 days",
		}
		if ex.Importance != 0.9 || ex.Status != "active" || ex.Tier != "working" || !strings.HasPrefix(ex.MaxAge, "270d") || !slices.Equal(effects, want) {
			t.Fatalf("explain mem_dec: %+v\neffects %q", ex, effects)
		}
		if !strings.Contains(strings.Join(ex.Basis, "|"), "successful outcome mem_out") {
			t.Fatalf("basis: %q", ex.Basis)
		}
		ex = explainJSON(t, iv, "mem_port", "--agent", "alice", "--repo", repo, "--as-of", dayAt(40).Format(time.RFC3339))
		if ex.Status != "archived" || ex.Importance != 0 || ex.Confidence != 0 || len(ex.Events) == 0 || !strings.Contains(ex.Events[len(ex.Events)-1].Effect, "flagged wrong") {
			t.Fatalf("explain mem_port: %+v", ex)
		}
		// As it stood before the flag.
		if ex := explainJSON(t, iv, "mem_port", "--agent", "alice", "--repo", repo, "--as-of", dayAt(29).Format(time.RFC3339)); ex.Status == "archived" && ex.Importance == 0 {
			t.Fatalf("explain mem_port before the flag: %+v", ex)
		}
		// --explain prints every factor.
		r := iv.run(t, "search", "postgres billing ledger", "--agent", "alice", "--explain", "--repo", repo, "--as-of", dayAt(40).Format(time.RFC3339))
		if r.code != 0 || !regexp.MustCompile(`score 0\.\d{6} = relevance 1\.000000 x importance factor 0\.9\d{3} x freshness factor 0\.\d{4} x confidence factor 0\.\d{4} x status factor 1\.0000\n   \(holds 3 query terms \([^)]*\); importance 0\.\d\d, freshness`).MatchString(r.stdout) {
			t.Fatalf("--explain: %d %s", r.code, r.stdout)
		}
	}
}

func TestExplainRefusesBadInput(t *testing.T) {
	repo := lifeCorpus(t)
	syncRepo(t, repo)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"explain", "mem_dec"}, exitUsage, "--agent: required"},
		{[]string{"explain", "--agent", "alice"}, exitUsage, "UUID: exactly one"},
		{[]string{"explain", "mem_dec", "--agent", "alice", "--as-of", "yesterday"}, exitUsage, `--as-of: "yesterday" is not an RFC 3339 time`},
		{[]string{"explain", "mem_dec", "--agent", "alcie"}, exitUsage, `--agent: unknown agent "alcie" in ` + repo + "; did you mean alice?"},
		// Not found (exit 3): another agent's private memory exactly as an unknown uuid.
		{[]string{"explain", "mem_priv", "--agent", "alice"}, exitNotFound, "memsync explain: no memory mem_priv visible to agent alice\n"},
		{[]string{"explain", "mem_nope", "--agent", "alice"}, exitNotFound, "memsync explain: no memory mem_nope visible to agent alice\n"},
		{[]string{"explain", "mem_ref1", "--agent", "alice", "--as-of", dayAt(1).Format(time.RFC3339)}, exitNotFound, "no memory mem_ref1"},
		{[]string{"search", "x", "--agent", "alice", "--as-of", "2026-13-01"}, exitUsage, "--as-of"},
	} {
		for _, iv := range []invocation{{}, unreachableNeo4j} {
			r := iv.run(t, append(tc.args, "--repo", repo)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || r.stdout != "" || strings.Contains(r.stderr, "BOBSECRET") {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, r.code, r.stdout, r.stderr, tc.code, tc.want)
			}
		}
	}
	// bob sees his own.
	if ex := explainJSON(t, invocation{}, "mem_priv", "--agent", "bob", "--repo", repo); ex.Text == "" {
		t.Fatalf("bob's own: %+v", ex)
	}
}
