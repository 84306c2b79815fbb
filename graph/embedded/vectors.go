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
// beside it: with an embedder (WithEmbedder), each new memory's embedding
// is computed ahead of Apply (the engine's reader and the preparing
// goroutines embed and quantise, not the writer) and handed to the
// indexer with the batch's full-text rows, which appends it to the vector
// log (veclog.go) in the same transaction of the search file as them,
// tagged by the log with the embedder's Version. So the writer of the main
// file (the projection's critical path, fsynced at every batch) stores no
// vector bytes, and the vectors follow the search file's rules: built
// again from the stored records (and embedded again) when it is missing,
// behind or of another generation, and never ahead of its watermark.
// Search compares the query with the vectors of the reader's groups only
// and of the current version only (vecIndex: an int8 copy in memory, per
// group, so a vector of a group the reader may not see is never read),
// then scores the best candidates exactly, with the search's filters:
// from their memories' text embedded again (the stored int8 rows are for
// the approximate pass only). An index is never mixed: a log holds one
// model's vectors, and after a model change the store starts a new log
// and re-embeds the memories into it (at Open, in the background, through
// the indexer; Flush waits for it; a rebuild re-embeds everything anyway).
//
// (The main file held a vectors table until search schema 4, and the
// search file one until schema 7; Open drops the main file's.)
const (
	// sqlDropMainVectors drops the vectors table from a main file written
	// before search schema 4.
	sqlDropMainVectors = `DROP TABLE IF EXISTS main.vectors`
	// sqlGapMemories lists the memories with ids after ?1 to ?2, a chunk
	// (?3) at a time (on the read pool).
	sqlGapMemories = `SELECT id, group_id, record FROM memories WHERE id > ?1 AND id <= ?2 ORDER BY id LIMIT ?3`
	// sqlLiveIDs keeps, of the ids ?1, those of memories still stored.
	sqlLiveIDs = `SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?1))`
	// sqlReadVecState is vec_state through the read pool.
	sqlReadVecState = `SELECT IFNULL((SELECT epoch FROM search.vec_state), 0),
	IFNULL((SELECT version FROM search.vec_state), ''), IFNULL((SELECT bytes FROM search.vec_state), 0)`
)

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
// The stored vector serves the approximate pass only: the exact pass
// scores the candidates with their memories' text embedded again (the
// embedder is deterministic), so every backend ranks with the same
// float32 vector.
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

// dotFloats is the dot product of q and v (both unit length: their
// cosine), 0 when their lengths differ.
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

// reembedJob is a re-embedding: the vectors of memories after..last that
// the log lacks (vec_gaps), to append; or, with reset set, a new log in
// place of that epoch's (damaged). A log of another version than version
// is replaced first either way.
type reembedJob struct {
	version     string
	reset       int64
	after, last int64
	vectors     []any // id, group_id, vec (encodeVector)
}

// Reembed gives every memory the log has no vector of the embedder's
// version for (vec_gaps) one: it starts a new log first when the current
// one is of another model or damaged, then reads the gaps' memories a
// chunk at a time, embeds them on its own goroutine and hands each chunk
// to the indexer as a job of its own (one transaction of the search file,
// between Apply's). Open runs it in the background; Flush waits for it and
// then for the indexer.
func (g *Graph) Reembed(ctx context.Context) error {
	if g.emb == nil || g.ix == nil {
		return nil
	}
	version := g.emb.Version()
	// The indexer first: Open's catch-up may start the log.
	if err := g.ix.wait(ctx); err != nil && ctx.Err() != nil {
		return g.wrap("re-embed", err)
	}
	var st vecState
	if err := g.rdb.QueryRowContext(ctx, sqlReadVecState).Scan(&st.epoch, &st.version, &st.bytes); err != nil {
		return g.wrap("re-embed", err)
	}
	job := reembedJob{version: version}
	if st.version == version {
		if err := checkVecLog(g.ix.path, st, g.emb.Dim()); err != nil {
			if !errors.Is(err, errVecLog) {
				return g.wrap("re-embed", err)
			}
			g.lg.Warn("embedded graph: vector log damaged: embedding every memory again", zap.Error(err))
			job.reset = st.epoch
		}
	}
	if st.version != version || job.reset != 0 {
		if !g.sendReembed(job) {
			return g.wrap("re-embed", fmt.Errorf("store closed"))
		}
		if err := g.ix.wait(ctx); err != nil {
			return g.wrap("re-embed", err)
		}
	}
	gs, err := gaps(ctx, g.rdb, `SELECT first, last FROM search.vec_gaps ORDER BY first`)
	if err != nil {
		return g.wrap("re-embed", err)
	}
	total := 0
	start := time.Now()
	for _, gap := range gs {
		for after := gap.first - 1; after < gap.last; {
			job, err := g.reembedChunk(ctx, after, gap.last, version)
			if err != nil {
				return g.wrap("re-embed", err)
			}
			if !g.sendReembed(job) {
				return g.wrap("re-embed", fmt.Errorf("store closed"))
			}
			total += len(job.vectors) / 3
			after = job.last
		}
	}
	if total > 0 {
		g.lg.Info("embedded graph: re-embedded memories", zap.Int("memories", total),
			zap.String("version", version), zap.Duration("took", time.Since(start)))
	}
	return nil
}

