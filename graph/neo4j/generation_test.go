package neo4j_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
	"github.com/memsync/memsync/memsync/read"
)

// Every Drop marks the graph with a new generation, one marker node even
// when two hosts drop at once, and both hosts then read the same one.
func TestDropMarksANewGeneration(t *testing.T) {
	g := neo4jtest.Open(t) // dropped: a generation is marked
	ctx := context.Background()
	first, err := g.Generation(ctx)
	if err != nil || first == "" {
		t.Fatalf("generation after a drop = %q, %v", first, err)
	}
	other, err := neo4j.Open(ctx, neo4jtest.Config(t), zaptest.NewLogger(t)) // a second host
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, h := range []*neo4j.Graph{g, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.Drop(ctx)
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("concurrent drops: %v", errs)
	}
	a, errA := g.Generation(ctx)
	b, errB := other.Generation(ctx)
	if errA != nil || errB != nil || a != b || a == first || a == "" {
		t.Fatalf("after two drops: %q (%v) and %q (%v), first %q", a, errA, b, errB, first)
	}
	if rows := cypher(t)("MATCH (g:MemsyncGeneration) RETURN count(g) AS n"); len(rows) != 1 || rows[0].Values[0].(int64) != 1 {
		t.Fatalf("generation markers: %v", rows)
	}
}

// genRecords makes n records of one generation: uuids and text start with
// prefix, every record mentions an entity and links to the one before, so
// entities, agents and edges of both generations exist side by side.
func genRecords(prefix string, n int) []memsync.Memory {
	out := make([]memsync.Memory, n)
	for i := range out {
		out[i] = rec(prefix+"-"+itoa(i), i%60, "alpaca "+prefix+" note "+itoa(i), func(r *journal.Record) {
			r.Entities = []string{"herd " + prefix}
			if i > 0 {
				r.Links = []string{prefix + "-" + itoa(i-1)}
			}
		})
	}
	return out
}

// generationSeen reads what a client sees: how many memories, and which
// generations (by uuid prefix) a search and Stats answer from. It fails
// the test if one read mixes generations.
func generationSeen(t *testing.T, g *neo4j.Graph, sizes map[string]int) string {
	t.Helper()
	ctx := context.Background()
	st, err := g.Stats(ctx)
	if err != nil {
		t.Error(err)
		return ""
	}
	hits, err := read.Search(ctx, g, memsync.SearchQuery{Text: "alpaca note", Groups: []string{journal.SharedGroup}, Limit: 50})
	if err != nil {
		t.Error(err)
		return ""
	}
	gens := map[string]bool{}
	for _, h := range hits {
		gens[strings.SplitN(h.UUID, "-", 2)[0]] = true
	}
	if len(gens) != 1 || len(hits) != 50 {
		t.Errorf("one search answered from generations %v with %d hits", gens, len(hits))
		return ""
	}
	var gen string
	for k := range gens {
		gen = k
	}
	// Stats and Search are two reads: a switch may fall between them, so
	// the search's generation must be the one Stats counted just before
	// or just after it.
	after, err := g.Stats(ctx)
	if err != nil {
		t.Error(err)
		return ""
	}
	if st.Memories != sizes[gen] && after.Memories != sizes[gen] {
		t.Errorf("search answered from %q but Stats counts %d then %d memories (want %d)", gen, st.Memories, after.Memories, sizes[gen])
	}
	return gen
}

// labelCounts counts the nodes of each label of both slots.
func labelCounts(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, l := range []string{"Memory", "MemsyncEntity", "Agent", "Memory1", "Entity1", "Agent1"} {
		rows := cypher(t)("MATCH (n:" + l + ") RETURN count(n) AS n")
		out[l] = rows[0].Values[0].(int64)
	}
	return out
}

