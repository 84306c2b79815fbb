package memsync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// Options configure an Engine. Zero values take the defaults noted.
type Options struct {
	Root         string        // the memory repository; required
	Graph        Graph         // required
	Logger       *zap.Logger   // zap.NewNop() when nil
	Disk         Disk          // OSDisk when nil
	BatchSize    int           // records per graph write; 1000
	BatchWindow  time.Duration // how long Run gathers writes before reading; 20ms
	PollInterval time.Duration // fallback scan when file events are missed; 1s
	ApplyTimeout time.Duration // one graph write; 60s
	Now          func() time.Time
	// NewBackOff makes the retry schedule for an unreachable graph or a full
	// disk; exponential with jitter, capped at 3 minutes, never giving up.
	NewBackOff func() backoff.BackOff
	// OnChanged is told, after each pass, which groups' recall may have
	// changed: the group of every record projected, and the shared group as
	// well when a record supersedes another (whose group is not known here).
	OnChanged func(groups []string)
	// OnSignals is told the uuids whose importance signals may have
	// changed: every record projected and every uuid one of them links to,
	// supports or contradicts (for promotion). It is told after each pass,
	// and within a pass whenever signalFlush of them have gathered, so
	// that a catch-up of millions of records holds a bounded set.
	OnSignals func(uuids []string)
	// Progress is told how many records each graph write carried.
	Progress func(records int)
	// Tally, when set, is told every journal line the engine reads, for
	// VerifyTallied after a Rebuild (nil: nothing is kept).
	Tally *JournalTally
	// Observer is told about graph writes, rejects and passes, for
	// monitoring; nil: nobody.
	Observer Observer
}

// DefaultBackOff retries after 250ms, doubling up to 3 minutes, with ±50%
// jitter, forever.
func DefaultBackOff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 250 * time.Millisecond
	b.MaxInterval = 3 * time.Minute
	b.RandomizationFactor = 0.5
	b.MaxElapsedTime = 0
	b.Reset()
	return b
}

// Engine projects every agent's journals into the graph. It is driven by one
// goroutine at a time (SyncOnce or Run); Status may be called concurrently.
type Engine struct {
	opts   Options
	lg     *zap.Logger
	layout Layout

	mu     sync.Mutex // guards agents
	agents map[string]*agentSync

	// pause is the retry schedule shared by every agent: the graph being
	// down affects them all. (A sync file that cannot be written stops its
	// agent only: agentSync.fault.)
	pause    backoff.BackOff
	paused   bool
	retryAt  time.Time
	cause    string
	pauseErr string // the error behind cause, for Observer

	changed map[string]bool // groups with records projected in this pass
	// signalled holds the uuids whose signals this pass may have changed
	// since OnSignals was last told (at most about signalFlush of them),
	// each a copy: a uuid parsed from a journal line shares that line's
	// memory, and keeping it would keep the whole line.
	signalled map[string]bool
	ignored   map[string]bool // paths already logged as ignored (IgnoredPath)

	// hard bounds graph writes during Run: it outlives Run's context by
	// ShutdownGrace so that a batch in flight can finish.
	hard context.Context

	emptyChecked, empty bool

	// The graph's generation (Generations) as last asked, and when: a
	// daemon asks at most once per PollInterval, not on every pass that a
	// file event starts; SyncOnce always asks.
	gen      string
	genKnown bool
	genAsked time.Time

	// holdCursors, set during a rebuild, keeps the cursors a pass moves in
	// memory only, the agents whose state is unwritten in held; the
	// rebuild writes them once its graph is durable (saveHeldCursors).
	holdCursors bool
	held        []*agentSync

	// due lists the agents whose cursors a pass moved and has not written
	// yet (agentSync.due): a pass writes each agent's state once every
	// cursorSaveEvery and at its end (saveDueCursors), not after every
	// group of records it stores. savedAt is when it last wrote them.
	due     []*agentSync
	savedAt time.Time

	// bulkBatch, set during a bulk load (BulkLoader), is the records per
	// graph write of its passes in place of Options.BatchSize.
	bulkBatch int

	// summary is the summary file as this engine last wrote it (nil:
	// read it, or start one, at the next write).
	summary *Summary

	// ticks and agentReads count Run's ticks and the agents its passes
	// read: what a daemon with nothing to do costs, for the tests.
	ticks, agentReads atomic.Int64
}

