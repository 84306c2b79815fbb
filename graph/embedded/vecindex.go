package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync/recall"
)

// vecIndex keeps the current version's vectors in memory, per group,
// quantised to int8, so that a search compares the query with the vectors
// of the reader's groups without reading them again: at 100,000 memories
// of 256 dimensions that is 25 MB held and one pass of multiply-adds per
// search (from exactBelow vectors on, a pass over their sign codes instead
// and the int8 rows of the best few thousand: vecsign.go). It follows the
// vector log (veclog.go) by offset: each search first loads the records
// appended since, and starts again from nothing when the store's
// generation (a Drop) or the log (a new epoch: a reset, another model)
// changed. A vector whose memory was replaced since stays, and is dropped
// by the exact pass, which reads the candidates' rows (and filters) from
// SQLite.
type vecIndex struct {
	mu      sync.Mutex
	key     string // generation, log epoch and version the index was built for
	through int64  // the log's bytes loaded
	groups  map[string]*groupVecs
	// logRecords counts the records read from the log (not from the
	// index file), for tests.
	logRecords int
	// log is the open log of the key's epoch, nil if none yet.
	log *os.File
	// damaged is set when the log held a damaged record, or is shorter
	// than its committed length, or gone: the index keeps what came before
	// it until the log starts again (a writer's store builds a new one at
	// once, in the background: Graph.repairVectors; else the next Open
	// for writing does).
	damaged bool
	// found is set with damaged, for the search that found it to ask a
	// writer's store for a repair (Graph.repairVectors); it clears it.
	found bool
	// dist is the Hamming pass's buffer (vecsign.go), kept between
	// searches.
	dist []uint16
	// exactBelow and budget override the constants of the same names
	// (vecsign.go) when set, for tests.
	exactBelow, budget, shortlist int
	// release unmaps the index file whose arrays groups holds (vecfile.go),
	// nil if none: called when the index starts again.
	release func()
}

// groupVecs are one group's vectors: ids[i]'s vector is q[i*dim:(i+1)*dim]
// times scale[i], and its sign code (vecsign.go) is
// codes[i*w:(i+1)*w], w = signWords(dim).
type groupVecs struct {
	ids   []int64
	q     []int8
	scale []float32
	codes []uint64
}

const sqlVectorState = `SELECT IFNULL((SELECT value FROM meta WHERE key = 'generation'), ''),
	IFNULL((SELECT epoch FROM search.vec_state), 0), IFNULL((SELECT version FROM search.vec_state), ''),
	IFNULL((SELECT bytes FROM search.vec_state), 0)`

// sqlVectorCandidates reads the candidates among the ids ?1 whose memories
// pass the search's filters (?2 to ?4 as in sqlSearch), with their text.
const sqlVectorCandidates = `SELECT m.id, m.ts, m.uuid, json_extract(m.record, '$.text') FROM memories AS m
	WHERE m.id IN (SELECT value FROM json_each(?1))
	  AND (?2 OR NOT EXISTS (SELECT 1 FROM superseded AS x WHERE x.id = m.id))
	  AND (?3 IS NULL OR m.kind IN (SELECT value FROM json_each(?3)))
	  AND (?4 IS NULL OR m.ts >= ?4)`

