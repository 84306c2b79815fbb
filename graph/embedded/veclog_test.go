package embedded

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// The vector log's faults: bytes past the committed length, a log cut
// short or missing, a damaged record, memories indexed by a process
// without an embedder. Each leaves every stored memory with exactly one
// vector once a writer has opened the store, and never fails a search.

// vecLogFile is the path of g's current vector log and its committed length.
func vecLogFile(t *testing.T, g *Graph) (string, int64) {
	t.Helper()
	if err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var st vecState
	if err := g.rdb.QueryRowContext(context.Background(), sqlReadVecState).Scan(&st.epoch, &st.version, &st.bytes); err != nil {
		t.Fatal(err)
	}
	return vecLogPath(filepath.Join(filepath.Dir(g.path), SearchFileName), st.epoch), st.bytes
}

// openVectors opens a store in dir with emb, closed when t ends.
func openVectors(t *testing.T, dir string, emb memsync.Embedder) *Graph {
	t.Helper()
	g, err := Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// wantCovered fails t unless each of the n stored memories has exactly
// one vector of version and the log holds no other.
func wantCovered(t *testing.T, g *Graph, version string, n int, when string) {
	t.Helper()
	if covered, orphans, twice, others := vectorCoverage(t, g, version); covered != n || orphans+twice+others != 0 {
		t.Fatalf("%s: %d memories with a vector, %d orphans, %d twice, %d of another version; want %d, 0, 0, 0", when, covered, orphans, twice, others, n)
	}
}

func logBatch(lo, n int) []memsync.Memory {
	out := make([]memsync.Memory, 0, n)
	for i := lo; i < lo+n; i++ {
		text := "lunch was pizza again"
		if i%7 == 0 {
			text = "we moved the orders to postgres"
		}
		out = append(out, mem("l-"+string(rune('a'+i/26%26))+string(rune('a'+i%26)), i+1, text))
	}
	return out
}

// TestVecLogPastCommitted: bytes a transaction wrote past the committed
// length (it failed, or the process was killed before COMMIT) are never
// read, and the next job writes over them.
func TestVecLogPastCommitted(t *testing.T) {
	emb := memsynctest.NewEmbedder(64)
	g := openVectors(t, t.TempDir(), emb)
	apply(t, g, logBatch(0, 10)...)
	path, size := vecLogFile(t, g)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xAB}, 5000), size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if hits := search(t, g, "postgresql"); len(hits) == 0 || hits[0].Parts.VecRank == 0 {
		t.Fatalf("search over a log with junk past its length: %+v", hits)
	}
	apply(t, g, logBatch(10, 10)...)
	wantCovered(t, g, emb.Version(), 20, "after junk past the length")
	if g.vecs.damaged {
		t.Fatal("the search index took the junk for damage")
	}
}

// TestVecLogDamaged: a log cut short, deleted, or with a record changed
// (pages lost in a power cut) is found at the next Open for writing and
// built again, every memory embedded once; a reader before that searches
// what comes before the damage, and warns, never fails.
func TestVecLogDamaged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string, size int64)
	}{
		{"cut short", func(t *testing.T, path string, size int64) {
			if err := os.Truncate(path, size-100); err != nil {
				t.Fatal(err)
			}
		}},
		{"deleted", func(t *testing.T, path string, _ int64) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a byte changed", func(t *testing.T, path string, size int64) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[size/2] ^= 0x40
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			emb := memsynctest.NewEmbedder(64)
			g, err := Open(dir, nil, WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			apply(t, g, logBatch(0, 30)...)
			path, size := vecLogFile(t, g)
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, path, size)
			for _, p := range []string{filepath.Join(dir, vecFileName)} {
				os.Remove(p) // the index file would hide the damage from the reader
			}

			core, logs := observer.New(zapcore.WarnLevel)
			ro, err := OpenReadOnly(dir, zap.New(core), WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			if hits := search(t, ro, "orders postgres"); len(hits) == 0 {
				t.Fatal("a reader of a damaged log found nothing")
			}
			ro.Close()
			if tc.name != "deleted" && logs.FilterMessageSnippet("vector log damaged").Len() == 0 {
				t.Error("the reader did not warn of the damage")
			}

			core, logs = observer.New(zapcore.WarnLevel)
			g, err = Open(dir, zap.New(core), WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			wantCovered(t, g, emb.Version(), 30, "after Open")
			if logs.FilterMessageSnippet("vector log damaged").Len() == 0 {
				t.Error("Open did not say the log was damaged")
			}
			if hits := search(t, g, "postgresql"); len(hits) == 0 || hits[0].Parts.VecRank == 0 {
				t.Fatalf("search after the log was built again: %+v", hits)
			}
			if logs, _ := filepath.Glob(filepath.Join(dir, vecLogPrefix+"*")); len(logs) != 1 {
				t.Errorf("logs beside the store: %v, want the current one", logs)
			}
		})
	}
}

