package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// randomStep appends one to three random records to g: shared and private
// memories of every listed kind, core and max_age memories, entities,
// flags (feedback records), references, supersessions, conflicts and
// promotions, with the clock moving by a second up to forty days (past
// max_ages). It returns the uuids written, for later steps to point at.
func randomStep(t *testing.T, g memsync.Graph, rng *rand.Rand, agents []string, now *time.Time, seen []string, step int) []string {
	t.Helper()
	kinds := []journal.Kind{journal.KindFact, journal.KindDecision, journal.KindPreference, journal.KindProcedure, journal.KindObservation, journal.KindTask}
	pick := func() string { return seen[rng.Intn(len(seen))] }
	var batch []memsync.Memory
	for n := 1 + rng.Intn(3); n > 0; n-- {
		jump := []time.Duration{time.Second, time.Minute, time.Hour, 3 * 24 * time.Hour, 20 * 24 * time.Hour, 40 * 24 * time.Hour}
		*now = now.Add(jump[rng.Intn(len(jump))])
		agent := agents[rng.Intn(len(agents))]
		r := journal.Record{
			UUID: fmt.Sprintf("mem_%s_%s_%04d", journal.UUIDTime(*now), agent, step*10+n), TS: *now, Agent: agent,
			Kind: kinds[rng.Intn(len(kinds))], Scope: journal.ScopePrivate, Text: fmt.Sprintf("memory %d.%d of %s", step, n, agent),
		}
		if rng.Intn(2) == 0 && agent != agents[len(agents)-1] {
			r.Scope = journal.ScopeShared
		}
		switch op := rng.Intn(12); {
		case op == 0:
			r.Tier = "core"
		case op == 1:
			r.MaxAge = journal.MaxAges[rng.Intn(2)]
		case op == 2 && len(seen) > 0: // a flag
			r.Kind, r.Links = journal.KindFeedback, []string{pick()}
			fb, _ := json.Marshal([]string{"wrong", "important", "verified", "unimportant"}[rng.Intn(4)])
			r.Extra = map[string]json.RawMessage{journal.FieldFeedback: fb}
		case op == 3 && len(seen) > 0:
			r.Kind, r.Links = journal.KindSummary, []string{pick(), pick()}
		case op == 4 && len(seen) > 0:
			r.Supersedes = []string{pick()}
		case op == 5 && len(seen) > 0:
			r.ConflictsWith = []string{pick()}
		case op == 6 && len(seen) > 0: // a promotion of an earlier memory
			orig := pick()
			r.Kind, r.Scope, r.UUID, r.Links = journal.KindPromotion, journal.ScopeShared, journal.PromotionUUID(orig), []string{orig}
		}
		if rng.Intn(3) == 0 {
			r.Entities = []string{[]string{"Acme", "Globex", "Q3 Plan"}[rng.Intn(3)]}
		}
		batch = append(batch, memsync.Memory{Record: r, Path: "agents/" + agent + "/memory/journal/" + journal.FileName(r.TS), Line: step + 1})
		seen = append(seen, r.UUID)
	}
	if _, err := g.Apply(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	return seen
}

// tamper changes one file of agent's snapshot behind the Writer's back:
// the same length, other bytes, an older modification time (an edit
// within the file system's timestamp tick must not pass for the Writer's
// own file in the test).
func tamper(t *testing.T, layout memsync.Layout, agent string, rng *rand.Rand) {
	t.Helper()
	files := readTree(t, layout.CacheDir(agent))
	paths := slices.Sorted(maps.Keys(files))
	if len(paths) == 0 {
		return
	}
	p := filepath.Join(layout.CacheDir(agent), filepath.FromSlash(paths[rng.Intn(len(paths))]))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		if data[i] == 'e' {
			data[i] = 'E'
		}
	}
	if rng.Intn(2) == 0 {
		// Edited in place, its modification time moved.
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return
	}
	// Replaced by another file of the same size and modification time:
	// only its inode tells it from the file the Writer left.
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	tmp := p + ".tamper"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotsEqualFull: after every step of a random
// sequence of appends, the snapshots one Writer keeps current — one walk
// for every agent, sharing each memory's score, rank and line between the
// agents that see it — equal byte for byte the snapshots rendered for each
// agent by a walk of its own into another directory. Small limits make
// the caps and the "… and N more" lines count; one agent writes only
// private memories, so its clock often differs from the others'. Now and
// then a file of the kept snapshots is edited behind the Writer's back
// (in place, or replaced by a file of the same size and time): the next
// Generate puts it right.
func TestIncrementalSnapshotsEqualFull(t *testing.T) {
	agents := []string{"ann", "ben", "cy", "dee"}
	for _, tc := range []struct {
		seed  int64
		limit int
		steps int
	}{{1, 3, 40}, {2, 5, 40}, {3, 500, 30}} {
		t.Run(fmt.Sprintf("seed%d-limit%d", tc.seed, tc.limit), func(t *testing.T) {
			g := openGraph(t, nil)
			inc, full := repo(t, agents...), repo(t, agents...)
			w := NewWriter(g, inc, nil)
			w.Limit = tc.limit
			rng := rand.New(rand.NewSource(tc.seed))
			now := clock
			var seen []string
			for step := range tc.steps {
				seen = randomStep(t, g, rng, agents, &now, seen, step)
				if step%7 == 3 {
					tamper(t, inc, agents[rng.Intn(len(agents))], rng)
				}
				if _, err := w.Generate(context.Background(), agents); err != nil {
					t.Fatal(err)
				}
				for _, a := range agents {
					one := NewWriter(g, full, nil)
					one.Limit = tc.limit
					if _, err := one.Generate(context.Background(), []string{a}); err != nil {
						t.Fatal(err)
					}
				}
				for _, a := range agents {
					got := readTree(t, filepath.Join(inc.CacheDir(a)))
					want := readTree(t, filepath.Join(full.CacheDir(a)))
					if len(got) != len(want) {
						t.Fatalf("step %d, %s: %d files, a walk of its own renders %d", step, a, len(got), len(want))
					}
					for p, data := range want {
						if got[p] != data {
							t.Fatalf("step %d, %s: %s differs from a walk of its own:\n--- shared walk\n%s\n--- own walk\n%s", step, a, p, got[p], data)
						}
					}
				}
			}
		})
	}
}

// TestOneSharedRecordWork: with n agents, after one shared record (the
// newest memory, so every agent's clock), a walk evaluates each memory it
// keeps once — the shared ones once for all n agents, not n times — ranks
// each shared list once, and reads back no file: every agent's FACTS
// changed (its counts did) and is still the file the Writer left, so it
// is replaced without being read; the entity pages, rendered to the bytes
// the Writer left, are not read either. Counted through the Writer's
// hooks, not timed.
func TestOneSharedRecordWork(t *testing.T) {
	for _, n := range []int{1, 10, 40} {
		t.Run(fmt.Sprintf("%d agents", n), func(t *testing.T) {
			const sharedN = 20
			var batch []memsync.Memory
			var agents []string
			for i := range sharedN {
				batch = append(batch, mem(fmt.Sprintf("mem_s%03d", i), "a000", i, journal.KindFact, fmt.Sprintf("shared fact %d about Acme", i), shared, ents("Acme")))
			}
			for i := range n {
				a := fmt.Sprintf("a%03d", i)
				agents = append(agents, a)
				batch = append(batch, mem(fmt.Sprintf("mem_p%03d", i), a, sharedN+i, journal.KindDecision, "private decision about Globex", ents("Globex")))
			}
			g := openGraph(t, batch)
			layout := repo(t, agents...)
			w := NewWriter(g, layout, nil)
			if _, err := w.Generate(context.Background(), agents); err != nil {
				t.Fatal(err)
			}
			if _, err := g.Apply(context.Background(), []memsync.Memory{
				mem("mem_churn", "a000", sharedN+n+1, journal.KindFact, "one new shared fact", shared),
			}); err != nil {
				t.Fatal(err)
			}
			var stats renderStats
			w.onWalk = func(s renderStats) { stats = s }
			reads0 := w.reads.Load()
			res, err := w.Generate(context.Background(), agents)
			if err != nil {
				t.Fatal(err)
			}
			// Kept and scored: the 21 shared facts and each agent's decision.
			if want := sharedN + 1 + n; stats.evaluated != want {
				t.Errorf("%d evaluations, want %d (each memory once, not once per agent)", stats.evaluated, want)
			}
			// The shared view's six lists once; each agent's six of its own.
			if want := 6 + 6*n; stats.ranked != want {
				t.Errorf("%d lists ranked, want %d", stats.ranked, want)
			}
			if reads := w.reads.Load() - reads0; reads != 0 {
				t.Errorf("%d files read back, want none (each FACTS is known to differ, each entity page known to be the same)", reads)
			}
			for _, r := range res {
				if len(r.Written) != 1 || r.Unchanged != 2 {
					t.Errorf("%s: written %v, %d unchanged; want FACTS written, two entity pages unchanged", r.Agent, r.Written, r.Unchanged)
				}
			}
		})
	}
}
