package webui

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// TestWindowMatchesOneList: window, which pages each group on its own and
// merges them, returns exactly the newest-first records of the viewer's
// groups in [since, until] (and kinds), at most max, and says bounded only
// when max cut the read short: the same records a single List over every
// group, large enough to hold them all, returns. The store is the real
// embedded one; the groups are uneven (the shared group holds most) and
// many records share a ts, so page edges fall inside runs of equal ts.
func TestWindowMatchesOneList(t *testing.T) {
	ctx := context.Background()
	g, err := embedded.Open(t.TempDir(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	kinds := []journal.Kind{journal.KindFact, journal.KindDecision, journal.KindObservation}
	var mems []memsync.Memory
	for i := range 3000 {
		agent := []string{"alice", "bob", "carol"}[i%3]
		scope := journal.ScopeShared
		if i%5 == 0 {
			scope = journal.ScopePrivate
		}
		mems = append(mems, memsync.Memory{Record: journal.Record{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Agent: agent,
			Kind: kinds[i%len(kinds)], Scope: scope, TS: now.Add(-time.Duration(i/7) * time.Minute), Text: fmt.Sprintf("record %d", i)},
			Path: "agents/" + agent + "/memory/journal/2026-11-26.jsonl", Line: i + 1})
	}
	if _, err := g.Apply(ctx, mems); err != nil {
		t.Fatal(err)
	}
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	all := []string{journal.SharedGroup, journal.PrivateGroup("alice"), journal.PrivateGroup("bob"), journal.PrivateGroup("carol")}
	alice := []string{journal.SharedGroup, journal.PrivateGroup("alice")}
	for _, c := range []struct {
		name         string
		groups       []string
		kinds        []journal.Kind
		since, until time.Duration // before now; 0 until: none
		max          int
	}{
		{"operator, bounded by max", all, nil, 1000 * time.Hour, 0, 101},
		{"operator, bounded mid-run of equal ts", all, nil, 1000 * time.Hour, 0, 1234},
		{"operator, since stops first", all, nil, 90 * time.Minute, 0, 5000},
		{"operator, everything", all, nil, 1000 * time.Hour, 0, 5000},
		{"alice only", alice, nil, 1000 * time.Hour, 0, 700},
		{"one private group", []string{journal.PrivateGroup("bob")}, nil, 1000 * time.Hour, 0, 50},
		{"kinds and until", all, []journal.Kind{journal.KindDecision}, 300 * time.Minute, 30 * time.Minute, 400},
		{"duplicate groups", append(slices.Clone(alice), journal.SharedGroup), nil, 1000 * time.Hour, 0, 300},
		{"no groups", nil, nil, 1000 * time.Hour, 0, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			var until time.Time
			if c.until > 0 {
				until = now.Add(-c.until)
			}
			since := now.Add(-c.since)
			got, bounded, err := window(ctx, g, c.groups, c.kinds, since, until, c.max)
			if err != nil {
				t.Fatal(err)
			}
			var want []memsync.Node
			if len(c.groups) > 0 {
				want, err = g.List(ctx, memsync.ListQuery{Groups: c.groups, Kinds: c.kinds, Until: until, Limit: len(mems) + 1})
				if err != nil {
					t.Fatal(err)
				}
			}
			want = slices.DeleteFunc(want, func(n memsync.Node) bool { return n.TS.Before(since) })
			wantBounded := len(want) > c.max
			if wantBounded {
				want = want[:c.max]
			}
			if bounded != wantBounded {
				t.Errorf("bounded %v, want %v", bounded, wantBounded)
			}
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].UUID != want[i].UUID {
					t.Fatalf("record %d: %s, want %s", i, got[i].UUID, want[i].UUID)
				}
			}
		})
	}
}

// TestRecentSinceIsTheNarrowerWindow: the pages that share one recent
// window (recentWindow) cut it at their own since; recent.since returns
// exactly what window reads for that since itself, bounded included
// (including a since at which the bound cuts a run of equal ts, and one
// at which the window's next record falls just outside).
func TestRecentSinceIsTheNarrowerWindow(t *testing.T) {
	ctx := context.Background()
	g, err := embedded.Open(t.TempDir(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var mems []memsync.Memory
	for i := range 1200 {
		agent := []string{"alice", "bob"}[i%2]
		scope := journal.ScopeShared
		if i%3 == 0 {
			scope = journal.ScopePrivate
		}
		mems = append(mems, memsync.Memory{Record: journal.Record{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Agent: agent,
			Kind: journal.KindFact, Scope: scope, TS: now.Add(-time.Duration(i/4) * time.Hour), Text: fmt.Sprintf("record %d", i)},
			Path: "agents/" + agent + "/memory/journal/2026-11-26.jsonl", Line: i + 1})
	}
	if _, err := g.Apply(ctx, mems); err != nil {
		t.Fatal(err)
	}
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	groups := []string{journal.SharedGroup, journal.PrivateGroup("alice"), journal.PrivateGroup("bob")}
	const most = 600 // records 0..599: ts down to now-149h; record 600 is at now-150h
	wide := now.Add(-1000 * time.Hour)
	nodes, bounded, next, err := windowOf(ctx, g, memsync.ListQuery{Groups: groups}, wide, most)
	if err != nil {
		t.Fatal(err)
	}
	r := recent{nodes: nodes, bounded: bounded, next: next}
	for _, back := range []time.Duration{0, time.Hour, 90 * time.Minute, 149 * time.Hour, 150 * time.Hour, 151 * time.Hour, 1000 * time.Hour} {
		since := now.Add(-back)
		got, gotBounded := r.since(since)
		want, wantBounded, err := window(ctx, g, groups, nil, since, time.Time{}, most)
		if err != nil {
			t.Fatal(err)
		}
		if gotBounded != wantBounded || len(got) != len(want) {
			t.Fatalf("since now-%s: %d records bounded %v, want %d bounded %v", back, len(got), gotBounded, len(want), wantBounded)
		}
		for i := range want {
			if got[i].UUID != want[i].UUID {
				t.Fatalf("since now-%s: record %d %s, want %s", back, i, got[i].UUID, want[i].UUID)
			}
		}
	}
}