// refresh brings the index up to the log as conn sees it (search: the
// search file's path). An index starting again reads the index file at
// file first (vecfile.go; "" for none), and a refresh that read many
// records from the log writes it; a file that cannot be read or written is
// only logged (it is a cache), and so is a damaged log (the index keeps
// what it read before the damage).
func (x *vecIndex) refresh(ctx context.Context, conn *sql.Conn, version string, dim int, search, file string, lg *zap.Logger) (err error) {
	var gen, logVersion string
	var epoch, bytes int64
	if err := conn.QueryRowContext(ctx, sqlVectorState).Scan(&gen, &epoch, &logVersion, &bytes); err != nil {
		return err
	}
	if logVersion != version {
		// Another model's log (or none yet): no vector of this version.
		epoch, bytes = 0, 0
	}
	if gen == "" {
		file = "" // a store without its generation yet: nothing names it
	}
	if key := gen + "/" + strconv.FormatInt(epoch, 10) + "/" + version; key != x.key {
		x.reset()
		x.key = key
		if file != "" && bytes > 0 {
			if _, err := readVecFile(file, x, key, dim); err != nil {
				lg.Debug("embedded graph: vector index file not read", zap.String("file", file), zap.Error(err))
			}
		}
	}
	if !x.damaged && bytes > 0 && x.lostLog(search, epoch, bytes) {
		// Cut short or removed under the store (issue 51 §12): what is
		// loaded stays searchable here, but no other process has it.
		x.damaged, x.found = true, true
		lg.Warn("embedded graph: vector log damaged: it is shorter than its committed length, or gone",
			zap.String("log", vecLogPath(search, epoch)), zap.Int64("bytes", bytes))
	}
	if bytes <= x.through || x.damaged {
		return nil
	}
	if x.log == nil {
		f, err := os.Open(vecLogPath(search, epoch))
		if errors.Is(err, os.ErrNotExist) {
			// Replaced since this snapshot (another process started a
			// new log): the next search reads the new one.
			lg.Debug("embedded graph: vector log gone", zap.Error(err))
			return nil
		}
		if err != nil {
			return err
		}
		x.log = f
	}
	loaded, err := readVecLog(x.log, x.through, bytes, dim, func(r vecRecord) {
		x.through += int64(r.size)
		g := x.groups[string(r.group)]
		if g == nil {
			g = &groupVecs{}
			x.groups[string(r.group)] = g
		}
		n := len(g.q)
		for _, c := range r.q {
			g.q = append(g.q, int8(c))
		}
		g.codes = appendSigns(g.codes, g.q[n:])
		g.ids = append(g.ids, r.id)
		g.scale = append(g.scale, r.scale)
	})
	x.logRecords += loaded
	if errors.Is(err, errVecLog) {
		x.damaged, x.found = true, true
		lg.Warn("embedded graph: vector log damaged: the vectors past the damage are not searched until a writer (memsync run) builds it again",
			zap.String("log", x.log.Name()), zap.Error(err))
		err = nil
	}
	if err == nil && file != "" && loaded >= vecFileRewrite {
		if err := writeVecFile(file, x, dim); err != nil {
			lg.Debug("embedded graph: vector index file not written", zap.String("file", file), zap.Error(err))
		}
	}
	return err
}

// lostLog reports whether the log of epoch beside the search file at
// search is shorter than its committed bytes, gone, or (x.log open) no
// longer the file x reads: two stats, cheap beside a search. x.mu must be
// held.
func (x *vecIndex) lostLog(search string, epoch, bytes int64) bool {
	at, err := os.Stat(vecLogPath(search, epoch))
	if err != nil {
		// Gone: removed under the store, or replaced by a reset committed
		// since this snapshot (then the next search reads the new log,
		// and a repair finds nothing to do).
		return errors.Is(err, os.ErrNotExist)
	}
	if at.Size() < bytes {
		return true
	}
	if x.log == nil {
		return false
	}
	open, err := x.log.Stat()
	return err == nil && !os.SameFile(at, open)
}

// reset empties x, unmapping its file and closing its log. x.mu must be held.
func (x *vecIndex) reset() {
	x.key, x.through, x.groups, x.damaged = "", 0, map[string]*groupVecs{}, false
	if x.log != nil {
		x.log.Close()
		x.log = nil
	}
	if x.release != nil {
		x.release()
		x.release = nil
	}
}

// approx is a vector's id and its quantised similarity.
type approx struct {
	id  int64
	sim float32
}

// scan returns the vectors of groups with their quantised similarity to
// qv, in no order. The query is quantised too, so that the pass is int8
// multiply-adds into int32 (exact, no conversion per element): the error
// both quantisations add is far below the margin the exact pass covers.
func (x *vecIndex) scan(qv []float32, groups []string) []approx {
	dim := len(qv)
	maxAbs := float32(0)
	for _, v := range qv {
		maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
	}
	if maxAbs == 0 {
		return nil
	}
	qs := maxAbs / 127
	q := make([]int32, dim)
	for i, v := range qv {
		q[i] = int32(math.Round(float64(v / qs)))
	}
	var out []approx
	for _, name := range groups {
		g := x.groups[name]
		if g == nil {
			continue
		}
		out = slices.Grow(out, len(g.ids))
		for i, id := range g.ids {
			out = append(out, approx{id, float32(dot8(q, g.q[i*dim:(i+1)*dim])) * g.scale[i] * qs})
		}
	}
	return out
}

