package memsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// A pass reads journals on one goroutine and writes the graph on another.
// The reader fills groups of up to BatchSize records, which may span many
// files and agents: at 500 appends a second spread over ten agents, one
// graph transaction per batch window instead of one per agent and file.
// It works one group ahead of the writer, so parsing the next group overlaps
// with the graph storing the current one. Cursors move only once a group is
// acknowledged by the graph (or safely in an outbox), one state write per
// agent and group.

// segment is what one read of one journal file produced for a group.
type segment struct {
	a       *agentSync
	rel     string
	from    int64 // the offset the read started at; 0: the file is read from its start
	batch   []Memory
	rejects []Reject
	next    Cursor
	// quiet: nothing was read and the cursor did not move; only the size
	// last seen changed, which is not worth a state write.
	quiet bool
}

// agentEnd closes an agent's part of a pass: its cursors for journal files
// that no longer exist (moved by compaction) are forgotten, so a new file of
// that name starts at zero.
type agentEnd struct {
	a    *agentSync
	seen map[string]bool
}

// group is one graph write's worth of segments, in reading order.
type group struct {
	segs    []*segment
	ends    []agentEnd
	records int
	rejects int
	// batch holds every segment's records, each segment's batch a part
	// of it in order, so that a group goes to the graph without a copy
	// (at 1M records the copies and the growth of each segment's own slice
	// were 2.4 of the rebuild's 8.2 GB allocated).
	batch []Memory
}

// add appends m to the group's records. The first record sizes the batch
// from the bytes left in its file (lines of at least 64 bytes, up to the
// batch size), so that a rebuild's group grows once and a daemon's single
// new record takes little.
func (g *group) add(m Memory, left int64, size int) {
	if len(g.batch) == cap(g.batch) {
		n := max(2*cap(g.batch), min(int(left/64)+1, size), 16)
		g.batch = slices.Grow(g.batch, min(n, size)-len(g.batch))
	}
	g.batch = append(g.batch, m)
}

func (g *group) empty() bool { return len(g.segs) == 0 && len(g.ends) == 0 }

// syncAgents makes one pass over the named agents: outboxes first (when the
// graph may be tried), then every journal past its cursor. An agent that
// cannot be loaded or read is skipped and its error returned at the end,
// after the others were synced.
func (e *Engine) syncAgents(ctx context.Context, names []string, rep *PassReport) error {
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
		e.lg.Error("sync agent", zap.Error(err))
	}
	e.agentReads.Add(int64(len(names)))
	defer func() {
		if ctx.Err() == nil {
			e.writeSummary(names)
		}
	}()
	var agents []*agentSync
	now := e.opts.Now()
	gen, genKnown := e.generation(ctx)
	for _, name := range names {
		if ctx.Err() != nil {
			return firstErr
		}
		a, err := e.agent(name)
		if err != nil {
			keep(fmt.Errorf("agent %s: %w", name, err))
			continue
		}
		if a.fault != nil && now.Before(a.retryAt) {
			continue // its sync files could not be written: it waits for its retry
		}
		if genKnown && a.state.Generation != gen {
			if err := e.newGeneration(a, gen); err != nil {
				e.agentFault(a, err)
				continue
			}
		}
		a.stalled = false
		if a.outboxPending() && e.mayTry() {
			e.drain(ctx, a, rep)
		}
		if !a.stalled {
			agents = append(agents, a)
		}
	}
	defer func() {
		if ctx.Err() != nil {
			return
		}
		for _, a := range agents {
			if !a.stalled {
				e.agentRecovered(a) // its sync files took every write of a pass
			}
		}
	}()
	// The reader starts from a copy of the cursors: the writer replaces
	// each agent's state as groups land.
	starts := make([]map[string]Cursor, len(agents))
	for i, a := range agents {
		starts[i] = a.state.clone().Files
	}
	// Before the agents recover and the summary is written (the deferred
	// calls above run after this one): both speak of durable cursors.
	defer e.saveDueCursors()
	rctx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	// Unbuffered: the reader holds the next group ready while the writer
	// stores one, and no third group waits in the channel (at 1M records
	// in batches of 8,000 the third held about 10 MB of the heap, parsing
	// being four times as fast as storing, so nothing waited for it).
	groups := make(chan *group)
	readErrs := make(chan error, 1)
	go func() {
		defer close(groups)
		readErrs <- e.read(rctx, agents, starts, groups)
	}()
	for g := range groups {
		err := errStop // cancelled: what was read ahead stays unread
		if ctx.Err() == nil {
			err = e.flushGroup(ctx, g, rep)
		}
		if err != nil {
			stopReading()
			for range groups { // let the reader finish; what it read stays unread
			}
			<-readErrs
			if !errors.Is(err, errStop) {
				keep(err)
			}
			return firstErr
		}
	}
	if err := <-readErrs; err != nil {
		keep(err)
	}
	return firstErr
}

