package neo4j

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"regexp"
	"strings"
	"sync"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

// Generations in slots (issue 30). A rebuild over a full graph used to
// delete every node first (74 s for 1M memories) while searches found
// nothing. Now memsync's nodes live in one of two slots, each its own set
// of labels with its own constraints and indexes: slot 0 is :Memory,
// :MemsyncEntity and :Agent, slot 1 is :Memory1, :Entity1 and :Agent1
// (the names of earlier versions, but slot 0's entities were :Entity,
// Graphiti's label: see upgradeEntities). The generation marker
// (:MemsyncGeneration {key: 'graph'}) names the slot readers use. A
// rebuild (BeginRebuild) builds into the other slot while every other
// client keeps reading and writing the current one; FinishRebuild switches
// the marker in one transaction, and the old slot is then deleted in the
// background, a chunk per transaction, by this process and by any process
// that opens the graph while that is unfinished.
//
// Statements stay constant strings written for slot 0; forSlot rewrites a
// statement's labels and index names for slot 1 (cached, once per
// statement). A session of a graph that is not building resolves the slot
// inside each transaction, from the marker, before its first statement
// that names one, so a transaction never mixes slots and never reads a
// slot the marker has left.
//
// The marker's properties: id (the generation, memsync.Generations), slot
// (absent: 0), building and build_id (a rebuild in progress into that
// slot), dropping (a slot left by a switch, being deleted).

// slotLabels matches the labels a slot renames.
var slotLabels = regexp.MustCompile(`:(Memory|Agent)\b`)

// slotNames matches the constraint and index names a slot renames.
var slotNames = regexp.MustCompile(`\b(memsync_memory_uuid|memsync_agent_name|memsync_memory_group_ts|memsync_memory_session|memsync_memory_tier|memsync_memory_terms|memsync_memory_embedding)\b`)

// slotParams are the parameters that carry an index name.
var slotParams = []string{"index", "vindex"}

// slotOne caches statements rewritten for slot 1.
var slotOne sync.Map // string -> string

// forSlot returns stmt and params as slot runs them.
func forSlot(stmt string, params map[string]any, slot int) (string, map[string]any) {
	if slot == 0 {
		return stmt, params
	}
	s, ok := slotOne.Load(stmt)
	if !ok {
		s = rewriteForSlotOne(stmt)
		slotOne.Store(stmt, s)
	}
	for _, k := range slotParams {
		if v, ok := params[k].(string); ok {
			cp := make(map[string]any, len(params))
			for pk, pv := range params {
				cp[pk] = pv
			}
			cp[k] = rewriteForSlotOne(v)
			params = cp
		}
	}
	return s.(string), params
}

func rewriteForSlotOne(s string) string {
	s = slotEntity.Replace(s)
	s = slotLabels.ReplaceAllString(s, ":${1}1")
	return slotNames.ReplaceAllString(s, "${1}_1")
}

// slotEntity renames slot 0's entity label and constraint to slot 1's,
// which keep the names of earlier versions: :Entity1 was never
// Graphiti's, so only slot 0's had to change (upgradeEntities).
var slotEntity = strings.NewReplacer(":MemsyncEntity", ":Entity1", ConstraintEntityKey, legacyEntityKey+"_1")

// namesSlot reports whether stmt (with params) depends on the slot.
func namesSlot(stmt string, params map[string]any) bool {
	for _, k := range slotParams {
		if _, ok := params[k]; ok {
			return true
		}
	}
	s, ok := slotOne.Load(stmt)
	if !ok {
		s = rewriteForSlotOne(stmt)
		slotOne.Store(stmt, s)
	}
	return s.(string) != stmt
}

