package graphtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// WindowCorpus is the records the window cases read: two agents'
// private and shared records over a few minutes, in runs of one second
// (so that a window's cut falls inside a run), with conflicts, promotions,
// low-confidence learning records, declared entities and mentions in the
// text (in two spellings), and records whose text or unknown fields hold
// what a field test on the stored record could take for a match.
func WindowCorpus() []memsync.Memory {
	var all []memsync.Memory
	for i := range 400 {
		agent := []string{"alice", "bob"}[i%2]
		sec := i / 2
		if i >= 200 && i < 300 {
			sec = 100 + (i-200)/50 // two runs of 50 in one second each
		}
		uuid := fmt.Sprintf("mem_%05d_%d", (i*7919)%100000, i)
		m := mem(uuid, agent, sec, fmt.Sprintf("record %d about the deploy", i), func(r *journal.Record) {
			if i%3 != 0 {
				r.Scope = journal.ScopeShared
			}
			switch {
			case i%17 == 5 && i > 2:
				r.ConflictsWith = []string{fmt.Sprintf("mem_%05d_%d", ((i-3)*7919)%100000, i-3)}
			case i%11 == 4:
				r.Tier, r.Confidence = "learning", "low"
			case i%13 == 6:
				r.Tier, r.Confidence = "learning", "medium"
			case i%19 == 7:
				// Text that names the fields, and unknown fields that
				// hold them nested: none makes the record a candidate.
				r.Text = `notes: "tier":"learning" "confidence":"low" "conflicts_with":["x"]`
				r.Confidence = "low"
				r.Extra = map[string]json.RawMessage{"x_meta": json.RawMessage(`{"tier":"learning","confidence":"low","conflicts_with":["y"]}`)}
			case i%23 == 8:
				r.Tier, r.Confidence = "learning", "low"
				r.ConflictsWith = []string{"mem_unseen_target"}
			}
			if i%5 == 0 {
				r.Entities = []string{"Billing", "acme corp"}
			}
			if i%7 == 1 {
				r.Text += " with @Mira on #billing and [[Q3 Plan]]"
			}
			if i%29 == 3 {
				r.Text += " and @mira"
			}
		})
		all = append(all, m)
	}
	// Promotions: memsync's own records, in the original's journal.
	for _, i := range []int{4, 150, 260, 399} {
		orig := all[i]
		all = append(all, mem(journal.PromotionUUID(orig.UUID), orig.Agent, int(orig.TS.Sub(clock)/time.Second), "promoted: "+orig.Text,
			shared, kind(journal.KindPromotion), links(orig.UUID)))
	}
	return all
}

// WindowQueries are the window cases: limits that cut inside a run of
// one second, since bounds, one group, both agents, no group.
func WindowQueries() []memsync.WindowQuery {
	alice, bob := journal.ReaderGroups("alice"), journal.ReaderGroups("bob")
	both := append(slices.Clone(alice), journal.PrivateGroup("bob"))
	var qs []memsync.WindowQuery
	for _, gs := range [][]string{alice, bob, both, {journal.SharedGroup}, {journal.PrivateGroup("bob")}} {
		for _, limit := range []int{1, 7, 60, 130, 1000} {
			for _, since := range []time.Time{{}, clock.Add(100 * time.Second), clock.Add(150 * time.Second)} {
				qs = append(qs, memsync.WindowQuery{Groups: gs, Since: since, Limit: limit})
			}
		}
	}
	return append(qs, memsync.WindowQuery{Groups: nil, Limit: 10}, memsync.WindowQuery{Groups: alice})
}

// RunWindow checks that r, holding WindowCorpus, answers every
// WindowQueries case as memsync.CandidatesFrom and memsync.MentionsFrom
// answer over the same records (memsync.WindowFrom's window): the same
// candidates in the same order, the same counts per group and name, and
// nothing of a group the query does not name.
func RunWindow(t *testing.T, r memsync.WindowReader) {
	all := WindowCorpus()
	byGroup := map[string][]memsync.Node{}
	for _, m := range all {
		byGroup[m.Record.GroupID()] = append(byGroup[m.Record.GroupID()], memsync.Node{Memory: m})
	}
	for _, nodes := range byGroup {
		slices.SortFunc(nodes, memsync.NewerFirst)
	}
	ctx := context.Background()
	sawCandidates, sawMentions := false, false
	for _, q := range WindowQueries() {
		name := fmt.Sprintf("groups %v since %v limit %d", q.Groups, q.Since.Format(time.TimeOnly), q.Limit)
		window, bounded := memsync.WindowFrom(byGroup, q)
		wantC := memsync.CandidatesFrom(window, bounded)
		gotC, err := r.WindowCandidates(ctx, q)
		if err != nil {
			t.Fatalf("%s: WindowCandidates: %v", name, err)
		}
		if got, want := fmt.Sprintf("%+v", gotC), fmt.Sprintf("%+v", wantC); got != want {
			t.Errorf("%s: WindowCandidates =\n%s\nwant\n%s", name, got, want)
		}
		sawCandidates = sawCandidates || len(wantC.Conflicting) > 0 && len(wantC.LowLearning) > 0 && len(wantC.Promotions) > 0
		wantM := memsync.MentionsFrom(window, bounded)
		gotM, err := r.WindowMentions(ctx, q)
		if err != nil {
			t.Fatalf("%s: WindowMentions: %v", name, err)
		}
		if got, want := mentionsString(gotM), mentionsString(wantM); got != want {
			t.Errorf("%s: WindowMentions =\n%s\nwant\n%s", name, got, want)
		}
		sawMentions = sawMentions || len(wantM.Entities) > 4
		for _, e := range gotM.Entities {
			if !slices.Contains(q.Groups, e.Group) {
				t.Errorf("%s: WindowMentions counts %q of group %s, which the query does not name", name, e.Name, e.Group)
			}
		}
	}
	if !sawCandidates || !sawMentions {
		t.Fatalf("the cases never met every kind of candidate (%v) or many entities (%v): the corpus needs them", sawCandidates, sawMentions)
	}
}

// mentionsString is m with its times as UTC text, to compare.
func mentionsString(m memsync.Mentions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%+v\n", m.Window)
	for _, e := range m.Entities {
		fmt.Fprintf(&b, "%s|%s|%d|%s\n", e.Group, e.Name, e.Mentions, e.Newest.UTC().Format(time.RFC3339Nano))
	}
	return b.String()
}

// testWindow: a graph that is a memsync.WindowReader passes RunWindow.
func testWindow(t *testing.T, g memsync.Graph) {
	r, ok := g.(memsync.WindowReader)
	if !ok {
		t.Skip("not a memsync.WindowReader")
	}
	apply(t, g, WindowCorpus()...)
	RunWindow(t, r)
}