// read fills groups from every agent's journals and sends each full one; it
// returns the first agent's read error (that agent's remaining files are
// skipped, the other agents are read).
//
// Files are read day by day across agents (each agent's own files keep
// their order: archive before journal), unless the graph asks for ByAgent:
// a catch-up or a rebuild then offers records roughly in time order, so
// that uuids, which start with their time, land in the graph's uuid-keyed
// indexes next to each other rather than all over them (on the embedded
// store, agent after agent rewrote about four times more pages).
func (e *Engine) read(ctx context.Context, agents []*agentSync, starts []map[string]Cursor, out chan<- *group) error {
	r := &groupReader{e: e, ctx: ctx, out: out, cur: &group{}, emb: graphEmbedder(e.opts.Graph)}
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	var all []journalFile
	left := make([]int, len(agents)) // files not read yet, per agent
	seen := make([]map[string]bool, len(agents))
	failed := make([]bool, len(agents))
	for i, a := range agents {
		files, err := e.journalFiles(a.name)
		if err != nil {
			keep(fmt.Errorf("agent %s: list journals: %w", a.name, err))
			failed[i] = true
			continue
		}
		seen[i] = map[string]bool{}
		left[i] = len(files)
		all = appendFiles(all, i, files)
		if len(files) == 0 {
			r.cur.ends = append(r.cur.ends, agentEnd{a: a, seen: seen[i]})
		}
	}
	sortFiles(all, readOrder(e.opts.Graph))
	for _, p := range all {
		if ctx.Err() != nil {
			return firstErr
		}
		i, a := p.agent, agents[p.agent]
		if failed[i] {
			continue
		}
		rel := e.layout.Rel(p.path)
		seen[i][rel] = true
		if err := r.file(a, p.path, rel, starts[i][rel]); err != nil {
			if errors.Is(err, errStop) {
				return firstErr
			}
			keep(fmt.Errorf("agent %s: %w", a.name, err))
			failed[i] = true
			continue
		}
		if left[i]--; left[i] == 0 {
			r.cur.ends = append(r.cur.ends, agentEnd{a: a, seen: seen[i]})
		}
	}
	if !r.cur.empty() && ctx.Err() == nil {
		select {
		case out <- r.cur:
		case <-ctx.Done():
		}
	}
	return firstErr
}

// journalFile is one journal file of the agent at index agent, the seq-th
// in that agent's own order (archive before journal, by name).
type journalFile struct {
	day, path string
	agent     int
	seq       int
}

func appendFiles(all []journalFile, agent int, files []string) []journalFile {
	for j, path := range files {
		all = append(all, journalFile{day: filepath.Base(path), path: path, agent: agent, seq: j})
	}
	return all
}

// readOrder is the order g asks for, ByDay by default.
func readOrder(g Graph) ReadOrder {
	if o, ok := g.(ReadOrderer); ok {
		return o.ReadOrder()
	}
	return ByDay
}