const (
	// readSlot is the slot readers use, inside the reader's transaction,
	// and the generation it holds.
	readSlot = "OPTIONAL MATCH (g:MemsyncGeneration {key: $key}) RETURN coalesce(g.slot, 0) AS slot, g.id AS id"
	// lockMarker takes the marker's write lock (making it first), so that
	// what the transaction reads of it next is not changed under it.
	lockMarker = "MERGE (g:MemsyncGeneration {key: $key}) SET g.lock = true"
	// readMarker reads the marker's state.
	readMarker = `MATCH (g:MemsyncGeneration {key: $key})
RETURN coalesce(g.slot, 0) AS slot, g.building AS building, g.build_id AS build_id, g.dropping AS dropping, g.id AS id`
	// startBuild records a rebuild into $slot; a slot being dropped is the
	// same slot, so the rebuild takes its deleting over.
	startBuild = `MATCH (g:MemsyncGeneration {key: $key})
SET g.building = $slot, g.build_id = $id, g.dropping = null`
	// switchBuild makes the built slot current, atomically for every reader.
	switchBuild = `MATCH (g:MemsyncGeneration {key: $key})
SET g.slot = $slot, g.id = $id, g.building = null, g.build_id = null, g.dropping = $old`
	// abandonBuild gives a failed rebuild's slot to the background drop.
	abandonBuild = `MATCH (g:MemsyncGeneration {key: $key})
SET g.building = null, g.build_id = null, g.dropping = $slot`
	// dropDone clears the marker's dropping once its slot is empty.
	dropDone = `MATCH (g:MemsyncGeneration {key: $key}) WHERE g.dropping = $slot SET g.dropping = null`
)

// marker is what readMarker returned.
type marker struct {
	slot     int
	building int // -1: none
	buildID  string
	dropping int // -1: none
	id       string
}

func intOr(v any, none int) int {
	if n, ok := v.(int64); ok {
		return int(n)
	}
	return none
}

// lockedMarker locks the marker (creating it) and reads it, in tx.
func lockedMarker(ctx context.Context, tx neo4jdrv.ManagedTransaction) (marker, error) {
	if err := run(ctx, tx, lockMarker, map[string]any{"key": generationKey}); err != nil {
		return marker{}, err
	}
	res, err := tx.Run(ctx, readMarker, map[string]any{"key": generationKey})
	if err != nil {
		return marker{}, err
	}
	rec, err := res.Single(ctx)
	if err != nil {
		return marker{}, err
	}
	m := marker{slot: intOr(rec.Values[0], 0), building: intOr(rec.Values[1], -1), dropping: intOr(rec.Values[3], -1)}
	m.buildID, _ = rec.Values[2].(string)
	m.id, _ = rec.Values[4].(string)
	return m, nil
}

// build is a rebuild in progress in this process.
type build struct {
	slot int
	id   string

	// written holds a hash of every uuid this build's committed
	// transactions wrote into its slot, as a memory or as an edge's
	// placeholder. BeginRebuild empties the slot and no other client
	// writes it until the switch, so a uuid not in written is not in the
	// slot, and writeChunk does not look it up (see maybeWritten).
	mu      sync.Mutex
	written map[uint64]struct{}
}

// uuidKey is the hash written keeps of a uuid. Two uuids of one hash
// cost a lookup, never a wrong answer: written only ever says "maybe".
func uuidKey(uuid string) uint64 { return maphash.String(uuidSeed, uuid) }

var uuidSeed = maphash.MakeSeed()

// maybeWritten reports whether uuid may be in the build's slot; nil b:
// it may (a graph that is not building knows nothing of its slot).
func (b *build) maybeWritten(uuid string) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.written[uuidKey(uuid)]
	return ok
}

// wrote records uuids a committed transaction wrote into the build's slot.
func (b *build) wrote(uuids []string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range uuids {
		b.written[uuidKey(u)] = struct{}{}
	}
}

// currentBuild is the rebuild in progress in this process, nil if none.
func (g *Graph) currentBuild() *build {
	g.genMu.Lock()
	defer g.genMu.Unlock()
	return g.build
}

// buildSlot is the slot this process builds into, -1 when it is not building.
func (g *Graph) buildSlot() (int, string) {
	g.genMu.Lock()
	defer g.genMu.Unlock()
	if g.build == nil {
		return -1, ""
	}
	return g.build.slot, g.build.id
}

var _ memsync.Rebuilder = (*Graph)(nil)

