package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/recall"
)

// TestLexicalLevels: a level of tied matches far larger than a fetch
// (a template many records repeat) is settled by a walk of the memories
// newest first, or by seeks by id, and either gives exactly what testing
// every match gives: through the reader's groups, kinds, since and
// superseded filters, ties in ts broken by uuid, a walk that gives up
// (the level's matches are the oldest memories) and levels below a
// better one.
func TestLexicalLevels(t *testing.T) {
	g := openTest(t)
	private := func(r *journal.Record) { r.Scope = journal.ScopePrivate }
	decision := func(r *journal.Record) { r.Kind = journal.KindDecision }
	var batch []memsync.Memory
	sec := 0
	// The oldest: 40 tied matches, then 200 newer memories without the term,
	// so that a walk for them reads far more than it may.
	for i := range 40 {
		sec++
		batch = append(batch, mem(fmt.Sprintf("old%03d", i), sec, "walrus path"))
	}
	for i := range 200 {
		sec++
		batch = append(batch, mem(fmt.Sprintf("pad%03d", i), sec, "nothing of the kind"))
	}
	// 300 tied matches of "zebra", a few sharing a ts, some private, some
	// decisions, some superseded; and 5 better ones.
	for i := range 300 {
		if i%7 != 0 {
			sec++
		}
		var opts []func(*journal.Record)
		switch {
		case i%5 == 0:
			opts = append(opts, private)
		case i%11 == 0:
			opts = append(opts, decision)
		}
		batch = append(batch, mem(fmt.Sprintf("z%03d", i), sec, "zebra path", opts...))
	}
	for i := range 5 {
		sec++
		batch = append(batch, mem(fmt.Sprintf("best%d", i), sec, "zebra zebra zebra"))
	}
	// A level below: longer texts, half of them decisions.
	for i := range 30 {
		sec++
		var opts []func(*journal.Record)
		if i%2 == 0 {
			opts = append(opts, decision)
		}
		batch = append(batch, mem(fmt.Sprintf("long%03d", i), sec, "a zebra crossing near the old town square", opts...))
	}
	for i := range 20 {
		sec++
		batch = append(batch, mem(fmt.Sprintf("new%03d", i), sec, "a newer word", supers(fmt.Sprintf("z%03d", 299-i*3))))
	}
	apply(t, g, batch...)
	ctx := context.Background()
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	filterOf := func(groups []string, kinds []journal.Kind, since int, all bool) filter {
		gj, _ := json.Marshal(groups)
		f := filter{groups: string(gj), all: all}
		if kinds != nil {
			kj, _ := json.Marshal(kinds)
			f.kinds = string(kj)
		}
		if since > 0 {
			f.since = formatTS(clock.Add(time.Duration(since) * time.Second))
		}
		return f
	}
	shared := []string{journal.SharedGroup}
	both := []string{journal.SharedGroup, journal.PrivateGroup("alice")}
	defer func(w func(int, int, int64) bool) { walkPays = w }(walkPays)
	for _, how := range []struct {
		name string
		pays func(int, int, int64) bool
	}{{"walked", func(int, int, int64) bool { return true }}, {"sought", func(int, int, int64) bool { return false }}} {
		walkPays = how.pays
		for _, tc := range []struct {
			name  string
			text  string
			f     filter
			pool  int
			count int
		}{
			{"shared", "zebra", filterOf(shared, nil, 0, false), 10, 10},
			{"with the private group", "zebra", filterOf(both, nil, 0, false), 10, 10},
			{"superseded count", "zebra", filterOf(both, nil, 0, true), 10, 10},
			{"decisions only", "zebra", filterOf(shared, []journal.Kind{journal.KindDecision}, 0, false), 10, 10},
			{"since", "zebra", filterOf(shared, nil, 400, false), 10, 10},
			{"since past them all", "zebra", filterOf(shared, nil, 10000, false), 10, 0},
			{"a pool below the better ones", "zebra", filterOf(shared, nil, 0, false), 3, 3},
			{"a pool of most of them", "zebra", filterOf(both, nil, 0, true), 250, 250},
			{"decisions of every level", "zebra", filterOf(shared, []journal.Kind{journal.KindDecision}, 0, false), 40, 36},
			{"every level", "zebra", filterOf(both, nil, 0, true), 400, 335},
			{"the walk gives up", "walrus", filterOf(shared, nil, 0, false), 3, 3},
		} {
			t.Run(how.name+"/"+tc.name, func(t *testing.T) {
				terms := recall.ParseQuery(tc.text).Terms
				got, err := g.lexicalTerms(ctx, terms, tc.f, tc.pool)
				if err != nil {
					t.Fatal(err)
				}
				want, err := lexicalAll(ctx, g, terms, tc.f, tc.pool)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(ids(got)) != fmt.Sprint(ids(want)) || len(got) != tc.count {
					t.Fatalf("lexical = %v, ranking every match gives %v (want %d)", ids(got), ids(want), tc.count)
				}
				for i := range got {
					if got[i].score != want[i].score || !got[i].ts.Equal(want[i].ts) {
						t.Fatalf("candidate %d: %+v, ranking every match gives %+v", i, got[i], want[i])
					}
				}
			})
		}
	}
}