// sortFiles puts files (appended agent after agent) in the order a pass
// reads them.
func sortFiles(files []journalFile, order ReadOrder) {
	if order == ByDay {
		slices.SortFunc(files, func(x, y journalFile) int {
			return cmp.Or(strings.Compare(x.day, y.day), cmp.Compare(x.agent, y.agent), cmp.Compare(x.seq, y.seq))
		})
	}
}

// readerYieldEvery is how many records the journal reader parses between
// yields of its processor (runtime.Gosched). The reader runs a group ahead
// of the graph's writer, which is a projection's critical path; on a busy
// host a writer that becomes runnable could otherwise wait up to the
// scheduler's 10 ms time slice behind it (graph/embedded's indexer yields
// for the same reason).
const readerYieldEvery = 64

// groupReader reads journal lines into the group being filled.
type groupReader struct {
	e   *Engine
	ctx context.Context
	out chan<- *group
	cur *group
	emb Embedder // the graph's (VectorGraph); nil: records are not embedded here
}

// send hands the full group to the writer and starts a new one; errStop
// when the pass is over.
func (r *groupReader) send() error {
	select {
	case r.out <- r.cur:
		r.cur = &group{}
		return nil
	case <-r.ctx.Done():
		return errStop
	}
}

func (r *groupReader) full() bool {
	n := r.e.batchSize()
	return r.cur.records >= n || r.cur.rejects >= n
}

// file reads the complete lines of one journal past cur into groups.
func (r *groupReader) file(a *agentSync, path, rel string, cur Cursor) error {
	f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	id := statID(fi)
	known := !cur.isZero()
	if known && cur.Size == id.size && cur.ModTime.Equal(id.modTime) && cur.Inode == id.inode {
		return nil // nothing changed since the last look
	}
	if known {
		ok, err := stillValid(f, cur, id)
		if err != nil {
			return fmt.Errorf("check %s: %w", rel, err)
		}
		if !ok {
			r.e.lg.Warn("journal was truncated or rewritten: reading it again from the start",
				zap.String("path", rel), zap.Int64("cursor", cur.Offset), zap.Int64("size", id.size))
			cur = Cursor{}
		}
	}
	if _, err := f.Seek(cur.Offset, io.SeekStart); err != nil {
		return fmt.Errorf("seek %s: %w", rel, err)
	}
	jr := journal.NewReader(f, cur.Offset, cur.Line)
	tally, firstLine := r.e.opts.Tally, cur.Line
	// What status counts (Cursor.Records, Future) is carried from cursor
	// to cursor; a cursor made before memsync counted stays uncounted.
	counted, records, future, now := cur.Offset == 0 || cur.Counted, cur.Records, slices.Clone(cur.Future), r.e.opts.Now()
	for {
		if r.ctx.Err() != nil {
			return errStop
		}
		seg := &segment{a: a, rel: rel, from: cur.Offset}
		first := len(r.cur.batch)
		eof := false
		for !r.full() {
			l, err := jr.Next()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return fmt.Errorf("read %s: %w", rel, err)
			}
			var notOwned error // the agent field or the uuid names another agent
			if l.Err == nil {
				notOwned = journal.CheckOwner(&l.Record, a.name)
			}
			switch {
			case l.Err != nil, notOwned != nil:
				rj := Reject{File: rel, Line: l.Number, Offset: l.Offset}
				if l.Err != nil {
					rj.Reason = l.Err.Error()
				} else {
					rj.UUID, rj.Reason = l.Record.UUID, notOwned.Error()
				}
				if rj.Digest, err = LineDigest(f, l.Offset); err != nil {
					return fmt.Errorf("read %s: %w", rel, err)
				}
				seg.rejects = append(seg.rejects, rj)
				r.cur.rejects++
				if tally != nil {
					tally.line(&l, notOwned, nil)
				}
			default:
				if r.cur.records%readerYieldEvery == readerYieldEvery-1 {
					runtime.Gosched() // see readerYieldEvery
				}
				m := Memory{Record: l.Record, Path: rel, Line: l.Number}
				m.Encode()
				if r.emb != nil {
					m.Embed(r.emb)
				}
				if tally != nil {
					tally.line(&l, nil, &m)
				}
				r.cur.add(m, id.size-l.End, r.e.batchSize())
				r.cur.records++
				records++
				if l.Record.TS.After(now) {
					future = addFuture(future, l.Record.TS)
				}
			}
		}
		if n := len(r.cur.batch); n > first {
			seg.batch = r.cur.batch[first:n:n]
		}
		seg.next = Cursor{Offset: jr.Offset(), Line: jr.LineNumber()}
		if counted {
			seg.next.Counted, seg.next.Records, seg.next.Future = true, records, slices.Clone(future)
		}
		if err := stamp(f, &seg.next, id); err != nil {
			return fmt.Errorf("stamp %s: %w", rel, err)
		}
		if !eof {
			// Lines remain past this group: the size seen at open must not
			// let a later look skip the file as unchanged.
			seg.next.Size, seg.next.ModTime = -1, time.Time{}
		}
		seg.quiet = len(seg.batch) == 0 && len(seg.rejects) == 0 && seg.next.Offset == cur.Offset
		r.cur.segs = append(r.cur.segs, seg)
		cur = seg.next
		if eof {
			if tally != nil {
				tally.read(rel, jr.LineNumber()-firstLine)
			}
			return nil
		}
		if err := r.send(); err != nil {
			return err
		}
	}
}

