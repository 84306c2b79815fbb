package memsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// ShutdownGrace is how long a batch in flight may take to finish once Run's
// context is cancelled.
const ShutdownGrace = 8 * time.Second

// Run tails every journal until ctx is cancelled: file events make it read
// promptly (after BatchWindow, to gather a burst into one batch), a ticker
// catches what events miss and finds new agents and files, and a paused
// engine (or agent) retries on its backoff schedule. On cancellation the
// batch in flight finishes (within ShutdownGrace), cursors are already
// persisted, and Run returns nil. When the graph's store is lost (see
// StoreChecker) Run returns an error wrapping ErrStoreLost.
func (e *Engine) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		e.lg.Warn("file events unavailable: polling only", zap.Error(err))
		w = nil
	} else {
		defer w.Close()
	}
	// Work outlives ctx by at most ShutdownGrace, so a batch in flight can finish.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(ShutdownGrace, cancelWork) })
	defer stop()
	e.hard = work
	defer func() { e.hard = nil }()

	watched := map[string]bool{}
	// unwatched holds the agents one of whose directories could not be
	// watched (the watch failed: too many watches, say): the ticker reads
	// them on every tick. Every other agent is read when its files send an
	// event, and on a full rescan (see rescanTicks).
	unwatched := map[string]bool{}
	watch := func() {
		if w == nil {
			return
		}
		clear(unwatched)
		dirs := []string{e.layout.Root, e.layout.AgentsDir()}
		// A plain listing: each directory is checked for links below
		// before it is watched, and the pass that follows a full rescan
		// lists the agents with every check (Layout.agents) anyway.
		agents, _ := e.layout.AgentDirs()
		for _, a := range agents {
			dirs = append(dirs, filepath.Join(e.layout.AgentsDir(), a), e.layout.MemoryDir(a),
				e.layout.JournalDir(a), e.layout.ArchiveDir(a))
		}
		for _, d := range dirs {
			if watched[d] {
				continue
			}
			if journal.RealDir(e.layout.Root, d) != nil {
				continue // not read through a link, so not watched either (nor read)
			}
			err := w.Add(d)
			switch {
			case err == nil:
				watched[d] = true
			case errors.Is(err, os.ErrNotExist):
				// Its parent is watched: its creation is an event.
			default:
				e.lg.Warn("cannot watch directory: relying on polling", zap.String("path", d), zap.Error(err))
				if a := agentOf(e.layout, d); a != "" {
					unwatched[a] = true
				}
			}
		}
	}

	dirty := map[string]bool{}
	var lost error     // the graph's store vanished: Run returns it
	var passGen string // the graph's generation at the last full pass
	first := true      // the first pass: the catch-up
	pass := func(all bool) {
		start := time.Now()
		if all {
			passGen, _ = e.generation(ctx)
		}
		if lost = e.checkStore(); lost != nil {
			e.lg.Error("the graph's store was removed or replaced under the daemon: opening it again to project the journals again",
				zap.Error(lost))
			e.observePass(start, lost)
			return
		}
		agents, err := e.listAgents()
		if err != nil {
			e.lg.Error("list agents", zap.Error(err))
			return
		}
		var rep PassReport
		todo := agents[:0]
		for _, a := range agents {
			if all || dirty[a] || unwatched[a] || e.pendingFor(a) {
				todo = append(todo, a)
			}
		}
		_ = e.syncAgents(ctx, todo, &rep) // errors are logged; the agent is tried again next pass
		clear(dirty)
		e.notify()
		e.observePass(start, nil)
		if first || rep.Projected+rep.Queued+rep.Rejected >= settleAfter {
			settle()
		}
		first = false
		if rep.Projected+rep.Queued+rep.Rejected > 0 {
			// One line per pass that did something.
			lag := time.Duration(0)
			if !rep.Oldest.IsZero() {
				lag = max(e.opts.Now().Sub(rep.Oldest), 0).Round(time.Millisecond)
			}
			e.lg.Info("pass", zap.Int("projected", rep.Projected), zap.Int("rejected", rep.Rejected),
				zap.Int("queued", rep.Queued), zap.Duration("lag", lag))
		}
	}

	watch()
	pass(true)
	e.lg.Info("memsync running: tailing the journals", zap.String("graph", e.opts.Graph.Identity()))

	tick := time.NewTicker(e.opts.PollInterval)
	defer tick.Stop()
	// While file events flow, a tick reads only what needs it (an agent
	// with an event not yet read, an outbox, a directory that cannot be
	// watched, a graph that changed generation); every rescanTicks-th tick
	// rescans everything, in case an event was missed. Without events
	// (no watcher, or the watcher reported a loss) every tick rescans.
	ticks, missed := 0, w == nil
	window := time.NewTimer(time.Hour)
	window.Stop()
	windowOn := false
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	for {
		if lost != nil {
			return lost
		}
		if at := e.RetryAt(); !at.IsZero() {
			retry.Reset(max(time.Until(at), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			e.lg.Info("memsync stopping: cursors are persisted")
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			a, journalDir := e.eventAgent(ev.Name)
			if ev.Has(fsnotify.Create) && journalDir {
				watch() // a new agent, or a directory of one: watch it too
			}
			if a == "" {
				continue // the cache's snapshots, MEMORY.md, memsync.yaml: nothing to read
			}
			dirty[a] = true
			if !windowOn {
				window.Reset(e.opts.BatchWindow)
				windowOn = true
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			e.lg.Warn("file events: some may be lost, the poll catches up", zap.Error(err))
			missed = true
		case <-window.C:
			windowOn = false
			pass(false)
		case <-retry.C:
			pass(true)
			if e.paused && !e.opts.Now().Before(e.retryAt) {
				e.recovered("") // nothing needed the graph or the disk: no reason to stay paused
			}
		case <-tick.C:
			ticks++
			e.ticks.Add(1)
			if missed || ticks%rescanTicks == 0 || e.checkStore() != nil || e.generationMoved(ctx, passGen) {
				missed = w == nil
				watch()
				pass(true)
				continue
			}
			if len(dirty) > 0 || len(unwatched) > 0 || e.anyPending() {
				pass(false)
			}
		}
	}
}

// eventAgent is the agent whose journals a file event under the
// repository may have changed, or "" for one that changes none (the
// snapshots and MEMORY.md the cache and compaction write in an agent's
// memory directory: with 2,000 agents, reading an agent, and worse,
// re-listing every agent's directories, for each of those kept a daemon
// busy). dir says the path is itself a directory the daemon watches or
// would (the agents directory, an agent's, its memory, journal or archive
// directory): its creation is a new place to watch.
func (e *Engine) eventAgent(path string) (agent string, dir bool) {
	if path == e.layout.AgentsDir() {
		return "", true
	}
	a := agentOf(e.layout, path)
	if a == "" {
		return "", false
	}
	journal, archive := e.layout.JournalDir(a), e.layout.ArchiveDir(a)
	switch path {
	case filepath.Join(e.layout.AgentsDir(), a), e.layout.MemoryDir(a), journal, archive:
		return a, true
	}
	if d := filepath.Dir(path); d == journal || d == archive {
		return a, false
	}
	return "", false
}

// settleAfter is how many records a pass reads before the daemon settles
// its memory when the pass ends (settle), as it does after its first.
const settleAfter = 10_000

// idleGCPercent is the garbage collector's target once the daemon has
// caught up (GOGC 100 until then): a collection each time the heap grows
// by half what stays live, not by all of it.
const idleGCPercent = 50

// settle hands the memory a catch-up grew to back to the system (a
// forced collection: a few milliseconds per 10 MB of live heap) and sets
// the collector to idleGCPercent, so that the garbage each later rescan
// of every journal leaves is collected before the heap doubles (issue 50:
// 1,000 agents' 1M records left 32 MB live, and RSS swung between 100 and
// 180 MB as each rescan's 80 MB of garbage waited for the next
// collection). A GOGC of the operator's stands. Unlike a memory limit it
// never makes a large later pass collect without end: the target follows
// what is live.
func settle() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(idleGCPercent)
	}
	debug.FreeOSMemory()
}

// rescanTicks is how many ticks pass between full rescans of every
// agent's journals while file events flow: at the default 1 s poll, a
// missed event is read within 30 s, and a daemon of 2,000 agents with
// nothing to do does not stat and open every journal each second.
const rescanTicks = 30

// generationMoved says whether the graph now has another generation than
// was (it was dropped and rebuilt, maybe by another host): every agent is
// then projected again. A graph without generations, or one that cannot
// say now, has not moved.
func (e *Engine) generationMoved(ctx context.Context, was string) bool {
	gen, known := e.generation(ctx)
	return known && gen != was
}

// anyPending says whether any agent has an outbox waiting for the graph.
func (e *Engine) anyPending() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.agents {
		if a.outboxPending() {
			return true
		}
	}
	return false
}

// pendingFor says whether agent has an outbox waiting for the graph.
func (e *Engine) pendingFor(agent string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.agents[agent]
	return a != nil && a.outboxPending()
}
