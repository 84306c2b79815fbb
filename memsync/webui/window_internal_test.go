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