// flushGroup makes a group durable — its rejects recorded, its records in
// the graph in one write (or, for agents whose outbox is pending or while
// the graph is paused, in their outboxes) — and only then moves the
// cursors, one atomic state write per agent. A failure to write one
// agent's sync files stalls that agent alone (agentFault): its segments,
// here and for the rest of the pass, are dropped and its cursors stay.
func (e *Engine) flushGroup(ctx context.Context, g *group, rep *PassReport) error {
	for _, s := range g.segs {
		if s.a.stalled {
			continue
		}
		// A file read again from its start has its rejects found again:
		// the old ones (at old offsets, or of lines since mended) go first.
		if s.from == 0 && len(s.a.rejects[s.rel]) > 0 {
			if err := e.dropRejects(s.a, map[string]bool{s.rel: true}); err != nil {
				e.agentFault(s.a, err)
				continue
			}
		}
		if err := e.reject(s.a, s.rejects, rep); err != nil {
			e.agentFault(s.a, err)
		}
	}
	// An agent's records wait in its outbox while the outbox is pending
	// (order) or the graph is paused; the rest go in one write.
	viaOutbox := map[*agentSync]bool{}
	n := 0 // records in the one write
	for _, s := range g.segs {
		if len(s.batch) == 0 || s.a.stalled {
			continue
		}
		if s.a.outboxPending() || !e.mayTry() {
			viaOutbox[s.a] = true
		} else {
			n += len(s.batch)
		}
	}
	direct := g.batch[:n:n] // every record goes in it (the common case): no copy
	if n != len(g.batch) {
		direct = make([]Memory, 0, n)
		for _, s := range g.segs {
			if len(s.batch) > 0 && !s.a.stalled && !viaOutbox[s.a] {
				direct = append(direct, s.batch...)
			}
		}
	}
	if len(direct) > 0 {
		rejects, err := e.apply(ctx, direct)
		if err != nil {
			e.graphDown(err)
			for _, s := range g.segs {
				viaOutbox[s.a] = viaOutbox[s.a] || (len(s.batch) > 0 && !s.a.stalled)
			}
		} else {
			e.recovered(causeGraph)
			rep.projected(direct)
			if e.opts.Progress != nil {
				e.opts.Progress(len(direct))
			}
			byAgent := map[string][]Reject{}
			for _, rj := range rejects {
				byAgent[rj.agent] = append(byAgent[rj.agent], rj.Reject)
			}
			e.projected(direct)
			for _, s := range g.segs {
				if rs := byAgent[s.a.name]; len(rs) > 0 {
					delete(byAgent, s.a.name)
					if err := e.reject(s.a, rs, rep); err != nil {
						e.agentFault(s.a, err)
					}
				}
			}
			// A line displaced from another agent's journal (a uuid clash
			// across agents) is that agent's reject.
			e.rejectFor(byAgent, rep)
		}
	}
	// Each waiting agent's records go to its outbox in one append, in order.
	queued := map[*agentSync][]Memory{}
	var order []*agentSync
	for _, s := range g.segs {
		if len(s.batch) == 0 || !viaOutbox[s.a] || s.a.stalled {
			continue
		}
		if queued[s.a] == nil {
			order = append(order, s.a)
		}
		queued[s.a] = append(queued[s.a], s.batch...)
	}
	for _, a := range order {
		if err := e.enqueue(a, queued[a], rep); err != nil {
			e.agentFault(a, err)
		}
	}
	e.moveCursors(g)
	return nil
}