// sendReembed queues job for the indexer; false when the store is closed.
func (g *Graph) sendReembed(job reembedJob) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.ix.send(ixJob{gen: g.gen, reembed: &job}) // under g.mu, as Apply sends: jobs keep their order
	return true
}

// reembedChunk embeds up to reembedChunk stored memories with ids after
// after, to through, and returns them as a job; one that read none covers
// the rest of the range.
func (g *Graph) reembedChunk(ctx context.Context, after, through int64, version string) (reembedJob, error) {
	job := reembedJob{version: version, after: after, last: through}
	rows, err := g.rdb.QueryContext(ctx, sqlGapMemories, after, through, reembedChunk)
	if err != nil {
		return job, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			id          int64
			group, text string
		)
		if err := rows.Scan(&id, &group, &text); err != nil {
			return job, err
		}
		rec, err := journal.Parse([]byte(text))
		if err != nil {
			return job, fmt.Errorf("memory %d: stored record does not parse: %w", id, err)
		}
		job.vectors = append(job.vectors, id, group, encodeVector(g.emb.Embed(rec.Text)))
		job.last = id
		n++
	}
	if err := rows.Err(); err != nil {
		return job, err
	}
	if n < reembedChunk {
		job.last = through // the range holds no more
	}
	return job, nil
}

// reembedded carries out a re-embedding job: a new log if the job says so
// or the log is of another version; then the job's vectors of memories the
// log lacks (in vec_gaps), the index holds (ids up to through; later ones
// get theirs when indexed) and that are still stored, and its range out of
// vec_gaps.
func (ix *indexer) reembedded(ctx context.Context, job *reembedJob, through int64) error {
	conn := ix.w.conn
	st, err := ix.vl.state(ctx, ix.w)
	if err != nil {
		return err
	}
	if st.version != job.version || (job.reset != 0 && st.epoch == job.reset) {
		if st, err = ix.vl.reset(ctx, ix.w, st, job.version, through); err != nil {
			return err
		}
	}
	if job.last <= job.after {
		return nil
	}
	gs, err := gaps(ctx, conn, sqlVecGaps)
	if err != nil {
		return fmt.Errorf("re-embed: %w", err)
	}
	ids := make([]int64, 0, len(job.vectors)/3)
	for i := 0; i < len(job.vectors); i += 3 {
		if id, _ := job.vectors[i].(int64); id <= through && inGaps(gs, id) {
			ids = append(ids, id)
		}
	}
	live := make(map[int64]bool, len(ids))
	if len(ids) > 0 {
		if live, err = ix.liveIDs(ctx, ids); err != nil {
			return fmt.Errorf("re-embed: %w", err)
		}
	}
	buf := ix.vl.buf[:0]
	for i := 0; i < len(job.vectors); i += 3 {
		if id, _ := job.vectors[i].(int64); live[id] {
			group, _ := job.vectors[i+1].(string)
			vec, _ := job.vectors[i+2].([]byte)
			buf = appendVecRecord(buf, id, group, vec)
		}
	}
	ix.vl.buf = buf
	if _, err := ix.vl.write(ctx, ix.w, st, buf); errors.Is(err, errVecLog) {
		// Lost under the store: a new log, every memory a gap again,
		// filled by a Reembed run again in the background.
		ix.lg.Warn("vector log damaged: starting a new one; its memories are embedded again in the background", zap.Error(err))
		if _, err = ix.vl.reset(ctx, ix.w, st, st.version, through); err == nil && ix.lostLog != nil {
			ix.lostLog()
		}
		return err
	} else if err != nil {
		return fmt.Errorf("re-embed: %w", err)
	}
	// Ids past through are not indexed yet: they get theirs then.
	if err := setGaps(ctx, conn, subtractGaps(gs, job.after, min(job.last, through))); err != nil {
		return fmt.Errorf("re-embed: %w", err)
	}
	return nil
}

// liveIDs is the set of ids still stored.
func (ix *indexer) liveIDs(ctx context.Context, ids []int64) (map[int64]bool, error) {
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	q, err := ix.main.QueryContext(ctx, sqlLiveIDs, string(b))
	if err != nil {
		return nil, err
	}
	live := make(map[int64]bool, len(ids))
	for q.Next() {
		var id int64
		if err := q.Scan(&id); err != nil {
			q.Close()
			return nil, err
		}
		live[id] = true
	}
	return live, errors.Join(q.Err(), q.Close())
}

// Embedder is the store's embedder (memsync.VectorGraph), nil without
// one: the engine embeds the records it reads with it, ahead of Apply.
func (g *Graph) Embedder() memsync.Embedder { return g.emb }