// TestVecLogGapsFilled: memories a process without an embedder indexed
// into a store that has vectors are gaps of the log, which the next Open
// with the embedder fills; a new model replaces the log whole.
func TestVecLogGapsFilled(t *testing.T) {
	dir := t.TempDir()
	emb := memsynctest.NewEmbedder(64)
	g, err := Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, g, logBatch(0, 10)...)
	g.Close()

	lex, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, lex, logBatch(10, 5)...)
	apply(t, lex, logBatch(15, 5)...)
	if err := lex.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	gs, err := gaps(context.Background(), lex.rdb, `SELECT first, last FROM search.vec_gaps ORDER BY first`)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 || gs[0].last-gs[0].first != 9 {
		t.Fatalf("gaps after two lexical-only batches %v, want one of ten memories", gs)
	}
	lex.Close()

	g, err = Open(dir, nil, WithEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	wantCovered(t, g, emb.Version(), 20, "after Open")
	g.Close()

	other := memsynctest.Embedder{N: 64, Salt: "other"}
	g, err = Open(dir, nil, WithEmbedder(other))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	wantCovered(t, g, other.Version(), 20, "with another model")
}

// TestVecGapsArithmetic: inGaps and subtractGaps on sorted, disjoint ranges.
func TestVecGapsArithmetic(t *testing.T) {
	gs := []vecGap{{1, 10}, {20, 30}, {40, 40}}
	for _, tc := range []struct {
		id   int64
		want bool
	}{{0, false}, {1, true}, {10, true}, {11, false}, {25, true}, {40, true}, {41, false}} {
		if got := inGaps(gs, tc.id); got != tc.want {
			t.Errorf("inGaps(%d) = %v, want %v", tc.id, got, tc.want)
		}
	}
	for _, tc := range []struct {
		after, last int64
		want        []vecGap
	}{
		{0, 10, []vecGap{{20, 30}, {40, 40}}},
		{4, 6, []vecGap{{1, 4}, {7, 10}, {20, 30}, {40, 40}}},
		{5, 25, []vecGap{{1, 5}, {26, 30}, {40, 40}}},
		{0, 100, nil},
		{30, 39, gs},
		{10, 19, gs},
	} {
		if got := subtractGaps(gs, tc.after, tc.last); !slices.Equal(got, tc.want) {
			t.Errorf("subtractGaps(%d, %d) = %v, want %v", tc.after, tc.last, got, tc.want)
		}
	}
}

// TestReadVecLogChunks: records read across readVecLog's chunk boundary
// come back whole and in order, and a record cut at the end is damage.
func TestReadVecLogChunks(t *testing.T) {
	const dim = 300
	var b []byte
	var want []int64
	for i := int64(1); len(b) < 3*vecLogChunk; i++ {
		vec := make([]byte, 4+dim)
		vec[4+int(i)%dim] = byte(i)
		b = appendVecRecord(b, i, "group-"+string(rune('a'+i%20)), vec)
		want = append(want, i)
	}
	var got []int64
	n, err := readVecLog(bytes.NewReader(b), 0, int64(len(b)), dim, func(r vecRecord) { got = append(got, r.id) })
	if err != nil || n != len(want) || !slices.Equal(got, want) {
		t.Fatalf("read %d records (err %v), want %d in order", n, err, len(want))
	}
	if _, err := readVecLog(bytes.NewReader(b[:len(b)-1]), 0, int64(len(b)-1), dim, func(vecRecord) {}); err == nil {
		t.Fatal("a log cut inside its last record read without error")
	}
	if _, err := readVecLog(bytes.NewReader(b[:len(b)-1]), 0, int64(len(b)), dim, func(vecRecord) {}); err == nil {
		t.Fatal("a log shorter than its length read without error")
	}
}

