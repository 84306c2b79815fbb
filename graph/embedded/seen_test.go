package embedded

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/memsync"

	"github.com/memsync/memsync/memsync/memsynctest"
	"github.com/memsync/memsync/memsync/read"
)

// TestSeenFilter: the uuids Apply skips looking up (seen.go) are only
// those the store cannot hold. Two Graphs on one directory stand for two
// processes: what the other one wrote, or a Drop it made, must still be
// found, so a record of a uuid it stored is a no-op (same hash) or a
// mismatch (another hash), never a second row. Without the data_version
// check, the first Graph's filter would skip the lookup of the uuid the
// second one wrote and the insert would fail on memories.uuid UNIQUE.
func TestSeenFilter(t *testing.T) {
	ctx := context.Background()
	one := mem("u-one", 1, "first memory")
	two := mem("u-two", 2, "second memory")
	twoOther := mem("u-two", 2, "second memory, another version")
	three := mem("u-three", 3, "third memory")
	type step struct {
		by         int // which Graph applies (0 or 1); -1: Graph 1 drops
		batch      []memsync.Memory
		mismatched []string
		memories   int // the store's count after the step
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"the same records again are no-ops", []step{
			{0, []memsync.Memory{one, two}, nil, 2},
			{0, []memsync.Memory{one, two}, nil, 2},
			{0, []memsync.Memory{twoOther}, []string{"u-two"}, 2},
		}},
		{"another process's record is found", []step{
			{0, []memsync.Memory{one}, nil, 1},
			{1, []memsync.Memory{two}, nil, 2},
			{0, []memsync.Memory{two}, nil, 2},
			{0, []memsync.Memory{twoOther}, []string{"u-two"}, 2},
		}},
		{"another process's version clashes", []step{
			{0, []memsync.Memory{one}, nil, 1},
			{1, []memsync.Memory{twoOther}, nil, 2},
			{0, []memsync.Memory{two, three}, []string{"u-two"}, 3},
		}},
		{"after another process's drop", []step{
			{0, []memsync.Memory{one}, nil, 1},
			{-1, nil, nil, 0},
			{1, []memsync.Memory{two}, nil, 1},
			{0, []memsync.Memory{one, two}, nil, 2},
			{0, []memsync.Memory{twoOther}, []string{"u-two"}, 2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var gs [2]*Graph
			for i := range gs {
				g, err := Open(dir, zaptest.NewLogger(t))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if err := g.Close(); err != nil {
						t.Error(err)
					}
				})
				gs[i] = g
			}
			for i, s := range tc.steps {
				if s.by < 0 {
					if err := gs[1].Drop(ctx); err != nil {
						t.Fatal(err)
					}
				} else {
					res, err := gs[s.by].Apply(ctx, s.batch)
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if !slices.Equal(res.Mismatched, s.mismatched) {
						t.Fatalf("step %d: Mismatched = %v, want %v", i, res.Mismatched, s.mismatched)
					}
				}
				st, err := gs[0].Stats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.Memories != s.memories {
					t.Fatalf("step %d: %d memories, want %d", i, st.Memories, s.memories)
				}
			}
		})
	}
}

// TestSeenFilterAfterDrop: a Drop (what a rebuild starts with) arms the
// filter, and the records applied after it, the same uuids again, are
// stored once each.
func TestSeenFilterAfterDrop(t *testing.T) {
	ctx := context.Background()
	g := openTest(t)
	var batch []memsync.Memory
	for i := range 300 {
		batch = append(batch, mem(fmt.Sprintf("u-%03d", i), i, fmt.Sprintf("memory number %d", i)))
	}
	apply(t, g, batch...)
	if err := g.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for i := 0; i < len(batch); i += 100 {
			apply(t, g, batch[i:i+100]...)
		}
	}
	if g.seen == nil {
		t.Fatal("no uuid filter after a Drop")
	}
	for _, m := range batch {
		if !g.seen.mayHold(m.UUID) {
			t.Fatalf("filter lost %s", m.UUID)
		}
	}
	st, err := g.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != len(batch) {
		t.Fatalf("%d memories, want %d", st.Memories, len(batch))
	}
	hits, err := read.Search(ctx, g, memsync.SearchQuery{Text: "memory number", Limit: 1000, Groups: []string{"CONSTELLATION"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != len(batch) {
		t.Fatalf("search found %d, want %d", len(hits), len(batch))
	}
}

// seenChildEnv names the directory TestKilledRebuildWithFilterChild
// rebuilds in.
const seenChildEnv = "MEMSYNC_TEST_SEEN_CHILD"

// seenRecords are the records the killed-rebuild test projects.
func seenRecords(n int) []memsync.Memory {
	var out []memsync.Memory
	for i := range n {
		out = append(out, mem(fmt.Sprintf("u-%05d", i), i, fmt.Sprintf("rebuilt memory %d", i)))
	}
	return out
}

// TestKilledRebuildWithFilterChild is the process
// TestKilledRebuildWithFilter kills: it drops the store (arming the uuid
// filter), begins a bulk load (no fsync per commit) and projects until it
// is killed.
func TestKilledRebuildWithFilterChild(t *testing.T) {
	dir := os.Getenv(seenChildEnv)
	if dir == "" {
		t.Skip("the child of TestKilledRebuildWithFilter")
	}
	ctx := context.Background()
	g, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.BeginBulk(ctx); err != nil { // as a rebuild does
		t.Fatal(err)
	}
	recs := seenRecords(100_000)
	for lo := 0; ; lo += 100 {
		if _, err := g.Apply(ctx, recs[lo:lo+100]); err != nil {
			t.Fatal(err)
		}
		if lo == 300 {
			fmt.Println("ready")
		}
	}
}

// TestKilledRebuildWithFilter: a rebuild killed with SIGKILL while the uuid
// filter spares its lookups, in a bulk load, loses nothing acknowledged, and the next
// process, which has no filter (the store is not empty), projects the
// same records again without a second row or an error, and its search
// finds every one.
func TestKilledRebuildWithFilter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g, err := Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, seenRecords(50)...)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}

	memsynctest.KillWhenReady(t, "TestKilledRebuildWithFilterChild", seenChildEnv+"="+dir)

	g, err = Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	st, err := g.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories < 400 {
		t.Fatalf("the killed rebuild left %d memories, acknowledged at least 400", st.Memories)
	}
	const n = 3000
	recs := seenRecords(n)
	for lo := 0; lo < n; lo += 500 {
		if res := apply(t, g, recs[lo:lo+500]...); len(res.Mismatched) > 0 {
			t.Fatalf("mismatched %v", res.Mismatched)
		}
	}
	if g.seen != nil {
		t.Fatal("a uuid filter on a store that was not empty")
	}
	if st, err = g.Stats(ctx); err != nil || st.Memories < n {
		t.Fatalf("after projecting again: %+v, %v", st, err)
	}
	hits, err := read.Search(ctx, g, memsync.SearchQuery{Text: "rebuilt memory", Limit: 2 * st.Memories, Groups: []string{"CONSTELLATION"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != st.Memories {
		t.Fatalf("search found %d of %d memories", len(hits), st.Memories)
	}
}
