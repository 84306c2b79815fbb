package cache

import (
	"context"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// DefaultDelay is how long a Regenerator waits for quiet.
const DefaultDelay = 2 * time.Second

// Regenerator keeps snapshots current for the daemon: Notify (named agents)
// or NotifyGroups (which fits memsync.Options.OnChanged) says records were
// projected, and once no notice has come for the delay — or at the latest
// maxWaitFactor delays after the first pending notice, so a steady stream
// of writes cannot starve the cache — the snapshots are regenerated in one
// walk. Regenerations are spaced by fifteen times the last one's duration
// (at most a minute), so that on a large graph under steady writes they
// take at most a sixteenth of the time: with 2,000 agents, whose walk
// takes about 2.3 s, a shared record reaches every snapshot within about
// 40 s, and one shared record every 10 s costs under 10 % of a core (issue
// 30). The first walk after a start is followed by no rest. See restAfter.
//
// Notify regenerates every agent, not only those notified: a shared record
// changes what all of them see, and files that did not change are not
// rewritten. NotifyGroups, told which groups changed, regenerates only the
// agents that see them. The first regeneration covers every agent either
// way, so snapshots left stale by an earlier process are brought up to date.
// Once a regeneration leaves nothing pending, the memory it used is
// returned to the operating system: an idle daemon stays small.
//
// A failed regeneration (the graph down) is retried with a doubling pause,
// up to a minute; a new notice retries sooner. One goroutine does the work;
// Close stops it.
type Regenerator struct {
	w     *Writer
	lg    *zap.Logger
	delay time.Duration

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	pending map[string]bool // agents named in notices not yet served
	all     bool            // every agent is to be regenerated, not only pending
	dirty   bool
	since   time.Time // first notice not yet served
	rest    time.Time // no regeneration starts before this
	walked  bool      // a regeneration ran since the start
}

// maxWaitFactor bounds, in delays, how long pending changes may wait.
const maxWaitFactor = 10

// restFactor spaces regenerations by this many times the last one's
// duration, so that a large graph under steady writes spends at most a
// sixteenth of its time (6 %) rendering snapshots. It was 4 (a fifth): at
// 2,000 agents a walk per shared record every 10 s cost 21.7 % of a core;
// at 11 the daemon measured 9.95 and 10.55 % (walks and the records'
// projection), too close to the 10 % budget.
const restFactor = 15

// maxRest caps that spacing, so that a long walk does not hold snapshots
// back for many minutes. The first walk after a start (it writes every
// file while the backlog is still being projected) is followed by no
// rest: what it left pending is served at once and the daemon settles.
const maxRest = time.Minute

// restAfter is how long no regeneration starts after one that took walk.
func restAfter(walk time.Duration) time.Duration {
	return min(restFactor*walk, maxRest)
}

// maxRetry caps the pause between failed regenerations.
const maxRetry = time.Minute

// closeTimeout bounds the last regeneration Close runs.
const closeTimeout = 30 * time.Second

// NewRegenerator starts a regenerator of the snapshots of g under layout.
// delay <= 0 means DefaultDelay; lg may be nil.
func NewRegenerator(g memsync.Graph, layout memsync.Layout, delay time.Duration, lg *zap.Logger) *Regenerator {
	if delay <= 0 {
		delay = DefaultDelay
	}
	if lg == nil {
		lg = zap.NewNop()
	}
	r := &Regenerator{
		w: NewWriter(g, layout, lg), lg: lg, delay: delay,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		pending: map[string]bool{}, all: true,
	}
	go r.loop()
	return r
}

// Notify says that agents had records projected, which may change what
// any agent sees: every agent is regenerated. It never blocks.
func (r *Regenerator) Notify(agents []string) {
	r.mu.Lock()
	for _, a := range agents {
		r.pending[a] = true
	}
	r.all = true
	r.markLocked()
	r.mu.Unlock()
	r.kickLoop()
}

// NotifyGroups says that what the groups hold changed (group ids, as
// journal.Record.GroupID gives them): records of those groups were
// projected, or memories in them were superseded (a caller that cannot
// tell the group of a superseded memory names the shared group). A private
// group regenerates its agent only; the shared group, or any other,
// regenerates every agent. It never blocks.
func (r *Regenerator) NotifyGroups(groups []string) {
	if len(groups) == 0 {
		return
	}
	r.mu.Lock()
	for _, g := range groups {
		if a, ok := journal.GroupAgent(g); ok {
			r.pending[a] = true
		} else {
			r.all = true
		}
	}
	r.markLocked()
	r.mu.Unlock()
	r.kickLoop()
}

func (r *Regenerator) markLocked() {
	if !r.dirty {
		r.dirty, r.since = true, time.Now()
	}
}

func (r *Regenerator) kickLoop() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Close stops the regenerator. Changes still pending are written first
// (within 30 seconds), so the snapshots a stopped daemon leaves behind are
// current. Close waits for the goroutine and may be called more than once.
func (r *Regenerator) Close() error {
	r.once.Do(func() { close(r.stop) })
	<-r.done
	return nil
}

func (r *Regenerator) loop() {
	defer close(r.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	retry := time.Duration(0)
	for {
		select {
		case <-r.stop:
			timer.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
			r.run(ctx)
			cancel()
			return
		case <-r.kick:
			retry = 0
			timer.Reset(r.wait())
		case <-timer.C:
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() { // a Close during a long walk cuts it short
				select {
				case <-r.stop:
					cancel()
				case <-stopped:
				}
			}()
			ok := r.run(ctx)
			close(stopped)
			cancel()
			if !ok {
				retry = min(max(2*retry, r.delay), maxRetry)
				timer.Reset(retry)
			}
		}
	}
}

// wait is how long to wait for quiet now.
func (r *Regenerator) wait() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	left := time.Until(r.since.Add(maxWaitFactor * r.delay))
	return max(0, min(r.delay, left), time.Until(r.rest))
}

// run regenerates the snapshots due if anything is pending and reports
// whether it succeeded (or had nothing to do).
func (r *Regenerator) run(ctx context.Context) bool {
	r.mu.Lock()
	if !r.dirty {
		r.mu.Unlock()
		return true
	}
	named, all := r.pending, r.all
	r.pending, r.all, r.dirty = map[string]bool{}, false, false
	r.mu.Unlock()

	var agents []string
	var err error
	if all {
		agents, err = r.w.layout.Agents()
	}
	if err == nil {
		for _, a := range agents {
			delete(named, a)
		}
		for a := range named { // notified but without a directory yet
			agents = append(agents, a)
		}
		sort.Strings(agents)
		start := time.Now()
		if len(agents) > 0 {
			_, err = r.w.Generate(ctx, agents)
			if len(agents) > walkAgents {
				// A fleet's walk leaves its lists' pages to the runtime,
				// which would give them back over minutes: a daemon that
				// caught up settles now (issue 50).
				debug.FreeOSMemory()
			}
		}
		r.mu.Lock()
		if r.walked {
			// The first walk after a start brings every file up to
			// date while the backlog is projected: what it leaves
			// pending is served at once, so the daemon settles.
			r.rest = time.Now().Add(restAfter(time.Since(start)))
		}
		r.walked = true
		idle := !r.dirty
		r.mu.Unlock()
		if err == nil && idle {
			// The walk and the rendering leave the heap at its peak;
			// without this the runtime keeps those pages for minutes.
			debug.FreeOSMemory()
		}
	}
	if err == nil {
		return true
	}
	r.lg.Warn("cache: regenerate snapshots", zap.Error(err))
	r.mu.Lock()
	for _, a := range agents {
		r.pending[a] = true
	}
	for a := range named {
		r.pending[a] = true
	}
	r.all = r.all || all
	r.markLocked()
	r.mu.Unlock()
	return false
}