// FuzzVecRecord: parseVecRecord never panics, never reads past its input,
// and what it accepts is a record appendVecRecord writes again byte for
// byte.
func FuzzVecRecord(f *testing.F) {
	f.Add(appendVecRecord(nil, 7, "CONSTELLATION", make([]byte, 4+8)), 8)
	f.Add([]byte{0xff, 0xff, 1, 2, 3}, 8)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, dim int) {
		if dim < 0 || dim > 4096 {
			return
		}
		r, n, err := parseVecRecord(b, dim)
		if err != nil {
			return
		}
		if n > len(b) || len(r.q) != dim {
			t.Fatalf("record of %d bytes from %d, %d dimensions of %d", n, len(b), len(r.q), dim)
		}
		vec := append(appendVector(nil, nil)[:0], make([]byte, 4)...)
		copy(vec, b[2+len(r.group)+8:])
		again := appendVecRecord(nil, r.id, string(r.group), append(vec, r.q...))
		if !bytes.Equal(again, b[:n]) {
			t.Fatalf("record written again differs:\n%x\n%x", again, b[:n])
		}
	})
}

// TestVecLogWriteFails: a log that cannot be written (a full disk) fails
// the indexer's job with an error that names the log, loses nothing, and
// the job's memories get their vectors once it can be written again.
func TestVecLogWriteFails(t *testing.T) {
	ctx := context.Background()
	emb := memsynctest.NewEmbedder(64)
	g := openVectors(t, t.TempDir(), emb)
	apply(t, g, logBatch(0, 10)...)
	path, _ := vecLogFile(t, g) // the indexer is idle after it
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	good := g.ix.vl.f
	g.ix.vl.f = ro // every write fails, as on a full disk
	apply(t, g, logBatch(10, 10)...)
	err = g.Flush(ctx)
	if err == nil || !strings.Contains(err.Error(), "vector log") {
		t.Fatalf("Flush after a failed log write: %v, want an error naming the vector log", err)
	}
	g.ix.vl.f = good
	ro.Close()
	// The next search retries the job from the stored records.
	search(t, g, "orders postgres")
	wantCovered(t, g, emb.Version(), 20, "after the retry")
}

// TestVecLogLostUnderOpenStore: a log removed or cut short while the
// store is open is found at the indexer's next write, which starts a new
// log (and says so) rather than write past a hole; the memories of the
// lost one are embedded again in the background, without a reopen (issue
// 51 §12).
func TestVecLogLostUnderOpenStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(path string) error
	}{
		{"removed", os.Remove},
		{"cut short", func(path string) error { return os.Truncate(path, 100) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			emb := memsynctest.NewEmbedder(64)
			core, logs := observer.New(zapcore.WarnLevel)
			g, err := Open(dir, zap.New(core), WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			apply(t, g, logBatch(0, 10)...)
			path, _ := vecLogFile(t, g)
			if err := tc.lose(path); err != nil {
				t.Fatal(err)
			}
			apply(t, g, logBatch(10, 10)...)
			wantCovered(t, g, emb.Version(), 20, "after the log was lost, without a reopen")
			if logs.FilterMessageSnippet("vector log damaged").Len() == 0 {
				t.Error("the indexer did not say the log was damaged")
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			wantCovered(t, openVectors(t, dir, emb), emb.Version(), 20, "after Open")
		})
	}
}

// TestVecLogCutUnderRunningStore is issue 51 §12: the log cut short under
// an open store (a daemon) that writes nothing more. The store's next
// search notices, and the log is built again in the background: every
// memory has its vector again, for this process and for a new reader,
// without a reopen.
func TestVecLogCutUnderRunningStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(path string) error
	}{
		{"removed", os.Remove},
		{"cut short", func(path string) error { return os.Truncate(path, 100) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			emb := memsynctest.NewEmbedder(64)
			core, logs := observer.New(zapcore.WarnLevel)
			g, err := Open(dir, zap.New(core), WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			apply(t, g, logBatch(0, 30)...)
			search(t, g, "postgresql") // the daemon's index holds every vector
			path, _ := vecLogFile(t, g)
			if err := tc.lose(path); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, vecFileName)) // the index file would hide the damage from a reader
			if hits := search(t, g, "postgresql"); len(hits) == 0 || hits[0].Parts.VecRank == 0 {
				t.Fatalf("the store's search once its log was cut: %+v", hits)
			}
			wantCovered(t, g, emb.Version(), 30, "after a search found the log cut")
			if logs.FilterMessageSnippet("vector log damaged").Len() == 0 {
				t.Error("the store did not say the log was damaged")
			}
			os.Remove(filepath.Join(dir, vecFileName))
			ro, err := OpenReadOnly(dir, nil, WithEmbedder(emb))
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			hits := search(t, ro, "postgresql")
			vec := 0
			for _, h := range hits {
				if h.Parts.VecRank > 0 {
					vec++
				}
			}
			if vec < 4 { // logBatch(0, 30): 5 memories say "postgres"
				t.Fatalf("a new reader found %d hits by vector, want every postgres memory: %+v", vec, hits)
			}
		})
	}
}
