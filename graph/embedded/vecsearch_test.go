package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// The vectors live in the search file (search schema 4) and follow its
// rules: these tests show they are built again with it, never ahead of its
// watermark, and never left behind by a replaced memory.

// vectorCoverage is how many memories have exactly one vector of version,
// how many vectors name no memory, and how many vectors of other versions
// there are, once the indexer has caught up.
func vectorCoverage(t *testing.T, g *Graph, version string) (covered, orphans, others int) {
	t.Helper()
	ctx := context.Background()
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	err := g.rdb.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM memories AS m JOIN search.vectors AS v ON v.id = m.id AND v.version = ?1),
		(SELECT count(*) FROM search.vectors WHERE id NOT IN (SELECT id FROM memories)),
		(SELECT count(*) FROM search.vectors WHERE version <> ?1)`, version).Scan(&covered, &orphans, &others)
	if err != nil {
		t.Fatal(err)
	}
	return covered, orphans, others
}

// TestVectorsBuiltAgainWithTheSearchFile: a search file deleted behind the
// store's back (or lost to a power cut) is built again from the stored
// records at the next Open, vectors included, and hybrid search ranks by
// them as before.
func TestVectorsBuiltAgainWithTheSearchFile(t *testing.T) {
	dir := t.TempDir()
	emb := memsynctest.NewEmbedder(64)
	g, err := Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, mem("m1", 1, "we moved the orders to postgres yesterday"), mem("m2", 2, "lunch was pizza"), mem("m3", 3, "the deploy broke"))
	before := search(t, g, "postgresql upgrade")
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{SearchFileName, SearchFileName + "-wal", SearchFileName + "-shm"} {
		if err := os.Remove(filepath.Join(dir, p)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	g, err = Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if covered, orphans, others := vectorCoverage(t, g, emb.Version()); covered != 3 || orphans != 0 || others != 0 {
		t.Fatalf("after the search file was built again: %d memories with a vector, %d orphans, %d of another version; want 3, 0, 0", covered, orphans, others)
	}
	sameHits(t, search(t, g, "postgresql upgrade"), before, "after the search file was built again", "before")
}

// sameHits fails t unless got and want name the same memories in the same
// order with the same lexical and vector parts.
func sameHits(t *testing.T, got, want []memsync.Hit, gotName, wantName string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d hits %s, %d %s", len(got), gotName, len(want), wantName)
	}
	for i := range got {
		if got[i].UUID != want[i].UUID || got[i].Parts != want[i].Parts {
			t.Errorf("hit %d: %s %s %+v, %s %s %+v", i, gotName, got[i].UUID, got[i].Parts, wantName, want[i].UUID, want[i].Parts)
		}
	}
}

// TestReembedSkipsReplacedMemories: a re-embedding job computed before a
// memory was replaced (Reembed reads the stale memories, the indexer writes
// their vectors later) writes no vector for the memory that is gone, and
// none past the watermark.
func TestReembedSkipsReplacedMemories(t *testing.T) {
	ctx := context.Background()
	emb := memsynctest.NewEmbedder(64)
	g, err := Open(t.TempDir(), nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	apply(t, g, mem("m1", 1, "first version"), mem("m2", 2, "other"))
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	old := storedID(t, g, "m1")
	apply(t, g, mem("m1", 1, "second version"))
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	v := []any{old, "CONSTELLATION", emb.Version(), encodeVector(emb.Embed("first version")),
		int64(1 << 40), "CONSTELLATION", emb.Version(), encodeVector(emb.Embed("beyond"))}
	g.mu.Lock()
	g.ix.send(ixJob{gen: g.gen, vectors: v})
	g.mu.Unlock()
	covered, orphans, others := vectorCoverage(t, g, emb.Version())
	if covered != 2 || orphans != 0 || others != 0 {
		t.Fatalf("%d memories with a vector, %d orphans, %d of another version; want 2, 0, 0", covered, orphans, others)
	}
}

const vecChildEnv = "MEMSYNC_TEST_VEC_CHILD"

// TestKilledProjectionVectorsChild is the process
// TestKilledProjectionVectors kills: it projects with an embedder until it
// is killed.
func TestKilledProjectionVectorsChild(t *testing.T) {
	dir := os.Getenv(vecChildEnv)
	if dir == "" {
		t.Skip("the child of TestKilledProjectionVectors")
	}
	ctx := context.Background()
	g, err := Open(dir, nil, WithEmbedder(memsynctest.NewEmbedder(64)))
	if err != nil {
		t.Fatal(err)
	}
	recs := vecRecords(100_000)
	for lo := 0; ; lo += 100 {
		if _, err := g.Apply(ctx, recs[lo:lo+100]); err != nil {
			t.Fatal(err)
		}
		if lo == 300 {
			fmt.Println("ready")
		}
	}
}

func vecRecords(n int) []memsync.Memory {
	out := make([]memsync.Memory, 0, n)
	for i := range n {
		out = append(out, mem(fmt.Sprintf("v-%06d", i), i, fmt.Sprintf("projected memory %d about postgres", i)))
	}
	return out
}

// TestKilledProjectionVectors: a projection killed with SIGKILL while the
// indexer writes vectors leaves, at the next Open, every stored memory
// with exactly one vector of the model's version (those the search file
// lost are embedded again from the stored records), none of a memory that
// is not stored, and search ranks by them.
func TestKilledProjectionVectors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	emb := memsynctest.NewEmbedder(64)
	memsynctest.KillWhenReady(t, "TestKilledProjectionVectorsChild", vecChildEnv+"="+dir)

	g, err := Open(dir, zaptest.NewLogger(t), WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	st, err := g.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories < 400 {
		t.Fatalf("the killed projection left %d memories, acknowledged at least 400", st.Memories)
	}
	covered, orphans, others := vectorCoverage(t, g, emb.Version())
	if covered != st.Memories || orphans != 0 || others != 0 {
		t.Fatalf("%d of %d memories with a vector, %d orphans, %d of another version", covered, st.Memories, orphans, others)
	}
	hits, err := g.Search(ctx, memsync.SearchQuery{Text: "postgresql", Limit: 10, Groups: []string{"CONSTELLATION"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Parts.VecRank == 0 {
		t.Fatalf("search after the kill: %+v", hits)
	}
}
