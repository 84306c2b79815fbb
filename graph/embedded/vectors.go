package embedded

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/recall"
)

// Vectors (issue 27) are a projection like the full-text index, and live
// beside it in the search file: with an embedder (WithEmbedder), each new
// memory's embedding is computed ahead of Apply (the engine's reader and
// the preparing goroutines embed and quantise, not the writer) and handed
// to the indexer with the batch's full-text rows, which writes it in the
// same transaction of the search file as them, tagged with the embedder's
// Version. So the writer of the main file (the projection's critical path,
// fsynced at every batch) stores no vector bytes, and the vectors follow
// the search file's rules: built again from the stored records (and
// embedded again) when it is missing, behind or of another generation,
// and never ahead of its watermark. Search compares the query with the
// vectors of the reader's groups only and of the current version only
// (vecIndex: an int8 copy in memory, per group, so a vector of a group the
// reader may not see is never read), then scores the best candidates
// exactly, with the search's filters: from their memories' text embedded
// again (the stored int8 rows are for the approximate pass only). An index
// is never mixed: after a model change the rows of the old version are
// ignored until the store re-embeds them (at Open, in the background,
// through the indexer; Flush waits for it; a rebuild re-embeds everything
// anyway).
//
//	search.vectors    id INTEGER PRIMARY KEY (memories.id), group_id, version,
//	                  vec BLOB (encodeVector: float32 scale + Dim int8; or,
//	                  written before, Dim float32, little-endian, L2-normalised)
//	search.vec_state  epoch: bumped by every re-embedding job and every reset
//	                  of the search file (vecIndex starts again)
//
// (The main file held the vectors table until search schema 4; Open drops
// it from older files.)
const (
	sqlCreateVectors = `CREATE TABLE IF NOT EXISTS vectors (
		id       INTEGER PRIMARY KEY,
		group_id TEXT NOT NULL,
		version  TEXT NOT NULL,
		vec      BLOB NOT NULL)`
	sqlCreateVecState = `CREATE TABLE IF NOT EXISTS vec_state (
		one   INTEGER PRIMARY KEY CHECK (one = 1),
		epoch INTEGER NOT NULL)`
	// sqlDropMainVectors drops the vectors table from a main file written
	// before search schema 4 (the vectors are in the search file now).
	sqlDropMainVectors = `DROP TABLE IF EXISTS main.vectors`
	sqlRemoveVector    = `DELETE FROM vectors WHERE id = ?1`
	// sqlStale lists, after id ?1, the memories the search file has
	// indexed whose vector is missing or of another version than ?2 (on
	// the read pool: the main file with the search file attached). Those
	// after its watermark get theirs when they are indexed.
	sqlStale = `SELECT m.id, m.group_id, m.record FROM memories AS m LEFT JOIN search.vectors AS v ON v.id = m.id
	WHERE m.id > ?1 AND m.id <= IFNULL((SELECT through FROM search.indexed), 0)
	  AND (v.id IS NULL OR v.version <> ?2) ORDER BY m.id LIMIT ?3`
	// sqlLiveIDs keeps, of the ids ?1, those of memories still stored.
	sqlLiveIDs = `SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?1))`
)

// sqlBumpEpoch marks a change to vectors already stored (re-embedding, a reset).
const sqlBumpEpoch = `INSERT INTO vec_state (one, epoch) VALUES (1, 1)
	ON CONFLICT (one) DO UPDATE SET epoch = epoch + 1`

var vectorsTable = &table{name: "vectors", cols: 4, head: `INSERT OR REPLACE INTO vectors (id, group_id, version, vec)`}

// Option configures Open and OpenReadOnly.
type Option func(*Graph)

// WithEmbedder makes the store keep a vector per memory and search with
// it (hybrid with the lexical index, package recall). Nil means lexical
// only.
func WithEmbedder(e memsync.Embedder) Option {
	return func(g *Graph) {
		if memsync.Embeds(e) {
			g.emb = e
		}
	}
}