// moveCursors writes each agent's new cursors once its group is durable,
// and drops the rejects of its journal files that are gone; a stalled
// agent's stay as they were.
func (e *Engine) moveCursors(g *group) {
	next := map[*agentSync]*State{}
	write := map[*agentSync]bool{}
	var order []*agentSync
	state := func(a *agentSync) *State {
		if next[a] == nil {
			next[a] = a.state.clone()
			order = append(order, a)
		}
		return next[a]
	}
	for _, s := range g.segs {
		if s.a.stalled {
			continue
		}
		state(s.a).Files[s.rel] = s.next
		if !s.quiet {
			write[s.a] = true
		}
	}
	for _, end := range g.ends {
		if end.a.stalled {
			continue
		}
		st := state(end.a)
		for rel := range st.Files {
			if !end.seen[rel] {
				delete(st.Files, rel)
			}
		}
		gone := map[string]bool{}
		for rel := range end.a.rejects {
			if !end.seen[rel] {
				gone[rel] = true
			}
		}
		if len(gone) > 0 {
			if err := e.dropRejects(end.a, gone); err != nil {
				e.agentFault(end.a, err)
			}
		}
	}
	for _, a := range order {
		if a.stalled {
			continue
		}
		st := next[a]
		if write[a] {
			st.Updated = e.opts.Now().UTC()
			if e.holdCursors {
				if !a.unsaved {
					a.unsaved = true
					e.held = append(e.held, a)
				}
			} else if !a.due {
				a.due, a.durable = true, a.state // st is a clone: a.state stays as written
				e.due = append(e.due, a)
			}
		}
		a.state = st
	}
	if time.Since(e.savedAt) >= cursorSaveEvery {
		e.saveDueCursors()
	}
}

// cursorSaveEvery is how often a pass writes the cursors it moved. The
// graph holds every group before its cursors move, so cursors written
// late only make a crash read again what the graph already holds (a no-op
// to project); written after every group, a catch-up of 1,000 agents'
// 100 day files wrote each agent's state a hundred times, 41 % of its CPU.
const cursorSaveEvery = 5 * time.Second

// saveDueCursors writes the state of every agent whose cursors moved
// since they were last written, each durably and in parallel. An agent
// whose state cannot be written is faulted (agentFault: it waits for its
// retry) and goes back to its state as last written, as if this pass had
// not read it: the status does not count what its cursors cannot hold,
// and its retry reads those records again (the graph has them: a no-op).
func (e *Engine) saveDueCursors() {
	e.savedAt = time.Now()
	if len(e.due) == 0 {
		return
	}
	due := e.due
	e.due = nil
	failed := e.saveStates(due)
	for i, a := range due {
		if i < len(failed) && failed[i] != nil {
			e.agentFault(a, failed[i])
			a.state = a.durable
		}
		a.due, a.durable = false, nil
	}
}