// BeginRebuild starts a new generation in the slot the graph does not
// read: what that slot holds (a crashed rebuild's leftover, or an old
// generation not yet deleted) is deleted first, then every statement of
// this Graph (its reads too) goes to the new slot, and Generation names
// the new generation. Other clients keep reading and writing the current
// one until FinishRebuild.
func (g *Graph) BeginRebuild(ctx context.Context) error {
	id, err := newGeneration()
	if err != nil {
		return fmt.Errorf("neo4j: begin rebuild: %w", err)
	}
	s := g.sessionSlot(ctx, neo4jdrv.AccessModeWrite, 0)
	slot, err := neo4jdrv.ExecuteWrite(ctx, s, func(tx neo4jdrv.ManagedTransaction) (int, error) {
		m, err := lockedMarker(ctx, tx)
		if err != nil {
			return 0, err
		}
		slot := 1 - m.slot
		return slot, run(ctx, tx, startBuild, map[string]any{"key": generationKey, "slot": int64(slot), "id": id})
	})
	s.Close(ctx)
	if err != nil {
		return wrap("begin rebuild", err)
	}
	g.stopDropper() // its slot is the one this rebuild takes over
	n, err := g.dropSlot(ctx, slot, nil)
	if err != nil {
		return wrap("begin rebuild: delete the leftover generation", err)
	}
	g.genMu.Lock()
	g.build = &build{slot: slot, id: id, written: map[uint64]struct{}{}}
	g.genMu.Unlock()
	g.lg.Info("neo4j rebuild started in a new generation", zap.Int("slot", slot), zap.String("generation", id),
		zap.Int64("leftover_nodes_deleted", n))
	return nil
}

// errBuildTakenOver means another rebuild or a Drop replaced this one's.
var errBuildTakenOver = errors.New("another rebuild or a drop took the generation over")

// FinishRebuild makes the generation BeginRebuild started the graph's, in
// one transaction: every reader's next transaction reads it. The old one
// is deleted in the background (Close stops that; the next Open or
// rebuild goes on with it).
func (g *Graph) FinishRebuild(ctx context.Context) error {
	slot, id := g.buildSlot()
	if slot < 0 {
		return errors.New("neo4j: finish rebuild: no rebuild in progress")
	}
	s := g.sessionSlot(ctx, neo4jdrv.AccessModeWrite, 0)
	old, err := neo4jdrv.ExecuteWrite(ctx, s, func(tx neo4jdrv.ManagedTransaction) (int, error) {
		m, err := lockedMarker(ctx, tx)
		if err != nil {
			return 0, err
		}
		if m.building != slot || m.buildID != id {
			return 0, errBuildTakenOver
		}
		return m.slot, run(ctx, tx, switchBuild, map[string]any{"key": generationKey, "slot": int64(slot), "id": id, "old": int64(m.slot)})
	})
	s.Close(ctx)
	g.genMu.Lock()
	g.build = nil
	g.genMu.Unlock()
	if err != nil {
		return wrap("finish rebuild", err)
	}
	g.lg.Info("neo4j rebuild switched to its generation", zap.Int("slot", slot), zap.String("generation", id))
	if old != slot {
		g.startDropper(old)
	}
	// The generation is switched: a failure of the derived Graphiti shape
	// is logged, not returned, so the rebuild is not taken for failed.
	if err := g.ReprojectGraphiti(ctx); err != nil {
		g.lg.Error("graphiti shape not rebuilt; memsync's generation is", zap.Error(err))
	}
	return nil
}

// AbortRebuild gives up the rebuild BeginRebuild started: readers never saw
// it, this Graph goes back to the current generation, and the partial one
// is deleted in the background.
func (g *Graph) AbortRebuild(ctx context.Context) error {
	slot, id := g.buildSlot()
	if slot < 0 {
		return nil
	}
	g.genMu.Lock()
	g.build = nil
	g.genMu.Unlock()
	s := g.sessionSlot(ctx, neo4jdrv.AccessModeWrite, 0)
	defer s.Close(ctx)
	mine, err := neo4jdrv.ExecuteWrite(ctx, s, func(tx neo4jdrv.ManagedTransaction) (bool, error) {
		m, err := lockedMarker(ctx, tx)
		if err != nil || m.building != slot || m.buildID != id {
			return false, err
		}
		return true, run(ctx, tx, abandonBuild, map[string]any{"key": generationKey, "slot": int64(slot)})
	})
	if err != nil {
		return wrap("abort rebuild", err)
	}
	if mine {
		g.startDropper(slot)
	}
	return nil
}

