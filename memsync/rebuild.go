package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Source yields records from somewhere other than the work tree's journals
// (git history, say), one at a time, so that memory does not grow with
// their number.
type Source func(ctx context.Context, yield func(Memory) error) error

// RebuildReport sums up a rebuild.
type RebuildReport struct {
	PassReport
	FromSource  int // records offered by the extra source
	SourceAdded int // of those, records the work tree did not have
}

// Rebuild drops the projection and builds it again: every agent's cursors
// and outbox are reset, every journal and archive in the work tree is
// projected (streaming, in batches), then the records extra yields (may be
// nil) are added; a uuid the graph already holds keeps its work-tree
// version. Afterwards the cursors stand at the end of every journal, so a
// daemon goes on from there, and (for a graph that is a Flusher) every
// record is searchable.
func (e *Engine) Rebuild(ctx context.Context, extra Source) (RebuildReport, error) {
	rep, err := e.rebuild(ctx, extra)
	if err != nil {
		return rep, err
	}
	if f, ok := e.opts.Graph.(Flusher); ok {
		if err := f.Flush(ctx); err != nil {
			return rep, fmt.Errorf("rebuild: %w", err)
		}
	}
	return rep, nil
}

// rebuild builds the projection again, moving the cursors in memory only,
// and writes them once what they describe is durable: after the switch
// (Rebuilder) or the bulk load's end (BulkLoader), else after the last
// batch. Until then the cursors on disk are those the drop reset, so an
// interrupted rebuild is projected again from the start, never skipped.
//
// The daemon's summary is removed first (the reads count from the cursors
// meanwhile) and written again once the cursors are.
func (e *Engine) rebuild(ctx context.Context, extra Source) (RebuildReport, error) {
	e.holdCursors = true
	if err := os.Remove(e.layout.SummaryFile()); err != nil && !os.IsNotExist(err) {
		e.lg.Warn("remove the summary for reads before the rebuild", zap.Error(err))
	}
	e.summary = nil
	saved := false
	defer func() {
		e.holdCursors = false
		var names []string
		for _, a := range e.held {
			a.unsaved = false
			names = append(names, a.name)
		}
		e.held = nil
		if saved {
			e.writeSummary(names)
		}
	}()
	rep, err := e.rebuildGraph(ctx, extra)
	if err != nil {
		return rep, err
	}
	if err := e.saveHeldCursors(); err != nil {
		return rep, err // the summary waits for the next pass
	}
	saved = true
	return rep, nil
}

// saveStates writes each agent's state durably, in parallel, and returns
// each one's error (one agent's failure does not stop the others).
func (e *Engine) saveStates(agents []*agentSync) []error {
	return inParallel(len(agents), func(i int) error {
		return saveState(e.opts.Disk, e.layout.StateFile(agents[i].name), agents[i].state)
	})
}