// agentSync is the engine's view of one agent.
type agentSync struct {
	name       string
	state      *State
	rejects    map[string]map[string]bool // the rejects recorded: by journal file, their keys
	outboxSize int64
	unsaved    bool   // its state moved during a rebuild, not written yet (Engine.held)
	due        bool   // its state moved during a pass, not written yet (Engine.due)
	durable    *State // while due: its state as last written (or read), to go back to if the write fails

	// fault is the last failure to write this agent's sync files (state,
	// outbox, rejects): a read-only or full sync/ stops this agent, on its
	// own backoff (retryAt), and no other. stalled: a write failed in the
	// current pass, whose rest is dropped for this agent.
	fault    error
	faultOff backoff.BackOff
	retryAt  time.Time
	stalled  bool
}

func (a *agentSync) outboxPending() bool { return a.outboxSize > a.state.OutboxDone }

// New makes an engine; it touches no files until a pass starts.
func New(opts Options) (*Engine, error) {
	if opts.Root == "" || opts.Graph == nil {
		return nil, errors.New("memsync: Options.Root and Options.Graph are required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Disk == nil {
		opts.Disk = OSDisk{}
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1000
	}
	if opts.BatchWindow <= 0 {
		opts.BatchWindow = 20 * time.Millisecond
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.ApplyTimeout <= 0 {
		opts.ApplyTimeout = 60 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewBackOff == nil {
		opts.NewBackOff = DefaultBackOff
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	return &Engine{
		opts: opts, lg: opts.Logger, layout: Layout{Root: opts.Root},
		agents: map[string]*agentSync{}, pause: opts.NewBackOff(), changed: map[string]bool{},
		signalled: map[string]bool{},
		ignored:   map[string]bool{},
	}, nil
}

// listAgents is Layout.Agents, logging once each directory left out.
func (e *Engine) listAgents() ([]string, error) {
	agents, ignored, err := e.layout.AgentsIgnored()
	e.noteIgnored(ignored)
	return agents, err
}

// journalFiles is Layout.JournalFiles, logging once each path left out.
func (e *Engine) journalFiles(agent string) ([]string, error) {
	files, ignored, err := e.layout.JournalFilesIgnored(agent)
	e.noteIgnored(ignored)
	return files, err
}

// noteIgnored warns about each ignored path the first time it is seen.
func (e *Engine) noteIgnored(ignored []IgnoredPath) {
	for _, ig := range ignored {
		if !e.ignored[ig.Path] {
			e.ignored[ig.Path] = true
			e.lg.Warn("ignored: not read", zap.String("path", ig.Path), zap.String("reason", ig.Reason))
		}
	}
}

// PassReport sums up one pass over the journals.
type PassReport struct {
	Projected int // records the graph acknowledged (including replays)
	Queued    int // records put in an outbox
	Rejected  int // new rejects recorded
	Pending   int // outbox entries still waiting at the end
	// Oldest is the earliest ts among the records the graph acknowledged:
	// the daemon's pass line reports its age as the pass's lag.
	Oldest time.Time
}

// projected counts batch as acknowledged by the graph.
func (r *PassReport) projected(batch []Memory) {
	r.Projected += len(batch)
	for i := range batch {
		if ts := batch[i].TS; !ts.IsZero() && (r.Oldest.IsZero() || ts.Before(r.Oldest)) {
			r.Oldest = ts
		}
	}
}

// ErrPaused means the pass stopped early: the graph is unreachable or the
// disk is full; the engine retries on its backoff schedule.
var ErrPaused = errors.New("paused")

// SyncOnce makes one full pass: every agent's outbox is tried once, every
// journal read to its end. It returns ErrPaused (wrapped, with the cause)
// when records had to wait in an outbox or a disk write failed.
func (e *Engine) SyncOnce(ctx context.Context) (PassReport, error) {
	e.retryAt = time.Time{}  // a one-shot pass always tries the graph and every agent
	e.genAsked = time.Time{} // and asks for the graph's generation
	for _, a := range e.snapshotAgents() {
		a.retryAt = time.Time{}
	}
	var rep PassReport
	agents, err := e.listAgents()
	if err != nil {
		return rep, fmt.Errorf("list agents: %w", err)
	}
	err = e.syncAgents(ctx, agents, &rep)
	e.notify()
	if err != nil {
		return rep, err
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	for _, a := range e.snapshotAgents() {
		n, _ := countLines(e.layout.OutboxFile(a.name), a.state.OutboxDone)
		rep.Pending += n
	}
	if e.paused {
		return rep, fmt.Errorf("%w: %s", ErrPaused, e.cause)
	}
	var faults []error
	for _, a := range e.snapshotAgents() {
		if a.fault != nil {
			faults = append(faults, fmt.Errorf("agent %s: %w", a.name, a.fault))
		}
	}
	if len(faults) > 0 {
		return rep, fmt.Errorf("%w: %s: %w", ErrPaused, causeDisk, errors.Join(faults...))
	}
	return rep, nil
}

func (e *Engine) snapshotAgents() []*agentSync {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*agentSync, 0, len(e.agents))
	for _, a := range e.agents {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (e *Engine) notify() {
	if fn := e.opts.OnChanged; fn != nil && len(e.changed) > 0 {
		fn(slices.Sorted(maps.Keys(e.changed)))
	}
	clear(e.changed)
	e.flushSignals()
}

// signalFlush is how many uuids signalled gathers before OnSignals is told
// of them within a pass. Told only at the end of a pass, a daemon catching
// up 1M records held every uuid projected, each keeping its whole parsed
// journal line alive (issue 50: 155 of 365 MB live at 300k records, the
// largest holder of the first pass).
const signalFlush = 8192

// flushSignals tells OnSignals the uuids gathered and starts a new set (a
// new map: a cleared one keeps its buckets).
func (e *Engine) flushSignals() {
	if len(e.signalled) == 0 {
		return
	}
	if fn := e.opts.OnSignals; fn != nil {
		fn(slices.Sorted(maps.Keys(e.signalled)))
	}
	e.signalled = map[string]bool{}
}

// projected notes what a write that landed changed, for notify.
func (e *Engine) projected(batch []Memory) {
	for i := range batch {
		m := &batch[i]
		e.changed[m.GroupID()] = true
		if len(m.Supersedes) > 0 {
			e.changed[journal.SharedGroup] = true
		}
		if e.opts.OnSignals != nil {
			e.signal(m.UUID)
			for _, ids := range [][]string{m.Links, m.ConflictsWith, m.Supports()} {
				for _, id := range ids {
					e.signal(id)
				}
			}
		}
	}
	// The records of this write are in the graph: what they signal may be
	// checked now.
	if len(e.signalled) >= signalFlush {
		e.flushSignals()
	}
}

// signal notes id for OnSignals, as a copy of its own (see signalled).
func (e *Engine) signal(id string) {
	if !e.signalled[id] {
		e.signalled[strings.Clone(id)] = true
	}
}

// agent loads (once) what the engine knows of name.
func (e *Engine) agent(name string) (*agentSync, error) {
	e.mu.Lock()
	a := e.agents[name]
	e.mu.Unlock()
	if a != nil {
		return a, nil
	}
	syncDir := e.layout.SyncDir(name)
	journal.SweepTemp(syncDir, e.opts.Now())
	statePath := e.layout.StateFile(name)
	st, err := LoadState(statePath)
	if errors.Is(err, ErrCorruptState) {
		aside := fmt.Sprintf("%s.corrupt-%d", statePath, e.opts.Now().UnixNano())
		renameErr := os.Rename(statePath, aside)
		e.lg.Error("state file is corrupt: kept aside, journals will be read again from the start",
			zap.String("agent", name), zap.String("path", statePath), zap.String("kept_as", aside),
			zap.Error(err), zap.NamedError("rename_error", renameErr))
		st = newState("")
	} else if err != nil {
		return nil, err
	}
	identity := e.opts.Graph.Identity()
	outbox := e.layout.OutboxFile(name)
	if graphLost(st, identity, e.graphIsEmpty) {
		e.lg.Warn("the graph is empty but the cursors say this agent was projected (graph lost or wiped): projecting again",
			zap.String("agent", name), zap.String("graph", identity))
		st.Graph = ""
	}
	if st.Graph != identity {
		if st.Graph != "" {
			e.lg.Warn("graph target changed: projecting this agent's journals again",
				zap.String("agent", name), zap.String("was", st.Graph), zap.String("now", identity))
		}
		st = newState(identity)
		if err := e.opts.Disk.Truncate(outbox); err != nil {
			return nil, diskErr("reset outbox", outbox, err)
		}
	}
	if cut, err := repairTail(outbox); err != nil {
		return nil, fmt.Errorf("repair outbox %s: %w", outbox, err)
	} else if cut {
		e.lg.Warn("outbox ended in a torn line: cut it (its records are read again from the journal)",
			zap.String("path", outbox))
	}
	if _, err := repairTail(e.layout.RejectsFile(name)); err != nil {
		return nil, fmt.Errorf("repair rejects: %w", err)
	}
	rejects, err := loadRejects(e.layout.RejectsFile(name))
	if err != nil {
		return nil, fmt.Errorf("read rejects: %w", err)
	}
	a = &agentSync{name: name, state: st, rejects: rejects}
	if fi, err := os.Stat(outbox); err == nil {
		a.outboxSize = fi.Size()
	}
	if st.OutboxDone > a.outboxSize {
		st.OutboxDone = 0 // truncated after draining, before the state said so
	}
	e.mu.Lock()
	e.agents[name] = a
	e.mu.Unlock()
	return a, nil
}

// graphIsEmpty says, once per engine, whether the graph holds no memory at
// all; an unreachable graph counts as not empty (nothing is known).
func (e *Engine) graphIsEmpty() bool {
	if e.emptyChecked {
		return e.empty
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := e.opts.Graph.Stats(ctx)
	e.emptyChecked, e.empty = err == nil, err == nil && st.Memories == 0
	return e.empty
}

// generation asks a graph that Generations for its generation; known is
// false when the graph has none or cannot say now (then nothing changes:
// a graph that cannot be reached is not written either). While the engine
// is paused for the graph it does not ask (the driver would spend its
// retry time on every pass); a graph found unreachable pauses it, as a
// failed write does, so that the pass queues its records at once.
func (e *Engine) generation(ctx context.Context) (gen string, known bool) {
	g, ok := e.opts.Graph.(Generations)
	if !ok || !e.mayTry() {
		return "", false
	}
	if !e.genAsked.IsZero() && time.Since(e.genAsked) < e.opts.PollInterval {
		return e.gen, e.genKnown
	}
	gctx, cancel := context.WithTimeout(ctx, e.opts.ApplyTimeout)
	defer cancel()
	gen, err := g.Generation(gctx)
	e.genAsked = time.Now()
	e.gen, e.genKnown = gen, err == nil
	if err != nil {
		e.lg.Debug("graph generation unknown", zap.Error(err))
		if errors.Is(err, ErrUnavailable) && ctx.Err() == nil {
			e.graphDown(err)
		}
	}
	return e.gen, e.genKnown
}

// newGeneration moves a's cursors to generation gen of the graph. Cursors
// made against another generation describe a graph that was dropped since
// (a rebuild, maybe on another host sharing it): every journal of a is
// projected again from zero, and its outbox is emptied (the journals hold
// every record it held). Cursors that never moved just take gen.
func (e *Engine) newGeneration(a *agentSync, gen string) error {
	st := newState(e.opts.Graph.Identity())
	st.Generation = gen
	if len(a.state.Files) > 0 || a.outboxSize > 0 {
		e.lg.Warn("the graph was dropped and rebuilt since this agent was projected (its generation changed): projecting its journals again",
			zap.String("agent", a.name), zap.String("was", a.state.Generation), zap.String("now", gen))
		outbox := e.layout.OutboxFile(a.name)
		if err := e.opts.Disk.Truncate(outbox); err != nil {
			return diskErr("reset outbox", outbox, err)
		}
		a.outboxSize = 0
	}
	if err := saveState(e.opts.Disk, e.layout.StateFile(a.name), st); err != nil {
		return err
	}
	a.state = st
	return nil
}

// errStop ends a pass quietly: the engine is paused and has said why.
var errStop = errors.New("stop")

// agentReject is a reject found by the graph, with the agent whose journal
// holds the line (a batch may span agents).
type agentReject struct {
	Reject
	agent string
}

// apply writes a batch to the graph. A record the graph refuses for good is
// found by writing the batch one record at a time, and rejected; the others
// land. It returns the rejects to record, or an error meaning the graph is
// unreachable (the whole batch must wait).
func (e *Engine) apply(ctx context.Context, batch []Memory) ([]agentReject, error) {
	base := e.hard
	if base == nil {
		base = context.WithoutCancel(ctx)
	}
	actx, cancel := context.WithTimeout(base, e.opts.ApplyTimeout)
	defer cancel()
	start := time.Now()
	res, err := e.opts.Graph.Apply(actx, batch)
	var recErr *RecordError
	if err != nil && !errors.As(err, &recErr) {
		e.opts.Observer.GraphWrite(batch, time.Since(start), err)
		return nil, err
	}
	if err == nil {
		e.opts.Observer.GraphWrite(batch, time.Since(start), nil)
		return e.mismatches(actx, batch, res)
	}
	e.lg.Warn("graph refused a record: isolating it", zap.Error(err))
	var rejects []agentReject
	for _, m := range batch {
		one := time.Now()
		res, err := e.opts.Graph.Apply(actx, []Memory{m})
		if err == nil || !errors.As(err, &recErr) {
			e.opts.Observer.GraphWrite([]Memory{m}, time.Since(one), err)
		}
		if errors.As(err, &recErr) {
			rejects = append(rejects, agentReject{agent: m.Agent, Reject: Reject{File: m.Path, Line: m.Line, UUID: m.UUID,
				Reason: "graph refused the record: " + recErr.Err.Error()}})
			continue
		}
		if err != nil {
			return nil, err
		}
		mm, err := e.mismatches(actx, []Memory{m}, res)
		if err != nil {
			return nil, err
		}
		rejects = append(rejects, mm...)
	}
	return rejects, nil
}

// mismatches turns the clashes the graph reported into rejects: every
// record in the batch with one of those uuids whose content differs from
// what the graph holds (the version journal.ClashWins prefers), and every
// memory projected earlier that a record of the batch displaced.
func (e *Engine) mismatches(ctx context.Context, batch []Memory, res ApplyResult) ([]agentReject, error) {
	if len(res.Mismatched) == 0 && len(res.Displaced) == 0 {
		return nil, nil
	}
	held, err := e.opts.Graph.Get(ctx, res.Mismatched)
	if err != nil {
		return nil, err
	}
	var out []agentReject
	inBatch := map[[2]any]bool{}
	for _, m := range batch {
		inBatch[[2]any{m.Path, m.Line}] = true
		n, ok := held[m.UUID]
		if !ok || n.Hash == m.Hash() {
			continue
		}
		wp, wl := locateWinner(e.layout, n.Memory, n.Hash)
		out = append(out, agentReject{agent: m.Agent, Reject: Reject{File: m.Path, Line: m.Line, UUID: m.UUID,
			Reason: journal.ClashReason(m.UUID, wp, wl)}})
	}
	for _, d := range res.Displaced {
		if inBatch[[2]any{d.Path, d.Line}] {
			continue
		}
		winner := held[d.UUID] // a displaced uuid is Mismatched too
		wp, wl := locateWinner(e.layout, winner.Memory, winner.Hash)
		rj := Reject{File: d.Path, Line: d.Line, UUID: d.UUID, Reason: journal.ClashReason(d.UUID, wp, wl)}
		if at, ok := locateLoser(e.layout, d, winner.Hash); ok {
			rj.File, rj.Line, rj.Offset, rj.Digest = at.File, at.Line, at.Offset, at.Digest
		}
		out = append(out, agentReject{agent: d.Agent, Reject: rj})
	}
	return out, nil
}

// rejectFor records rejects in the rejects of the agents they are keyed
// by, in name order. A write that fails is that agent's fault (the others
// go on); an agent that cannot be loaded is logged and skipped.
func (e *Engine) rejectFor(byAgent map[string][]Reject, rep *PassReport) {
	names := make([]string, 0, len(byAgent))
	for name := range byAgent {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		a, err := e.agent(name)
		if err != nil {
			e.lg.Error("record rejects", zap.String("agent", name), zap.Error(err))
			continue
		}
		if err := e.reject(a, byAgent[name], rep); err != nil {
			e.agentFault(a, err)
		}
	}
}

// reject records rejects in a's rejects file, each line once. A reject the
// graph found names its line only: its offset and digest are found here.
func (e *Engine) reject(a *agentSync, rejects []Reject, rep *PassReport) error {
	var buf strings.Builder
	var added []Reject
	now := e.opts.Now().UTC()
	for _, r := range rejects {
		if r.Digest == "" {
			if off, d, err := locateLine(filepath.Join(e.layout.Root, filepath.FromSlash(r.File)), r.Line); err == nil {
				r.Offset, r.Digest = off, d
			}
		}
		if a.rejects[r.File][r.key()] {
			continue
		}
		r.Time = now
		b, _ := jsonLine(r)
		buf.Write(b)
		added = append(added, r)
		e.lg.Warn("line rejected", zap.String("agent", a.name), zap.String("file", r.File), zap.Int("line", r.Line), zap.String("reason", r.Reason))
	}
	if len(added) == 0 {
		return nil
	}
	path := e.layout.RejectsFile(a.name)
	if err := e.opts.Disk.Append(path, []byte(buf.String())); err != nil {
		return diskErr("record rejects", path, err)
	}
	for _, r := range added {
		if a.rejects[r.File] == nil {
			a.rejects[r.File] = map[string]bool{}
		}
		a.rejects[r.File][r.key()] = true
	}
	rep.Rejected += len(added)
	e.opts.Observer.Rejected(a.name, len(added))
	return nil
}

// dropRejects removes the rejects of the given journal files from a's
// rejects file (and any entry recorded twice): those files are read again
// from their start, or are gone.
func (e *Engine) dropRejects(a *agentSync, files map[string]bool) error {
	path := e.layout.RejectsFile(a.name)
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read rejects %s: %w", path, err)
	}
	if err := e.opts.Disk.WriteAtomic(path, withoutRejectsOf(data, files)); err != nil {
		return diskErr("drop rejects", path, err)
	}
	for f := range files {
		delete(a.rejects, f)
	}
	return nil
}

func (e *Engine) enqueue(a *agentSync, batch []Memory, rep *PassReport) error {
	path := e.layout.OutboxFile(a.name)
	data := encodeOutbox(batch, e.opts.Now().UTC())
	if err := e.opts.Disk.Append(path, data); err != nil {
		return diskErr("queue to outbox", path, err)
	}
	a.outboxSize += int64(len(data))
	rep.Queued += len(batch)
	return nil
}

// drain sends the outbox to the graph in order, a batch at a time.
func (e *Engine) drain(ctx context.Context, a *agentSync, rep *PassReport) {
	path := e.layout.OutboxFile(a.name)
	for a.outboxPending() && ctx.Err() == nil {
		batch, next, _, err := readOutbox(path, a.state.OutboxDone, e.opts.BatchSize)
		if err != nil {
			e.lg.Error("outbox unreadable: reading this agent's journals again from the start instead",
				zap.String("path", path), zap.Error(err))
			st := newState(e.opts.Graph.Identity())
			st.Generation = a.state.Generation
			if err := e.opts.Disk.Truncate(path); err != nil {
				e.agentFault(a, diskErr("reset outbox", path, err))
				return
			}
			a.outboxSize = 0
			if err := saveState(e.opts.Disk, e.layout.StateFile(a.name), st); err != nil {
				e.agentFault(a, err)
				return
			}
			a.state = st
			return
		}
		if len(batch) == 0 { // only a torn tail left; it was cut at load
			next = a.outboxSize
		}
		found, err := e.apply(ctx, batch)
		if err != nil {
			e.graphDown(err)
			return
		}
		var rejects []Reject
		others := map[string][]Reject{} // displaced lines of other agents' journals
		for _, r := range found {
			if r.agent == a.name || r.agent == "" {
				rejects = append(rejects, r.Reject)
			} else {
				others[r.agent] = append(others[r.agent], r.Reject)
			}
		}
		e.recovered(causeGraph)
		rep.projected(batch)
		e.projected(batch)
		if err := e.reject(a, rejects, rep); err != nil {
			e.agentFault(a, err)
			return
		}
		e.rejectFor(others, rep)
		st := a.state.clone()
		st.OutboxDone = next
		if next >= a.outboxSize {
			if err := e.opts.Disk.Truncate(path); err != nil {
				e.agentFault(a, diskErr("empty outbox", path, err))
				return
			}
			a.outboxSize, st.OutboxDone = 0, 0
			e.lg.Info("outbox drained", zap.String("agent", a.name))
		}
		if err := saveState(e.opts.Disk, e.layout.StateFile(a.name), st); err != nil {
			e.agentFault(a, err)
			return
		}
		a.state = st
	}
}

// mayTry says whether the graph may be written now (not paused, or the
// backoff delay has passed).
func (e *Engine) mayTry() bool { return !e.paused || !e.opts.Now().Before(e.retryAt) }

const (
	causeGraph = "graph unavailable"
	causeDisk  = "cannot write sync files"
)

func (e *Engine) graphDown(err error) {
	e.pauseFor(causeGraph, err)
}

// agentFault stops agent a after a failure to write its sync files: its
// cursors stay where they were (what was read is read again later,
// idempotently), the rest of its pass is dropped, and it is tried again on
// its own backoff. The other agents go on.
func (e *Engine) agentFault(a *agentSync, err error) {
	if a.faultOff == nil {
		a.faultOff = e.opts.NewBackOff()
	}
	d := a.faultOff.NextBackOff()
	if a.fault == nil {
		e.lg.Error(causeDisk+" of this agent: pausing it, the other agents go on",
			zap.String("agent", a.name), zap.Error(err), zap.Bool("disk_full", IsDiskFull(err)), zap.Duration("retry_in", d))
	} else {
		e.lg.Debug(causeDisk+" of this agent: still failing", zap.String("agent", a.name), zap.Error(err), zap.Duration("retry_in", d))
	}
	a.fault, a.retryAt, a.stalled = err, e.opts.Now().Add(d), true
}

// agentRecovered ends a's fault once a pass wrote its sync files.
func (e *Engine) agentRecovered(a *agentSync) {
	if a.fault == nil {
		return
	}
	e.lg.Info("resumed: this agent's sync files can be written again", zap.String("agent", a.name))
	a.fault, a.retryAt = nil, time.Time{}
	a.faultOff.Reset()
}

func (e *Engine) pauseFor(cause string, err error) {
	d := e.pause.NextBackOff()
	if !e.paused || e.cause != cause {
		e.lg.Error(cause+": pausing, records wait and will be retried",
			zap.Error(err), zap.Bool("disk_full", IsDiskFull(err)), zap.Duration("retry_in", d))
	} else {
		e.lg.Debug(cause+": still failing", zap.Error(err), zap.Duration("retry_in", d))
	}
	e.paused, e.cause, e.retryAt = true, cause, e.opts.Now().Add(d)
	e.pauseErr = err.Error()
}

// recovered ends a pause for cause ("" for any cause).
func (e *Engine) recovered(cause string) {
	if e.paused && (cause == "" || cause == e.cause) {
		e.lg.Info("resumed after " + e.cause)
		e.paused, e.cause = false, ""
		e.pause.Reset()
	}
}

// RetryAt is when a paused engine, or the first paused agent, is tried
// again (zero when nothing is paused).
func (e *Engine) RetryAt() time.Time {
	var at time.Time
	if e.paused {
		at = e.retryAt
	}
	now := e.opts.Now()
	for _, a := range e.snapshotAgents() {
		// A retry time that passed is left to the next poll: the agent
		// may be gone, and the timer must not spin.
		if a.fault != nil && a.retryAt.After(now) && (at.IsZero() || a.retryAt.Before(at)) {
			at = a.retryAt
		}
	}
	return at
}

func agentOf(layout Layout, path string) string {
	rel, err := filepath.Rel(layout.AgentsDir(), path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	name, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	if !journal.ValidAgent(name) {
		return ""
	}
	return name
}
