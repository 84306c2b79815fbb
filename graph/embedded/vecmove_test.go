package embedded

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// checkVectors fails unless, once the indexer has caught up, every memory
// has exactly one vector, of version, in the search file, none is of no
// memory, and the main file has no vectors table.
func checkVectors(t *testing.T, g *Graph, version string) {
	t.Helper()
	ctx := context.Background()
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var mems, vecs, current, orphans, inMain int
	if err := g.rdb.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM memories),
		(SELECT count(*) FROM search.vectors),
		(SELECT count(*) FROM search.vectors WHERE version = ?1),
		(SELECT count(*) FROM search.vectors WHERE id NOT IN (SELECT id FROM memories)),
		(SELECT count(*) FROM main.sqlite_schema WHERE name = 'vectors')`, version).Scan(&mems, &vecs, &current, &orphans, &inMain); err != nil {
		t.Fatal(err)
	}
	if mems == 0 || vecs != mems || current != mems || orphans != 0 || inMain != 0 {
		t.Fatalf("%d memories; %d vectors in the search file, %d of %s, %d of no memory; %d vectors tables in the main file",
			mems, vecs, current, version, orphans, inMain)
	}
}

// sameHybrid fails unless got and want find the same memories, ranked and
// scored alike (parts included), for queries lexical and vector-only.
func sameHybrid(t *testing.T, got, want *Graph) {
	t.Helper()
	for _, q := range []string{"deploy", "kafka lag", "database migration rollback", "postgresql upgrade"} {
		for _, agent := range []string{"alice", "bob"} {
			sq := memsync.SearchQuery{Text: q, Groups: []string{journal.SharedGroup, journal.PrivateGroup(agent)}, Limit: 20, All: true}
			g, err := got.Search(context.Background(), sq)
			if err != nil {
				t.Fatal(err)
			}
			w, err := want.Search(context.Background(), sq)
			if err != nil {
				t.Fatal(err)
			}
			if len(g) == 0 || len(g) != len(w) {
				t.Fatalf("Search(%q) as %s: %d hits, want %d", q, agent, len(g), len(w))
			}
			for i := range g {
				if g[i].UUID != w[i].UUID || g[i].Parts != w[i].Parts {
					t.Fatalf("Search(%q) as %s, hit %d: %s %+v, want %s %+v", q, agent, i, g[i].UUID, g[i].Parts, w[i].UUID, w[i].Parts)
				}
			}
		}
	}
}

// TestMigrateVectors: testdata/schema-v3 was written by schema version 3
// with the test embedder (Corpus(11, 150) in batches of 40): its vectors in
// the main file, its search file of version 2. Open migrates both in
// place: the main file loses its vectors table, the search file gains the
// vectors (embedded again in the background), and the store then holds
// and finds what a fresh one does.
func TestMigrateVectors(t *testing.T) {
	emb := memsynctest.NewEmbedder(64)
	dir := t.TempDir()
	for _, f := range []string{FileName, SearchFileName} {
		copyFile(t, filepath.Join("testdata", "schema-v3", f), filepath.Join(dir, f))
	}
	migrated, err := Open(dir, zaptest.NewLogger(t), WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer migrated.Close()
	checkVectors(t, migrated, emb.Version())
	var v, sv int
	var epochs int
	conn, err := migrated.rdb.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for q, dst := range map[string]*int{`PRAGMA main.user_version`: &v, `PRAGMA search.user_version`: &sv,
		`SELECT count(*) FROM meta WHERE key = 'vectors_epoch'`: &epochs} {
		if err := conn.QueryRowContext(context.Background(), q).Scan(dst); err != nil {
			t.Fatal(err)
		}
	}
	if v != SchemaVersion || sv != searchSchemaVersion || epochs != 0 {
		t.Fatalf("schema versions %d and %d (want %d, %d); %d vectors_epoch keys left in the main file", v, sv, SchemaVersion, searchSchemaVersion, epochs)
	}
	fresh, err := Open(t.TempDir(), nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	recs := graphtest.Corpus(11, 150)
	for lo := 0; lo < len(recs); lo += 40 {
		apply(t, fresh, recs[lo:min(lo+40, len(recs))]...)
	}
	if got, want := graphtest.Dump(t, migrated), graphtest.Dump(t, fresh); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("migrated store differs from a fresh one (%d and %d memories)", len(got), len(want))
	}
	sameHybrid(t, migrated, fresh)
	apply(t, migrated, mem("after", 1, "xylophone written after the migration"))
	checkVectors(t, migrated, emb.Version())
}

// TestVectorsSearchFileRecovers: the vectors are derived data of the
// search file: when it is lost, behind (a batch the indexer never wrote)
// or damaged, the indexer embeds what it indexes again, and the store
// finds what it found before.
func TestVectorsSearchFileRecovers(t *testing.T) {
	emb := memsynctest.NewEmbedder(64)
	recs := graphtest.Corpus(11, 150)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir, saved string)
	}{
		{"deleted", func(t *testing.T, dir, _ string) { os.Remove(filepath.Join(dir, SearchFileName)) }},
		{"behind", func(t *testing.T, dir, saved string) {
			copyFile(t, filepath.Join(saved, SearchFileName), filepath.Join(dir, SearchFileName))
		}},
		{"damaged", func(t *testing.T, dir, _ string) {
			if err := os.WriteFile(filepath.Join(dir, SearchFileName), []byte(strings.Repeat("not a database ", 500)), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, saved := t.TempDir(), t.TempDir()
			g, err := Open(dir, zaptest.NewLogger(t), WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			apply(t, g, recs[:80]...)
			closeGraph(t, g)
			for _, f := range []string{FileName, SearchFileName} {
				copyFile(t, filepath.Join(dir, f), filepath.Join(saved, f))
			}
			if g, err = Open(dir, zaptest.NewLogger(t), WithEmbedder(emb)); err != nil {
				t.Fatal(err)
			}
			apply(t, g, recs[80:]...)
			closeGraph(t, g)
			tc.damage(t, dir, saved)

			g, err = Open(dir, zaptest.NewLogger(t), WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			checkVectors(t, g, emb.Version())
			fresh, err := Open(t.TempDir(), nil, WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			apply(t, fresh, recs...)
			sameHybrid(t, g, fresh)
		})
	}
}

// vecChildEnv names the directory TestKilledProjectionVectorsChild
// projects into.
const vecChildEnv = "MEMSYNC_TEST_VEC_CHILD"

// TestKilledProjectionVectorsChild is the process
// TestKilledProjectionVectors kills: it drops the store and projects with
// an embedder until it is killed.
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
	if err := g.Drop(ctx); err != nil {
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

// TestKilledProjectionVectors: a projection with an embedder killed with
// SIGKILL (its indexer, which writes the vectors, at any point behind the
// main file) loses no vector: the next process's indexer embeds what the
// search file lacks, and every memory has its vector once Flush returns.
func TestKilledProjectionVectors(t *testing.T) {
	emb := memsynctest.NewEmbedder(64)
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run", "^TestKilledProjectionVectorsChild$")
	child.Env = append(os.Environ(), vecChildEnv+"="+dir)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	ready := false
	for lines.Scan() {
		if lines.Text() == "ready" {
			ready = true
			break
		}
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = child.Wait()
	if !ready {
		t.Fatal("the projecting child never got going")
	}
	g, err := Open(dir, zaptest.NewLogger(t), WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	checkVectors(t, g, emb.Version())
	st, err := g.Stats(context.Background())
	if err != nil || st.Memories < 400 {
		t.Fatalf("the killed projection left %+v (%v), acknowledged at least 400", st, err)
	}
	apply(t, g, seenRecords(st.Memories+500)...)
	checkVectors(t, g, emb.Version())
}