// saveHeldCursors writes the state of every agent whose cursors a rebuild
// moved, each durably (one agent's failure does not stop the others).
func (e *Engine) saveHeldCursors() error {
	var errs []error
	for i, err := range e.saveStates(e.held) {
		if err != nil {
			e.agentFault(e.held[i], err)
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rebuild: save cursors (the projection is complete; run the rebuild again, or the daemon projects these agents' journals again): %w", err)
	}
	return nil
}

func (e *Engine) rebuildGraph(ctx context.Context, extra Source) (RebuildReport, error) {
	r, ok := e.opts.Graph.(Rebuilder)
	if !ok {
		if err := e.opts.Graph.Drop(ctx); err != nil {
			return RebuildReport{}, fmt.Errorf("rebuild: drop graph: %w", err)
		}
		b, ok := e.opts.Graph.(BulkLoader)
		if !ok {
			return e.rebuildDropped(ctx, extra)
		}
		if err := b.BeginBulk(ctx); err != nil {
			return RebuildReport{}, fmt.Errorf("rebuild: begin bulk load: %w", err)
		}
		e.bulkBatch = max(1, b.BulkBatchFactor()) * e.opts.BatchSize
		rep, err := e.rebuildDropped(ctx, extra)
		e.bulkBatch = 0
		if end := b.EndBulk(context.WithoutCancel(ctx)); end != nil && err == nil {
			err = fmt.Errorf("rebuild: end bulk load: %w", end)
		}
		return rep, err
	}
	// Built beside the projection readers use, which answers until the
	// switch (FinishRebuild).
	if err := r.BeginRebuild(ctx); err != nil {
		return RebuildReport{}, fmt.Errorf("rebuild: begin: %w", err)
	}
	rep, err := e.rebuildDropped(ctx, extra)
	if err != nil {
		if aerr := r.AbortRebuild(context.WithoutCancel(ctx)); aerr != nil {
			e.lg.Warn("rebuild: abort", zap.Error(aerr))
		}
		return rep, err
	}
	if err := r.FinishRebuild(ctx); err != nil {
		return rep, fmt.Errorf("rebuild: switch to the new projection: %w", err)
	}
	return rep, nil
}

// rebuildDropped projects everything into an empty graph.
func (e *Engine) rebuildDropped(ctx context.Context, extra Source) (RebuildReport, error) {
	var rep RebuildReport
	agents, err := e.layout.Agents()
	if err != nil {
		return rep, fmt.Errorf("rebuild: list agents: %w", err)
	}
	identity := e.opts.Graph.Identity()
	// The drop made a new generation: these cursors are made against it
	// (other hosts' daemons notice it and project their journals again).
	e.genAsked = time.Time{}
	gen, _ := e.generation(ctx)
	failed := inParallel(len(agents), func(i int) error {
		a := agents[i]
		if err := e.opts.Disk.Truncate(e.layout.OutboxFile(a)); err != nil {
			return diskErr("rebuild: reset outbox", e.layout.OutboxFile(a), err)
		}
		st := newState(identity)
		st.Generation = gen
		if err := saveState(e.opts.Disk, e.layout.StateFile(a), st); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		return nil
	})
	for _, err := range failed {
		if err != nil {
			return rep, err
		}
	}
	e.mu.Lock()
	e.agents = map[string]*agentSync{}
	e.mu.Unlock()
	pass, err := e.SyncOnce(ctx)
	rep.PassReport = pass
	if err != nil {
		return rep, fmt.Errorf("rebuild: %w", err)
	}
	if extra == nil {
		return rep, nil
	}
	before, err := e.opts.Graph.Stats(ctx)
	if err != nil {
		return rep, fmt.Errorf("rebuild: %w", err)
	}
	batch := make([]Memory, 0, e.batchSize())
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if _, err := e.opts.Graph.Apply(ctx, batch); err != nil {
			return fmt.Errorf("rebuild: apply records from history: %w", err)
		}
		if e.opts.Progress != nil {
			e.opts.Progress(len(batch))
		}
		batch = batch[:0]
		return nil
	}
	err = extra(ctx, func(m Memory) error {
		rep.FromSource++
		batch = append(batch, m)
		if len(batch) >= e.batchSize() {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return rep, err
	}
	after, err := e.opts.Graph.Stats(ctx)
	if err != nil {
		return rep, fmt.Errorf("rebuild: %w", err)
	}
	rep.SourceAdded = after.Memories - before.Memories
	e.lg.Info("rebuild done", zap.Int("work_tree_records", rep.Projected), zap.Int("history_records", rep.FromSource),
		zap.Int("only_in_history", rep.SourceAdded), zap.Int("rejected", rep.Rejected))
	return rep, nil
}

// batchSize is the records per graph write of a pass: the bulk load's
// while one runs, else Options.BatchSize.
func (e *Engine) batchSize() int {
	if e.bulkBatch > 0 {
		return e.bulkBatch
	}
	return e.opts.BatchSize
}

// stateWriters is how many agents' sync files a rebuild resets or saves at
// once. Each write waits for its fsyncs (the state file's, its directory's,
// and the outbox's at a reset), so one after another they cost the
// rebuild about 0.7 ms an agent on this project's test host, twice: 1.4 s
// at 2,000 agents.
const stateWriters = 16

// inParallel runs fn(0) to fn(n-1) on up to stateWriters goroutines and
// returns each call's error at its index (a nil entry: that call succeeded;
// a nil slice: n was 0).
func inParallel(n int, fn func(i int) error) []error {
	if n == 0 {
		return nil
	}
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, stateWriters) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = fn(i)
			}
		}()
	}
	wg.Wait()
	return errs
}
