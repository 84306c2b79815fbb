package embedded

import (
	"context"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// After IdleRelease without writes the store gives its caches back; reads
// and writes go on as before, and a release that fires after Close does
// nothing.
func TestIdleReleaseKeepsWorking(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("mem_1", 1, "the first #note"))
	time.Sleep(IdleRelease + 500*time.Millisecond)
	apply(t, g, mem("mem_2", 2, "the second #note"))
	hits, err := g.Search(context.Background(), memsync.SearchQuery{Text: "note", Groups: []string{journal.PrivateGroup("alice"), journal.SharedGroup}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := g.Stats(context.Background()); err != nil || st.Memories != 2 {
		t.Fatalf("Stats = %+v, %v; want 2 memories", st, err)
	}
	if len(hits) != 2 {
		t.Fatalf("search after an idle release found %d, want 2", len(hits))
	}
	g2 := openTest(t)
	apply(t, g2, mem("mem_3", 3, "written just before close"))
	if err := g2.Close(); err != nil {
		t.Fatal(err)
	}
	g2.release() // what the timer would do, late
}