// dropSlot deletes slot's nodes, a chunk per transaction. With check, each
// transaction first locks the marker and calls check with it, deleting
// nothing and stopping when check says no.
func (g *Graph) dropSlot(ctx context.Context, slot int, check func(marker) bool) (int64, error) {
	s := g.sessionSlot(ctx, neo4jdrv.AccessModeWrite, slot)
	defer s.Close(ctx)
	total := int64(0)
	for _, q := range dropQueries {
		for {
			var stopped bool
			n, err := neo4jdrv.ExecuteWrite(ctx, s, func(tx neo4jdrv.ManagedTransaction) (int64, error) {
				stopped = false
				if check != nil {
					m, err := lockedMarker(ctx, tx)
					if err != nil {
						return 0, err
					}
					if !check(m) {
						stopped = true
						return 0, nil
					}
				}
				res, err := tx.Run(ctx, q, map[string]any{"limit": int64(dropChunk)})
				if err != nil {
					return 0, err
				}
				rec, err := res.Single(ctx)
				if err != nil {
					return 0, err
				}
				n, _ := rec.Values[0].(int64)
				return n, nil
			})
			if err != nil {
				return total, err
			}
			if stopped {
				return total, errDropStopped
			}
			total += n
			if n < dropChunk {
				break
			}
		}
	}
	return total, nil
}

// errDropStopped means a background drop found its slot taken over.
var errDropStopped = errors.New("slot no longer being dropped")

// startDropper deletes slot in the background, as long as the marker says
// it is being dropped, then clears that.
func (g *Graph) startDropper(slot int) {
	g.stopDropper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	g.genMu.Lock()
	g.dropStop, g.dropDone = cancel, done
	g.genMu.Unlock()
	go func() {
		defer close(done)
		select {
		case <-time.After(dropGrace):
		case <-ctx.Done():
			return
		}
		n, err := g.dropSlot(ctx, slot, func(m marker) bool { return m.dropping == slot && m.slot != slot })
		if err == nil {
			err = g.write(ctx, dropDone, map[string]any{"key": generationKey, "slot": int64(slot)})
		}
		switch {
		case err == nil:
			g.lg.Info("neo4j old generation deleted", zap.Int("slot", slot), zap.Int64("nodes", n))
		case errors.Is(err, errDropStopped) || ctx.Err() != nil:
			g.lg.Debug("neo4j background drop stopped", zap.Int("slot", slot), zap.Int64("nodes", n))
		default:
			g.lg.Warn("neo4j background drop of the old generation", zap.Int("slot", slot), zap.Error(err))
		}
	}()
}

