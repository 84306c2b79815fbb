package main

import (
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
)

// TestFutureDatedRecords is SPEC §7 "The clock" through the built binaries,
// on the embedded graph, Neo4j and offline: a record 5 minutes and one a
// year ahead of the reader's clock, written straight into the journals (as
// another host's fast clock or a typo would), are visible at once to
// search (no --as-of), show and explain agree on them, search --as-of the
// present leaves them out, status counts them per agent, and append --ts
// refuses 2 days ahead but takes 1 hour ahead.
func TestFutureDatedRecords(t *testing.T) {
	for _, b := range yearBackends() {
		t.Run(b.name, func(t *testing.T) { futureDated(t, b) })
	}
}

func futureDated(t *testing.T, b yearBackend) {
	repo := newRepo(t, "ada", "bix")
	env, open := b.setup(t, repo)
	y := &yearReader{repo: repo, env: env, offline: b.offline}
	now := time.Now().UTC().Truncate(time.Second)
	write := func(r journal.Record) *yearRec {
		t.Helper()
		if _, err := journal.Append(core.Layout{Root: repo}.JournalDir(r.Agent), &r, journal.AppendOptions{NoSync: true}); err != nil {
			t.Fatal(err)
		}
		return &yearRec{uuid: r.UUID, agent: r.Agent, kind: r.Kind, scope: r.Scope, text: r.Text}
	}
	past := write(journal.Record{UUID: "mem_past", TS: now.Add(-time.Hour), Agent: "ada", Kind: journal.KindFact,
		Scope: journal.ScopeShared, Text: "the vormelik gateway answers on port 8443"})
	soon := write(journal.Record{UUID: "mem_soon", TS: now.Add(5 * time.Minute), Agent: "ada", Kind: journal.KindFact,
		Scope: journal.ScopeShared, Text: "the vormelik gateway moved to the kestrava region"})
	nextYear := write(journal.Record{UUID: "mem_next_year", TS: now.AddDate(1, 0, 0), Agent: "bix", Kind: journal.KindDecision,
		Scope: journal.ScopePrivate, Text: "decided: the vormelik gateway keeps its zoltrane certificate"})
	if !b.offline {
		d := startDaemon(t, repo, env)
		g := open()
		deadline := time.Now().Add(2 * time.Minute)
		for rep := verifyGraph(t, repo, g); !rep.OK || rep.JournalRecords != 3; rep = verifyGraph(t, repo, g) {
			if time.Now().After(deadline) {
				t.Fatalf("not projected after 2 minutes: %+v\n%s", rep, tail(d.stderr.String(), 3000))
			}
			time.Sleep(100 * time.Millisecond)
		}
		if _, err := d.stop(t); err != nil {
			t.Fatalf("daemon exit: %v", err)
		}
	}

	// First what depends on mem_soon still being ahead of the clock (5
	// minutes from its write): status's counts.
	var st struct {
		Agents []struct {
			Agent       string `json:"agent"`
			FutureDated *int   `json:"future_dated"`
		} `json:"agents"`
	}
	if err := y.decode(&st, "status"); err != nil {
		t.Fatal(err)
	}
	future := map[string]int{}
	for _, a := range st.Agents {
		if a.FutureDated == nil {
			t.Fatalf("status --json: agent %s has no future_dated count", a.Agent)
		}
		future[a.Agent] = *a.FutureDated
	}
	if future["ada"] != 1 || future["bix"] != 1 {
		t.Errorf("status --json future_dated: %v, want ada 1, bix 1", future)
	}

	for _, tc := range []struct {
		ahead time.Duration
		code  int
	}{{48 * time.Hour, exitUsage}, {time.Hour, exitOK}} {
		ts := time.Now().UTC().Add(tc.ahead).Format(time.RFC3339)
		code, out, errOut := y.run("append", "--agent", "ada", "--kind", "fact", "--ts", ts, "the vormelik gateway is ready")
		if code != tc.code {
			t.Errorf("append --ts %s (%v ahead): exit %d, want %d\n%s%s", ts, tc.ahead, code, tc.code, out, errOut)
		}
	}
	// The hour-ahead append is one more future-dated record of ada's.
	var st2 struct {
		Agents []struct {
			Agent       string `json:"agent"`
			FutureDated int    `json:"future_dated"`
		} `json:"agents"`
	}
	if err := y.decode(&st2, "status"); err != nil {
		t.Fatal(err)
	}
	for _, a := range st2.Agents {
		if a.Agent == "ada" && a.FutureDated != 2 {
			t.Errorf("status --json after append --ts 1 hour ahead: ada future_dated %d, want 2", a.FutureDated)
		}
	}

	for _, tc := range []struct {
		agent string
		query string
		want  []string
	}{
		{"ada", "vormelik gateway", []string{soon.uuid, past.uuid}},
		{"bix", "vormelik gateway", []string{nextYear.uuid, soon.uuid, past.uuid}},
		{"bix", "zoltrane certificate", []string{nextYear.uuid}},
		{"ada", "kestrava region", []string{soon.uuid}},
	} {
		res, err := y.search(tc.agent, tc.query)
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(res)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("search %q --agent %s: %v, want %s among them (future-dated records are visible at once)", tc.query, tc.agent, got, w)
			}
		}
		res, err = y.search(tc.agent, tc.query, "--as-of", now.Format(time.RFC3339))
		if err != nil {
			t.Fatal(err)
		}
		if got := hitIDs(res); slices.Contains(got, soon.uuid) || slices.Contains(got, nextYear.uuid) {
			t.Errorf("search %q --agent %s --as-of %s: %v holds a record dated after the cutoff", tc.query, tc.agent, now.Format(time.RFC3339), got)
		}
	}

	for _, r := range []*yearRec{soon, nextYear} {
		ex, err := y.explain(r)
		if err != nil {
			t.Fatal(err)
		}
		var sh yearShowDoc
		if err := y.decode(&sh, "show", r.uuid, "--agent", r.agent); err != nil {
			t.Fatal(err)
		}
		if ex.Status != "active" || ex.Importance != 0.5 || sh.Status != ex.Status || sh.Importance == nil || *sh.Importance != ex.Importance {
			imp := -1.0
			if sh.Importance != nil {
				imp = *sh.Importance
			}
			t.Errorf("%s: explain %.2f %q, show %.2f %q; want both 0.50 active (age zero)", r.uuid, ex.Importance, ex.Status, imp, sh.Status)
		}
	}
}