// encodeVector is v as stored: its int8 quantisation, compactly (a
// quarter of float32's bytes, so a quarter of the bytes the projection
// writes and a search loads):
//
//	scale float32 little-endian, then len(v) int8 (v[i] ≈ q[i] × scale)
//
// Rows written before this encoding hold len(v) float32 little-endian
// (4 × len(v) bytes); both are read (storedVec). The stored vector serves
// the approximate pass only: the exact pass scores the candidates with
// their memories' text embedded again (the embedder is deterministic), so
// every backend ranks with the same float32 vector.
func encodeVector(v []float32) []byte { return appendVector(make([]byte, 0, 4+len(v)), v) }

// appendVector appends encodeVector(v) to b.
func appendVector(b []byte, v []float32) []byte {
	n := len(b)
	b = slices.Grow(b, 4+len(v))[:n+4+len(v)]
	s := quantizeInto(b[n+4:], v)
	binary.LittleEndian.PutUint32(b[n:], math.Float32bits(s))
	return b
}

// quantizeFloats appends v quantised to int8 to q (each element to the
// nearest multiple of the scale, maxAbs / 127), with its scale. float32
// throughout: the projection quantises every vector it stores.
func quantizeFloats(v []float32, q []int8) ([]int8, float32) {
	n := len(q)
	q = slices.Grow(q, len(v))[:n+len(v)]
	return q, quantizeInto(q[n:], v)
}

// quantizeInto writes v quantised to int8 into dst (len(v) elements, as
// int8 or as their bytes) and returns the scale: quantizeFloats's
// arithmetic, bit for bit, without branches that depend on the data (a
// vector's signs are random: a branch on each mispredicts every other
// element). The largest magnitude is a plain comparison of |x| (the
// built-in max also orders NaN and signed zeros; a vector has no NaN, and
// the scale of ±0 is 0 either way); y rounds half away from zero as
// y ± 0.5 then truncation, the 0.5 taking y's sign (y - 0.5 is y + -0.5
// in IEEE arithmetic; -0 gives 0 both ways).
func quantizeInto[T int8 | byte](dst []T, v []float32) float32 {
	maxAbs := float32(0)
	for _, x := range v {
		if a := math.Float32frombits(math.Float32bits(x) &^ signBit); a > maxAbs {
			maxAbs = a
		}
	}
	dst = dst[:len(v)]
	if maxAbs == 0 {
		clear(dst)
		return 0
	}
	inv := 127 / maxAbs
	for i, x := range v {
		// Within ±127 (a rounding may pass it by an ulp: truncation keeps
		// it). The conversion keeps the product's rounding: arm64 would
		// otherwise fuse it with the addition below.
		y := float32(x * inv)
		half := math.Float32frombits(math.Float32bits(y)&signBit | half32)
		dst[i] = T(int8(int32(y + half)))
	}
	return maxAbs / 127
}

// signBit and half32 are float32 bits: the sign, and 0.5.
const (
	signBit = 1 << 31
	half32  = 0x3f000000
)

// storedVec is how a stored vector of dim dimensions is encoded.
type storedVec int

const (
	vecBad     storedVec = iota // another dimension: ignored
	vecInt8                     // encodeVector's: scale, then int8
	vecFloat32                  // the first encoding: float32
)

// storedKind tells the encoding of b, a stored vector of dim dimensions
// (the two lengths differ for every dim > 0 but 4/3, never a dimension).
func storedKind(b []byte, dim int) storedVec {
	switch len(b) {
	case 4 + dim:
		return vecInt8
	case 4 * dim:
		return vecFloat32
	}
	return vecBad
}