// stopDropper stops a background drop and waits for it.
func (g *Graph) stopDropper() {
	g.genMu.Lock()
	stop, done := g.dropStop, g.dropDone
	g.dropStop, g.dropDone = nil, nil
	g.genMu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// WaitDropped waits for the background drop of an old generation, if one
// runs in this process (tests, and commands that want a quiet server).
func (g *Graph) WaitDropped(ctx context.Context) error {
	g.genMu.Lock()
	done := g.dropDone
	g.genMu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resumeDrop starts the background drop a switch left unfinished (Open).
func (g *Graph) resumeDrop(ctx context.Context) error {
	s := g.sessionSlot(ctx, neo4jdrv.AccessModeRead, 0)
	defer s.Close(ctx)
	m, err := neo4jdrv.ExecuteRead(ctx, s, func(tx neo4jdrv.ManagedTransaction) (marker, error) {
		res, err := tx.Run(ctx, readMarker, map[string]any{"key": generationKey})
		if err != nil {
			return marker{}, err
		}
		if !res.Next(ctx) {
			return marker{dropping: -1}, res.Err()
		}
		v := res.Record().Values
		return marker{slot: intOr(v[0], 0), building: intOr(v[1], -1), dropping: intOr(v[3], -1)}, nil
	})
	if err != nil {
		return err
	}
	if m.dropping >= 0 && m.dropping != m.slot {
		g.startDropper(m.dropping)
	}
	return nil
}

// slotSession runs every transaction's statements in a slot: a fixed one,
// or (slot -1) the one the marker names, read inside the transaction.
type slotSession struct {
	neo4jdrv.SessionWithContext
	slot int
}

func (s slotSession) wrap(work neo4jdrv.ManagedTransactionWork) neo4jdrv.ManagedTransactionWork {
	return func(tx neo4jdrv.ManagedTransaction) (any, error) {
		return work(&slotTx{ManagedTransaction: tx, slot: s.slot})
	}
}

// ExecuteRead runs work in a read transaction of the session's slot.
func (s slotSession) ExecuteRead(ctx context.Context, work neo4jdrv.ManagedTransactionWork, cf ...func(*neo4jdrv.TransactionConfig)) (any, error) {
	return s.SessionWithContext.ExecuteRead(ctx, s.wrap(work), cf...)
}

// ExecuteWrite runs work in a write transaction of the session's slot.
func (s slotSession) ExecuteWrite(ctx context.Context, work neo4jdrv.ManagedTransactionWork, cf ...func(*neo4jdrv.TransactionConfig)) (any, error) {
	return s.SessionWithContext.ExecuteWrite(ctx, s.wrap(work), cf...)
}

// slotTx rewrites each statement for its slot, resolving the slot from
// the marker before the first statement that names one.
type slotTx struct {
	neo4jdrv.ManagedTransaction
	slot int
}

// Run runs cypher in the transaction's slot.
func (t *slotTx) Run(ctx context.Context, cypher string, params map[string]any) (neo4jdrv.ResultWithContext, error) {
	if namesSlot(cypher, params) {
		if t.slot < 0 {
			p, _ := ctx.Value(pinKey{}).(*pin)
			if p != nil {
				p.mu.Lock()
				defer p.mu.Unlock()
			}
			if p != nil && p.set {
				t.slot = p.slot
			} else {
				res, err := t.ManagedTransaction.Run(ctx, readSlot, map[string]any{"key": generationKey})
				if err != nil {
					return nil, err
				}
				rec, err := res.Single(ctx)
				if err != nil {
					return nil, err
				}
				t.slot = intOr(rec.Values[0], 0)
				if p != nil {
					p.set, p.slot = true, t.slot
					p.id, _ = rec.Values[1].(string)
				}
			}
		}
		cypher, params = forSlot(cypher, params, t.slot)
	}
	return t.ManagedTransaction.Run(ctx, cypher, params)
}

// pinKey keys a *pin in a context.
type pinKey struct{}

// pin holds the slot that the first transaction of an operation of
// several resolved, for the others: a read never mixes generations. The
// old slot is deleted dropGrace after a switch, so a short read pinned to
// it finishes on a whole generation.
type pin struct {
	mu   sync.Mutex
	set  bool
	slot int
	id   string
}

// withPin makes every transaction under ctx read the slot the first one resolves.
func withPin(ctx context.Context) context.Context {
	if _, ok := ctx.Value(pinKey{}).(*pin); ok {
		return ctx
	}
	return context.WithValue(ctx, pinKey{}, &pin{})
}

// dropGrace is how long the background drop waits after a switch before
// it deletes the old slot: reads that resolved it just before the switch
// finish first.
var dropGrace = 30 * time.Second

// errSwitched means a long read (Walk, Hashes) outlived its generation.
var errSwitched = fmt.Errorf("%w: the graph switched to a new generation (a rebuild) during the read; read again", memsync.ErrUnavailable)

// stillCurrent checks that the generation ctx's pin read is still the
// graph's, so a long read did not return part of a generation being deleted.
func (g *Graph) stillCurrent(ctx context.Context, op string) error {
	p, _ := ctx.Value(pinKey{}).(*pin)
	if p == nil {
		return nil
	}
	p.mu.Lock()
	set, id := p.set, p.id
	p.mu.Unlock()
	if !set {
		return nil // built (a fixed slot), or nothing read
	}
	now, err := g.readValue(ctx, generationQuery, map[string]any{"key": generationKey})
	if err != nil {
		return wrap(op, err)
	}
	if s, _ := now.(string); s != id {
		return fmt.Errorf("neo4j: %s: %w", op, errSwitched)
	}
	return nil
}