// dot8 is the dot product of q and row (len(row) == len(q)), four lanes
// at a time.
func dot8(q []int32, row []int8) int32 {
	row = row[:len(q)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * int32(row[i])
		s1 += q[i+1] * int32(row[i+1])
		s2 += q[i+2] * int32(row[i+2])
		s3 += q[i+3] * int32(row[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * int32(row[i])
	}
	return s0 + s1 + s2 + s3
}

func better(a, b approx) bool { return a.sim > b.sim || a.sim == b.sim && a.id < b.id }

// best is the m best of all by similarity (then id), best first.
func best(all []approx, m int) []approx { return bestOf(all, m, better) }

// similarIndexed is similar through the in-memory index: the candidates
// in quantised order, read from SQLite (with the filters) a chunk at a
// time and scored exactly (their text embedded again), until pool of them
// pass the filters and twice pool have been looked at (quantisation moves
// a vector by far less than the gap that margin covers); the best pool by
// exact similarity.
func (g *Graph) similarIndexed(ctx context.Context, qv []float32, groups []string, f filter, pool int) ([]vectorCand, error) {
	conn, err := g.rdb.Conn(ctx)
	if err != nil {
		return nil, g.wrap("vector search", err)
	}
	defer conn.Close()
	version := g.emb.Version()
	g.vecs.mu.Lock()
	err = g.vecs.refresh(ctx, conn, version, len(qv), filepath.Join(filepath.Dir(g.path), SearchFileName),
		filepath.Join(filepath.Dir(g.path), vecFileName), g.lg)
	var all []approx
	signs := false // whether all is the sign codes' budget, not every vector
	if err == nil {
		if budget := g.vecs.signBudget(groups); budget > 0 {
			all, signs = g.vecs.scanSigns(qv, groups, budget), true
		} else {
			all = g.vecs.scan(qv, groups)
		}
	}
	damaged := g.vecs.found
	g.vecs.found = false
	g.vecs.mu.Unlock()
	if damaged {
		g.repairVectors() // a writer's store builds the log again now; a reader's: nothing
	}
	if err != nil {
		return nil, g.wrap("vector search: load", err)
	}
	found, err := g.scoreExactly(ctx, conn, qv, all, f, pool)
	if err != nil || len(found) >= pool || !signs {
		return found, err
	}
	// The filters rejected most of what the sign codes kept: every vector.
	g.vecs.mu.Lock()
	all = g.vecs.scan(qv, groups)
	g.vecs.mu.Unlock()
	return g.scoreExactly(ctx, conn, qv, all, f, pool)
}

// signBudget is how many vectors the sign codes hand to the int8 pass in
// a search of groups, 0 for an int8 pass over every vector (fewer than
// exactBelow of them). x.mu must be held.
func (x *vecIndex) signBudget(groups []string) int {
	below, budget := exactBelow, signBudget
	if x.exactBelow > 0 {
		below = x.exactBelow
	}
	if x.budget > 0 {
		budget = x.budget
	}
	n := 0
	for _, name := range groups {
		if g := x.groups[name]; g != nil {
			n += len(g.ids)
		}
	}
	if n < below || n <= budget {
		return 0
	}
	return budget
}

// scoreExactly reads the candidates all (in quantised order) from SQLite
// with the filters a chunk at a time and scores them exactly: see
// similarIndexed.
func (g *Graph) scoreExactly(ctx context.Context, conn *sql.Conn, qv []float32, all []approx, f filter, pool int) ([]vectorCand, error) {
	// Most searches find pool candidates among the first few hundred; a
	// filter that rejects most of them gets the whole order.
	order := best(all, 4*pool)
	var found []vectorCand
	const chunk = 256
	for at := 0; at < len(order) && (len(found) < pool || at < 2*pool); at += chunk {
		if at+chunk > len(order) && len(order) < len(all) && len(found) < pool {
			order = best(all, len(all))
		}
		part := order[at:min(at+chunk, len(order))]
		ids := make([]int64, len(part))
		for i, a := range part {
			ids[i] = a.id
		}
		list, err := json.Marshal(ids)
		if err != nil {
			return nil, fmt.Errorf("embedded: vector search: %w", err)
		}
		rows, err := conn.QueryContext(ctx, sqlVectorCandidates, string(list), f.all, f.kinds, f.since)
		if err != nil {
			return nil, g.wrap("vector search", err)
		}
		for rows.Next() {
			var (
				c        vectorCand
				ts, text string
			)
			if err := rows.Scan(&c.id, &ts, &c.sim.UUID, &text); err != nil {
				rows.Close()
				return nil, g.wrap("vector search", err)
			}
			if c.sim.TS, err = time.Parse(time.RFC3339Nano, ts); err != nil {
				rows.Close()
				return nil, g.wrap("vector search", fmt.Errorf("%s: ts: %w", c.sim.UUID, err))
			}
			// The exact score: from the text embedded again (what the
			// other backends store).
			c.sim.Cosine = recall.RoundCosine(dotFloats(qv, g.emb.Embed(text)))
			found = append(found, c)
		}
		if err := rows.Close(); err != nil {
			return nil, g.wrap("vector search", err)
		}
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i].sim, found[j].sim
		return recall.Less(a.Cosine, a.TS, a.UUID, b.Cosine, b.TS, b.UUID)
	})
	return found[:min(pool, len(found))], nil
}