// dotStored is the dot product of q with the stored float32 vector b
// (both unit length, so their cosine), 0 when b has another dimension.
func dotStored(q []float32, b []byte) float64 {
	if len(b) != 4*len(q) {
		return 0
	}
	var s float32
	for i := range q {
		s += q[i] * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return float64(s)
}

// dotFloats is the dot product of q and v, summed as dotStored sums.
func dotFloats(q, v []float32) float64 {
	if len(v) != len(q) {
		return 0
	}
	var s float32
	for i := range q {
		s += q[i] * v[i]
	}
	return float64(s)
}

// vectorCand is a memory the vector search found.
type vectorCand struct {
	id  int64
	sim recall.Similar
}

// reembedChunk is how many memories one re-embedding job takes.
const reembedChunk = 512

// Reembed gives every memory whose vector is missing or of another
// version than the embedder's a current one: it reads the stale memories a
// chunk at a time, embeds them on its own goroutine and hands each chunk
// to the indexer as a job of its own (one transaction of the search file,
// between Apply's). Open runs it in the background; Flush waits for it and
// then for the indexer.
func (g *Graph) Reembed(ctx context.Context) error {
	if g.emb == nil || g.ix == nil {
		return nil
	}
	version := g.emb.Version()
	var after int64
	total := 0
	start := time.Now()
	for {
		job, last, err := g.reembedChunk(ctx, after, version)
		if err != nil {
			return g.wrap("re-embed", err)
		}
		if last == 0 {
			break
		}
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return g.wrap("re-embed", fmt.Errorf("store closed"))
		}
		job.gen = g.gen
		g.ix.send(job) // under g.mu, as Apply sends: jobs keep their order
		g.mu.Unlock()
		total += len(job.vectors) / vectorsTable.cols
		after = last
	}
	if total > 0 {
		g.lg.Info("embedded graph: re-embedded memories", zap.Int("memories", total),
			zap.String("version", version), zap.Duration("took", time.Since(start)))
	}
	return nil
}

// reembedChunk embeds up to reembedChunk stale memories after id after and
// returns them as an indexer job, and the last id read (0: none).
func (g *Graph) reembedChunk(ctx context.Context, after int64, version string) (job ixJob, last int64, err error) {
	rows, err := g.rdb.QueryContext(ctx, sqlStale, after, version, reembedChunk)
	if err != nil {
		return job, 0, err
	}
	defer rows.Close()
	var ver any = version
	for rows.Next() {
		var (
			id          int64
			group, text string
		)
		if err := rows.Scan(&id, &group, &text); err != nil {
			return job, 0, err
		}
		rec, err := journal.Parse([]byte(text))
		if err != nil {
			return job, 0, fmt.Errorf("memory %d: stored record does not parse: %w", id, err)
		}
		job.vectors = append(job.vectors, id, group, ver, encodeVector(g.emb.Embed(rec.Text)))
		last = id
	}
	return job, last, rows.Err()
}

// reembedded writes a re-embedding job's vectors: those of memories the
// index holds (ids up to through; later ones get theirs when indexed) and
// that are still stored (one replaced since had its vector removed).
func (ix *indexer) reembedded(ctx context.Context, vectors []any, through int64) error {
	ids := make([]int64, 0, len(vectors)/vectorsTable.cols)
	for i := 0; i < len(vectors); i += vectorsTable.cols {
		if id, _ := vectors[i].(int64); id <= through {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	q, err := ix.main.QueryContext(ctx, sqlLiveIDs, string(b))
	if err != nil {
		return fmt.Errorf("re-embed: %w", err)
	}
	live := make(map[int64]bool, len(ids))
	for q.Next() {
		var id int64
		if err := q.Scan(&id); err != nil {
			q.Close()
			return fmt.Errorf("re-embed: %w", err)
		}
		live[id] = true
	}
	if err := errors.Join(q.Err(), q.Close()); err != nil {
		return fmt.Errorf("re-embed: %w", err)
	}
	args := make([]any, 0, len(live)*vectorsTable.cols)
	for i := 0; i < len(vectors); i += vectorsTable.cols {
		if id, _ := vectors[i].(int64); live[id] {
			args = append(args, vectors[i:i+vectorsTable.cols]...)
		}
	}
	if len(args) == 0 {
		return nil
	}
	if err := ix.w.insert(ctx, vectorsTable, args); err != nil {
		return fmt.Errorf("re-embed: %w", err)
	}
	// Vectors of ids already loaded changed: in-memory indexes (vecIndex)
	// start again.
	if _, err := ix.w.conn.ExecContext(ctx, sqlBumpEpoch); err != nil {
		return fmt.Errorf("re-embed: %w", err)
	}
	return nil
}

// Embedder is the store's embedder (memsync.VectorGraph), nil without
// one: the engine embeds the records it reads with it, ahead of Apply.
func (g *Graph) Embedder() memsync.Embedder { return g.emb }