// TestRebuildAnswersFromTheOldGeneration is issue 30: a rebuild over a
// full graph builds a new generation while another client's searches
// keep answering from the old one, every read from exactly one
// generation; FinishRebuild switches every reader at once, and the old
// generation is deleted in the background.
func TestRebuildAnswersFromTheOldGeneration(t *testing.T) {
	g := neo4jtest.Open(t) // the reader: another process's client
	ctx := context.Background()
	const nOld, nNew = 300, 400
	sizes := map[string]int{"old": nOld, "new": nNew}
	applyAll(t, g, genRecords("old", nOld), 100)
	oldGen, err := g.Generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := generationSeen(t, g, sizes); got != "old" {
		t.Fatalf("before the rebuild: %q", got)
	}

	builder, err := neo4j.Open(ctx, neo4jtest.Config(t), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer builder.Close()
	if err := builder.BeginRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	newGen, err := builder.Generation(ctx)
	if err != nil || newGen == oldGen || newGen == "" {
		t.Fatalf("builder's generation %q (%v), the graph's %q", newGen, err, oldGen)
	}

	// 0 building, 1 switching, 2 switched.
	var phase atomic.Int32
	stop := make(chan struct{})
	var reads []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			before := phase.Load()
			got := generationSeen(t, g, sizes)
			after := phase.Load()
			switch {
			case got == "":
				return
			case after == 0 && got != "old":
				t.Errorf("a read while building answered from %q", got)
			case before == 2 && got != "new":
				t.Errorf("a read after the switch answered from %q", got)
			}
			reads = append(reads, got)
			select {
			case <-stop:
				if before == 2 {
					return
				}
			default:
			}
		}
	}()
	applyAll(t, builder, genRecords("new", nNew), 100)
	if got := generationSeen(t, builder, sizes); got != "new" {
		t.Fatalf("the builder reads %q", got)
	}
	if gen, _ := g.Generation(ctx); gen != oldGen {
		t.Fatalf("while building, the reader's generation is %q, want %q", gen, oldGen)
	}
	phase.Store(1)
	if err := builder.FinishRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	phase.Store(2)
	close(stop)
	wg.Wait()
	old := 0
	for _, r := range reads {
		if r == "old" {
			old++
		}
	}
	if old == 0 || reads[len(reads)-1] != "new" {
		t.Fatalf("reads: %d from the old generation of %d, last %q", old, len(reads), reads[len(reads)-1])
	}
	t.Logf("%d reads, %d from the old generation", len(reads), old)
	for _, c := range []*neo4j.Graph{g, builder} {
		if gen, err := c.Generation(ctx); err != nil || gen != newGen {
			t.Fatalf("after the switch: generation %q (%v), want %q", gen, err, newGen)
		}
	}
	if err := builder.WaitDropped(ctx); err != nil {
		t.Fatal(err)
	}
	counts := labelCounts(t)
	if counts["Memory"] != 0 || counts["MemsyncEntity"] != 0 || counts["Agent"] != 0 || counts["Memory1"] != nNew {
		t.Fatalf("after the old generation's drop: %v", counts)
	}
	// The reader writes into the new generation too.
	applyAll(t, g, genRecords("new", nNew+1)[nNew:], 100)
	if st, err := builder.Stats(ctx); err != nil || st.Memories != nNew+1 {
		t.Fatalf("a write after the switch: %+v, %v", st, err)
	}
}

// rebuildChildEnv makes TestKilledRebuildChild a rebuilding process.
const rebuildChildEnv = "MEMSYNC_TEST_REBUILD_CHILD"

// TestKilledRebuildChild is the process TestKilledRebuild kills: it
// begins a rebuild and writes the new generation until it is killed.
func TestKilledRebuildChild(t *testing.T) {
	if os.Getenv(rebuildChildEnv) == "" {
		t.Skip("the child of TestKilledRebuild")
	}
	ctx := context.Background()
	g, err := neo4j.Open(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.BeginRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	recs := genRecords("partial", 100000)
	for lo := 0; ; lo += 100 {
		if _, err := g.Apply(ctx, recs[lo:lo+100]); err != nil {
			t.Fatal(err)
		}
		if lo == 300 {
			fmt.Println("ready")
		}
	}
}

// TestKilledRebuild: a rebuilding process killed with SIGKILL leaves the
// old generation answering; the next rebuild deletes the leftover before
// building, completes, and the old generation is dropped after its switch.
func TestKilledRebuild(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	const nOld, nNew = 300, 250
	sizes := map[string]int{"old": nOld, "new": nNew}
	applyAll(t, g, genRecords("old", nOld), 100)

	memsynctest.KillWhenReady(t, "TestKilledRebuildChild", rebuildChildEnv+"=1")
	if counts := labelCounts(t); counts["Memory1"] < 400 {
		t.Fatalf("the killed rebuild left %v", counts)
	}
	if got := generationSeen(t, g, sizes); got != "old" {
		t.Fatalf("after the kill, reads answer from %q", got)
	}

	builder, err := neo4j.Open(ctx, neo4jtest.Config(t), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer builder.Close()
	if err := builder.BeginRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if counts := labelCounts(t); counts["Memory1"] != 0 || counts["Entity1"] != 0 || counts["Agent1"] != 0 || counts["Memory"] != nOld {
		t.Fatalf("the next rebuild began with %v", counts)
	}
	applyAll(t, builder, genRecords("new", nNew), 100)
	if got := generationSeen(t, g, sizes); got != "old" {
		t.Fatalf("while rebuilding again, reads answer from %q", got)
	}
	if err := builder.FinishRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if got := generationSeen(t, g, sizes); got != "new" {
		t.Fatalf("after the switch, reads answer from %q", got)
	}
	if err := builder.WaitDropped(ctx); err != nil {
		t.Fatal(err)
	}
	if counts := labelCounts(t); counts["Memory"] != 0 || counts["MemsyncEntity"] != 0 || counts["Agent"] != 0 || counts["Memory1"] != nNew {
		t.Fatalf("after the switch and the drop: %v", counts)
	}
}
