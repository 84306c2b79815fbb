package embedded

import (
	"context"
	"fmt"

	"go.uber.org/zap"
)

// repairVectors runs Reembed in the background: at Open, and whenever the
// vector log is found lost, cut short or damaged while the store is open
// (the indexer starting a new log at a write, a search finding the log
// shorter than what it loaded), so that the memories of the lost log get
// their vectors again without waiting for the next Open (issue 51 §12).
// A call while a run is going makes it run once more when it ends (the
// damage may be newer than what it checked). Nothing runs without an
// embedder, on a read-only store, or once Close has begun.
func (g *Graph) repairVectors() {
	if g.reembedCtx == nil {
		return
	}
	g.reembedMu.Lock()
	defer g.reembedMu.Unlock()
	if g.reembedCtx.Err() != nil {
		return
	}
	if g.reembedDone != nil {
		select {
		case <-g.reembedDone:
		default:
			g.reembedAgain = true // running: once more when it ends
			return
		}
	}
	done := make(chan struct{})
	g.reembedDone = done
	go func() {
		for {
			err := g.Reembed(g.reembedCtx)
			g.reembedMu.Lock()
			switch {
			case err == nil:
				g.reembedError = nil
			case g.reembedCtx.Err() == nil:
				g.reembedError = err
				g.lg.Warn("embedded graph: re-embed", zap.Error(err))
			}
			again := g.reembedAgain && g.reembedCtx.Err() == nil
			g.reembedAgain = false
			if !again {
				// Under the lock: a call from now on starts a run of its own.
				close(done)
				g.reembedMu.Unlock()
				return
			}
			g.reembedMu.Unlock()
		}
	}()
}

// awaitReembed waits for the background re-embedding running now, if any,
// and returns what it failed with.
func (g *Graph) awaitReembed(ctx context.Context) error {
	g.reembedMu.Lock()
	done := g.reembedDone
	g.reembedMu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("embedded: flush: %w", ctx.Err())
	}
	g.reembedMu.Lock()
	defer g.reembedMu.Unlock()
	return g.reembedError
}
