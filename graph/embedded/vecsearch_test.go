package embedded

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/memsync"

	"github.com/memsync/memsync/memsync/memsynctest"
	"github.com/memsync/memsync/memsync/read"
)

// The vectors live in the vector log beside the search file (search
// schema 7) and follow its rules: these tests show they are built again
// with it, never ahead of its watermark, and never twice for a memory.

// loggedVec is a record of the vector log as a test reads it.
type loggedVec struct {
	id    int64
	group string
	vec   []byte // as encodeVector encodes it
}

// logVectors reads the store's vector log as a reader does: its records,
// in order, and the log's version.
func logVectors(t *testing.T, g *Graph) (recs []loggedVec, version string) {
	t.Helper()
	ctx := context.Background()
	var st vecState
	if err := g.rdb.QueryRowContext(ctx, sqlReadVecState).Scan(&st.epoch, &st.version, &st.bytes); err != nil {
		t.Fatal(err)
	}
	if st.bytes == 0 {
		return nil, st.version
	}
	f, err := os.Open(vecLogPath(filepath.Join(filepath.Dir(g.path), SearchFileName), st.epoch))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := readVecLog(f, 0, st.bytes, g.emb.Dim(), func(r vecRecord) {
		vec := binary.LittleEndian.AppendUint32(nil, math.Float32bits(r.scale))
		recs = append(recs, loggedVec{r.id, string(r.group), append(vec, r.q...)})
	}); err != nil {
		t.Fatal(err)
	}
	return recs, st.version
}

// vectorCoverage is, once the indexer has caught up, how many stored
// memories have exactly one vector of version, how many vectors name no
// stored memory (a replaced memory's stays in the log), how many memories
// have more than one, and how many vectors are of another version.
func vectorCoverage(t *testing.T, g *Graph, version string) (covered, orphans, twice, others int) {
	t.Helper()
	ctx := context.Background()
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs, logVersion := logVectors(t, g)
	if logVersion != version {
		return 0, 0, 0, len(recs)
	}
	count := map[int64]int{}
	for _, r := range recs {
		count[r.id]++
	}
	rows, err := g.rdb.QueryContext(ctx, `SELECT id FROM memories`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stored := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		stored[id] = true
		if count[id] == 1 {
			covered++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, n := range count {
		if !stored[id] {
			orphans += n
		}
		if n > 1 {
			twice++
		}
	}
	return covered, orphans, twice, 0
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
	if covered, orphans, twice, others := vectorCoverage(t, g, emb.Version()); covered != 3 || orphans != 0 || twice != 0 || others != 0 {
		t.Fatalf("after the search file was built again: %d memories with a vector, %d orphans, %d twice, %d of another version; want 3, 0, 0, 0", covered, orphans, twice, others)
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
// memory was replaced (Reembed reads the gaps' memories, the indexer
// writes their vectors later) writes no vector for the memory that is
// gone, none for one the log holds already, and none past the watermark.
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
	// The earlier version of a uuid wins its clash (journal.ClashWins).
	apply(t, g, mem("m1", 0, "second version"))
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if storedID(t, g, "m1") == old {
		t.Fatal("m1 was not replaced")
	}
	// The replaced m1 and an id past the watermark in gaps, as if their
	// vectors were lost; m2 and the new m1 have theirs.
	for _, id := range []int64{old, 1 << 40} {
		if _, err := g.ix.w.conn.ExecContext(ctx, sqlAddVecGap, id, id); err != nil {
			t.Fatal(err)
		}
	}
	v := []any{old, "CONSTELLATION", encodeVector(emb.Embed("first version")),
		storedID(t, g, "m2"), "CONSTELLATION", encodeVector(emb.Embed("other")),
		int64(1 << 40), "CONSTELLATION", encodeVector(emb.Embed("beyond"))}
	if !g.sendReembed(reembedJob{version: emb.Version(), after: 0, last: 1 << 40, vectors: v}) {
		t.Fatal("store closed")
	}
	covered, orphans, twice, others := vectorCoverage(t, g, emb.Version())
	// The replaced m1's vector from its own Apply stays (an orphan).
	if covered != 2 || orphans != 1 || twice != 0 || others != 0 {
		t.Fatalf("%d memories with one vector, %d orphans, %d twice, %d of another version; want 2, 1, 0, 0", covered, orphans, twice, others)
	}
	gs, err := gaps(ctx, g.rdb, `SELECT first, last FROM search.vec_gaps ORDER BY first`)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 || gs[0] != (vecGap{1 << 40, 1 << 40}) {
		t.Fatalf("gaps after the job %v, want the one past the watermark", gs)
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
	covered, orphans, twice, others := vectorCoverage(t, g, emb.Version())
	if covered != st.Memories || orphans != 0 || twice != 0 || others != 0 {
		t.Fatalf("%d of %d memories with a vector, %d orphans, %d twice, %d of another version", covered, st.Memories, orphans, twice, others)
	}
	hits, err := read.Search(ctx, g, memsync.SearchQuery{Text: "postgresql", Limit: 10, Groups: []string{"CONSTELLATION"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Parts.VecRank == 0 {
		t.Fatalf("search after the kill: %+v", hits)
	}
}
