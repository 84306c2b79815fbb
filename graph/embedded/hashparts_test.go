package embedded

import (
	"context"
	"maps"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"
)

// TestHashPartsCoverEveryMemoryOnce: HashParts hands every memory to
// exactly one part, with Hashes' uuid and hash, whatever the number of
// parts against the ids (more parts than memories, ids that start past a
// Drop's floor, a gap left by a replaced version), and an empty store
// gives nothing.
func TestHashPartsCoverEveryMemoryOnce(t *testing.T) {
	ctx := context.Background()
	g, err := Open(t.TempDir(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	parts := func(n int) map[string]string {
		t.Helper()
		var mu sync.Mutex
		got := map[string]string{}
		err := g.HashParts(ctx, n, func(part int, uuid, hash string) error {
			mu.Lock()
			defer mu.Unlock()
			if part < 0 || part >= n {
				t.Errorf("part %d of %d", part, n)
			}
			if _, dup := got[uuid]; dup {
				t.Errorf("%s in two parts", uuid)
			}
			got[uuid] = hash
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := parts(3); len(got) != 0 {
		t.Fatalf("empty store: %v", got)
	}
	apply(t, g, seenRecords(20)...)
	if err := g.Drop(ctx); err != nil { // ids start past the floor
		t.Fatal(err)
	}
	recs := seenRecords(37)
	apply(t, g, recs...)
	// Another version of one uuid, preferred by the clash rule or not:
	// either way its row may move to a new id and leave a gap.
	apply(t, g, mem(recs[5].UUID, 5, "another version of memory 5"))
	want := map[string]string{}
	if err := g.Hashes(ctx, func(uuid, hash string) error { want[uuid] = hash; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(want) != 37 {
		t.Fatalf("Hashes gave %d memories, want 37", len(want))
	}
	for _, n := range []int{1, 2, 3, 8, 50} {
		if got := parts(n); !maps.Equal(got, want) {
			t.Fatalf("%d parts: %d memories, want %d as Hashes gives them", n, len(got), len(want))
		}
	}
}
