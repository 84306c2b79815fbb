package embedded

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// found lists the uuids a shared search for text finds, sorted.
// lexicalHits is hits without the neighbours the recipe brought in.
func lexicalHits(hits []memsync.Hit) []memsync.Hit {
	var out []memsync.Hit
	for _, h := range hits {
		if h.From == "" {
			out = append(out, h)
		}
	}
	return out
}

func found(t *testing.T, g *Graph, text string) []string {
	t.Helper()
	return searchIDs(t, g, memsync.SearchQuery{Text: text, Groups: []string{journal.SharedGroup}, All: true, Limit: 1000})
}

// searchIDs lists the uuids of the lexical hits q finds, sorted (the
// neighbours a hit brings in are left out: these cases are about what
// the index holds, and the test memories, seconds apart, are an episode).
func searchIDs(t *testing.T, g *Graph, q memsync.SearchQuery) []string {
	t.Helper()
	hits, err := read.Search(context.Background(), g, q)
	if err != nil {
		t.Fatal(err)
	}
	hits = lexicalHits(hits)
	var out []string
	for _, h := range hits {
		out = append(out, h.UUID)
	}
	slices.Sort(out)
	return out
}

func reopen(t *testing.T, dir string) *Graph {
	t.Helper()
	g, err := Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func closeGraph(t *testing.T, g *Graph) {
	t.Helper()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The search file is derived data: whatever happened to it (deleted,
// behind the store after a crash, damaged, left from before a Drop, ahead
// of a store restored from an older copy), Open builds what is missing or
// wrong again from the stored records, and Search never finds a memory
// that is not there or misses one that is.
func TestSearchFileRecovers(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage runs on the closed store in dir; saved holds the files
		// saved after the first batch (zebra) was applied and the store closed.
		damage func(t *testing.T, dir, saved string)
		want   map[string][]string // query -> uuids found after reopening
		// quartz: what Search(quartz) finds once q2 ("quartz again") is applied
		quartz []string
	}{
		{
			name:   "deleted",
			damage: func(t *testing.T, dir, _ string) { os.Remove(filepath.Join(dir, SearchFileName)) },
			want:   map[string][]string{"zebra": {"z1", "z2"}, "quartz": {"q1"}},
			quartz: []string{"q1", "q2"},
		},
		{
			name: "behind: the store committed a batch the indexer never wrote",
			damage: func(t *testing.T, dir, saved string) {
				copyFile(t, filepath.Join(saved, SearchFileName), filepath.Join(dir, SearchFileName))
			},
			want:   map[string][]string{"zebra": {"z1", "z2"}, "quartz": {"q1"}},
			quartz: []string{"q1", "q2"},
		},
		{
			name: "damaged",
			damage: func(t *testing.T, dir, _ string) {
				if err := os.WriteFile(filepath.Join(dir, SearchFileName), []byte(strings.Repeat("not a database ", 500)), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want:   map[string][]string{"zebra": {"z1", "z2"}, "quartz": {"q1"}},
			quartz: []string{"q1", "q2"},
		},
		{
			name: "ahead: the store was put back to an older copy",
			damage: func(t *testing.T, dir, saved string) {
				copyFile(t, filepath.Join(saved, FileName), filepath.Join(dir, FileName))
			},
			want: map[string][]string{"zebra": {"z1", "z2"}, "quartz": nil},
			// q2 takes q1's id: the old index's row for it must be gone.
			quartz: []string{"q2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, saved := t.TempDir(), t.TempDir()
			g := reopen(t, dir)
			apply(t, g, mem("z1", 1, "zebra one"), mem("z2", 2, "zebra two"))
			closeGraph(t, g)
			for _, f := range []string{FileName, SearchFileName} {
				copyFile(t, filepath.Join(dir, f), filepath.Join(saved, f))
			}
			g = reopen(t, dir)
			apply(t, g, mem("q1", 3, "quartz"))
			closeGraph(t, g)

			tc.damage(t, dir, saved)
			g = reopen(t, dir)
			for q, want := range tc.want {
				if got := found(t, g, q); !slices.Equal(got, want) {
					t.Errorf("Search(%q) = %v, want %v", q, got, want)
				}
			}
			// Writes go on from there, indexed once.
			apply(t, g, mem("q2", 4, "quartz anew"))
			if got := found(t, g, "quartz"); !slices.Equal(got, tc.quartz) {
				t.Errorf("after q2, Search(quartz) = %v, want %v", got, tc.quartz)
			}
			if got := found(t, g, "anew"); !slices.Equal(got, []string{"q2"}) {
				t.Errorf("after q2, Search(anew) = %v, want [q2]", got)
			}
		})
	}
}

// A Drop starts a new generation: what the search file held before is
// never found again, even if the indexer had not caught up with the Drop
// when the store was closed.
func TestSearchFileAfterDrop(t *testing.T) {
	dir, saved := t.TempDir(), t.TempDir()
	g := reopen(t, dir)
	apply(t, g, mem("z1", 1, "zebra one"), mem("z2", 2, "zebra two"))
	closeGraph(t, g)
	copyFile(t, filepath.Join(dir, SearchFileName), filepath.Join(saved, SearchFileName))

	g = reopen(t, dir)
	if err := g.Drop(context.Background()); err != nil {
		t.Fatal(err)
	}
	apply(t, g, mem("q1", 1, "quartz"))
	if got := found(t, g, "zebra"); len(got) != 0 {
		t.Fatalf("after Drop, Search(zebra) = %v", got)
	}
	closeGraph(t, g)
	// The search file of the old generation comes back.
	copyFile(t, filepath.Join(saved, SearchFileName), filepath.Join(dir, SearchFileName))
	g = reopen(t, dir)
	if got := found(t, g, "zebra"); len(got) != 0 {
		t.Errorf("old generation's index: Search(zebra) = %v", got)
	}
	if got := found(t, g, "quartz"); !slices.Equal(got, []string{"q1"}) {
		t.Errorf("Search(quartz) = %v, want [q1]", got)
	}
	// New ids go on after the dropped ones: no row of an old index can
	// name a new memory.
	var id int64
	if err := g.rdb.QueryRow(`SELECT id FROM memories WHERE uuid = 'q1'`).Scan(&id); err != nil || id != 3 {
		t.Errorf("q1 has id %d (%v), want 3", id, err)
	}
}

// When the search file cannot be written (full), Apply still lands,
// Search still answers from what is indexed, Flush reports the failure,
// and once there is room again the indexer catches up from the records.
func TestIndexingFailureDegrades(t *testing.T) {
	g := openTest(t)
	ctx := context.Background()
	apply(t, g, mem("z1", 1, "zebra one"))
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	setMaxPages := func(n string) {
		t.Helper()
		// Through the indexer, so the pragma runs between its jobs.
		g.ix.sendMu.Lock()
		defer g.ix.sendMu.Unlock()
		if _, err := g.ix.w.conn.ExecContext(ctx, `PRAGMA max_page_count = `+n); err != nil {
			t.Fatal(err)
		}
	}
	var pages int
	if err := g.ix.w.conn.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	setMaxPages(strconv.Itoa(pages))
	var batch []memsync.Memory
	for i := range 200 {
		// Words of their own, so the index outgrows the free room in the
		// file's pages (whatever their size).
		var words []string
		for j := range 40 {
			words = append(words, "zebra", "filler"+strconv.Itoa(i*40+j))
		}
		batch = append(batch, mem("big"+strconv.Itoa(i), 10+i, strings.Join(words, " ")))
	}
	apply(t, g, batch...)
	if err := g.Flush(ctx); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Flush with a full search file: %v, want disk full", err)
	}
	if st, err := g.Stats(ctx); err != nil || st.Memories != 201 {
		t.Fatalf("Stats = %+v, %v; the batch must have landed", st, err)
	}
	// Still full: a search answers from what is indexed and asks for a
	// retry, which fails again; Flush waits for that retry.
	if got := found(t, g, "zebra"); !slices.Equal(got, []string{"z1"}) {
		t.Fatalf("Search after indexing failed = %v, want what was indexed: [z1]", got)
	}
	if err := g.Flush(ctx); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Flush after a retry on a full search file: %v, want disk full", err)
	}
	// Room again; nothing retries until someone needs the index.
	setMaxPages("1073741823")
	// This search asks for a retry and goes on without waiting for it: it
	// finds what was indexed, or everything if the retry was quicker.
	if got := found(t, g, "zebra"); len(got) != 1 && len(got) != 201 {
		t.Fatalf("Search while the index is retried finds %v, want [z1] or all 201", got)
	}
	// The retry is counted as queued before that search returns, so the
	// next search waits for it (it used to be counted on a goroutine of its
	// own, and the next search could find nothing to wait for: 1 in 5 runs).
	if got := found(t, g, "zebra"); len(got) != 201 {
		t.Fatalf("after the retry Search finds %d, want 201", len(got))
	}
	if err := g.Flush(ctx); err != nil {
		t.Fatalf("Flush after the retry: %v", err)
	}
}

// Every read connection has the search file attached, with a page cache of
// its own as large as the main file's (cache_size is per schema).
func TestReadersAttachTheSearchFile(t *testing.T) {
	g := openTest(t)
	for _, q := range []string{`PRAGMA main.cache_size`, `PRAGMA search.cache_size`} {
		var n int
		if err := g.rdb.QueryRow(q).Scan(&n); err != nil || n != -16384 {
			t.Errorf("%s = %d (%v), want -16384", q, n, err)
		}
	}
}

// A handle still writing after another one dropped the store (a rebuild
// under a running daemon) meets a search file of another generation; the
// line that says so names the search file once, beside the store's path,
// never a second "path" key.
func TestIndexLogLinesNameEachPathOnce(t *testing.T) {
	dir := t.TempDir()
	core, logs := observer.New(zap.InfoLevel)
	g1, err := Open(dir, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	ctx := context.Background()
	apply(t, g1, mem("a1", 1, "alpha"))
	if err := g1.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	g2, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g2.Close(); err != nil {
		t.Fatal(err)
	}
	apply(t, g1, mem("a2", 2, "beta"))
	if err := g1.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, e := range logs.All() {
		keys := map[string]int{}
		for _, f := range e.Context {
			keys[f.Key]++
		}
		for k, n := range keys {
			if n > 1 {
				t.Errorf("%q carries %d %q keys: %v", e.Message, n, k, e.Context)
			}
		}
		if strings.Contains(e.Message, "another generation") {
			seen = true
			if keys["search_file"] != 1 {
				t.Errorf("%q does not name the search file: %v", e.Message, e.Context)
			}
		}
	}
	if !seen {
		t.Fatalf("no line about the search index's generation: %v", logs.All())
	}
}

// TestSearchFileOfVersion1Rebuilt: a search file written by a version that
// indexed raw words (schema 1: SQLite's porter tokenizer, no turns) is
// built again from graph.db at Open, so its memories are found by the
// analyzer's terms and their session neighbours join.
func TestSearchFileOfVersion1Rebuilt(t *testing.T) {
	dir := t.TempDir()
	g := reopen(t, dir)
	sess := func(r *journal.Record) { r.Session = "s1" }
	apply(t, g, mem("v1", 1, "Café opened near the station", sess), mem("v2", 2, "a sunrise over a lake", sess))
	closeGraph(t, g)

	// Make the file look like version 1's: its own tokenizer, no turns.
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, SearchFileName)))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TABLE turns`, `DROP TABLE lex_blocks`,
		`CREATE VIRTUAL TABLE memories_fts USING fts5(text, meta, grp, content = '', tokenize = 'porter unicode61 remove_diacritics 2')`,
		`PRAGMA user_version = 1`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	g = reopen(t, dir)
	hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: "cafe", Groups: []string{journal.SharedGroup}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.UUID)
	}
	if slices.Sort(got); !slices.Equal(got, []string{"v1", "v2"}) {
		t.Fatalf("Search(cafe) after the upgrade = %v, want v1 and its neighbour v2", got)
	}
}

// TestOnlyTheSearchWriterYields pins which writer gives way (yieldEvery):
// the search file's, which works beside Apply, and never the memories
// file's, which is the projection's critical path.
func TestOnlyTheSearchWriterYields(t *testing.T) {
	g := openTest(t)
	if !g.ix.w.background {
		t.Error("the search file's writer does not yield between inserts")
	}
	if g.w.background {
		t.Error("the memories file's writer yields between inserts: it is the critical path")
	}
}
