package memsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/memsync/memsync/journal"
)

// AgentStatus is one agent's line of `memsync status`.
type AgentStatus struct {
	Agent          string  `json:"agent"`
	JournalRecords int     `json:"journal_records"`
	Projected      int     `json:"projected"`
	Outbox         int     `json:"outbox"`
	Rejects        int     `json:"rejects"` // distinct live rejects (LiveRejects)
	LagSeconds     float64 `json:"lag_seconds"`
	// Future counts the agent's records dated after the status's clock
	// (another host's clock runs ahead, a typo): reads at the present see
	// them with age zero (SPEC §7 "The clock"); NextFuture is the latest
	// such ts, so a person can tell drift from a typo.
	Future     int       `json:"future_dated"`
	LastFuture time.Time `json:"future_latest,omitzero"`
	// Problem says what keeps this agent from being projected, when
	// something does (its sync files cannot be written); empty otherwise.
	Problem string `json:"problem,omitempty"`
}

// GraphStatus says which graph status was asked of and whether it answered.
type GraphStatus struct {
	Backend   string `json:"backend"`
	Identity  string `json:"identity"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// DaemonStatus says whether a process holds the repository's daemon lock.
type DaemonStatus struct {
	Running bool `json:"running"`
	// PID, Command and Since are the holder's when Running.
	PID     int       `json:"pid,omitempty"`
	Command string    `json:"command,omitempty"` // "run" for the daemon
	Since   time.Time `json:"since,omitzero"`
}

// StatusReport is the document `memsync status --json` prints.
type StatusReport struct {
	Graph  GraphStatus   `json:"graph"`
	Daemon DaemonStatus  `json:"daemon"`
	Agents []AgentStatus `json:"agents"`
	// AutoCommit is "paused: <why>" while git commits are put off because
	// HEAD is not on a branch; empty otherwise. The command fills it in.
	AutoCommit string `json:"auto_commit,omitempty"`
	// Ignored is what memsync does not read under agents/ (Layout.Ignored).
	Ignored []IgnoredPath `json:"ignored,omitempty"`
}

// Status reads the daemon's summary (Summary), the sync files and the
// graph's counts; it works whether or not a daemon is running. An agent
// the summary does not describe (no daemon yet, a file created since, an
// append) is read from its cursors: a stat of each journal and a read of
// the bytes past each cursor (the whole file when its cursor was made
// before cursors counted records). It never parses what the daemon
// parsed already. Lag is the age of the oldest
// record not yet in the graph (waiting in a journal or in the outbox).
func Status(ctx context.Context, root string, g Graph, backend string, now time.Time) (StatusReport, error) {
	layout := Layout{Root: root}
	rep := StatusReport{Graph: GraphStatus{Backend: backend, Identity: g.Identity()}}
	stats, err := g.Stats(ctx)
	if err != nil {
		rep.Graph.Error = err.Error()
	} else {
		rep.Graph.Reachable = true
	}
	gen, genKnown := "", false
	if gg, ok := g.(Generations); ok && rep.Graph.Reachable {
		var err error
		gen, err = gg.Generation(ctx)
		genKnown = err == nil
	}
	if h, held, err := RepoLockHolder(layout); err == nil && held {
		rep.Daemon = DaemonStatus{Running: true, PID: h.PID, Command: h.Command, Since: h.Since}
	}
	agents, err := layout.Agents()
	if err != nil {
		return rep, err
	}
	rep.Agents = []AgentStatus{}
	sum, haveSum := LoadSummary(layout)
	if !haveSum || sum.Graph != rep.Graph.Identity {
		sum = &Summary{} // none, or the daemon's summary is of another graph
	}
	// Cursors that describe another graph, a graph since emptied (wiped,
	// its store deleted) or dropped and rebuilt (another generation, maybe
	// by another host), say nothing of what this one holds: every record
	// is pending until the daemon projects it again.
	stale := func(graph, generation string, files int) bool {
		return (rep.Graph.Reachable && graph != "" && graph != rep.Graph.Identity) ||
			(genKnown && files > 0 && generation != gen) ||
			(graph == rep.Graph.Identity && files > 0 && rep.Graph.Reachable && stats.Memories == 0)
	}
	for _, a := range agents {
		st := AgentStatus{Agent: a, Projected: stats.ByAgent[a]}
		var future []time.Time
		var oldest time.Time
		if s, ok := sum.Agents[a]; ok && !stale(sum.Graph, s.Generation, s.Files) {
			if fresh, grown := s.fresh(layout, a); fresh {
				// The daemon's summary, and the lines the newest journal
				// gained since: no other journal is opened.
				st.JournalRecords, st.Outbox, future, oldest = s.Records, s.Outbox, s.Future, s.Oldest
				if grown != "" {
					var tail agentScan
					if _, err := tail.read(grown, a, s.LastEnd, s.LastEnd, now); err != nil {
						return rep, err
					}
					st.JournalRecords += tail.records
					future = append(slices.Clone(future), tail.future...)
					if !tail.oldest.IsZero() && (oldest.IsZero() || tail.oldest.Before(oldest)) {
						oldest = tail.oldest
					}
				}
				st.finish(layout, future, oldest, now)
				rep.Agents = append(rep.Agents, st)
				continue
			}
		}
		state, err := LoadState(layout.StateFile(a))
		if err != nil {
			state = newState("")
		}
		st.Outbox, _ = countLines(layout.OutboxFile(a), state.OutboxDone)
		if stale(state.Graph, state.Generation, len(state.Files)) {
			state = newState("")
		}
		// From the cursors: a stat of each journal, and a read of what
		// lies past each (and of a file whose cursor does not count).
		sc, err := scanAgent(layout, a, state, now)
		if err != nil {
			return rep, err
		}
		st.JournalRecords, future, oldest = sc.records, sc.future, sc.oldest
		if _, _, queued, err := readOutbox(layout.OutboxFile(a), state.OutboxDone, 1); err == nil && !queued.IsZero() &&
			(oldest.IsZero() || queued.Before(oldest)) {
			oldest = queued
		}
		st.finish(layout, future, oldest, now)
		rep.Agents = append(rep.Agents, st)
	}
	if rep.Ignored, err = layout.Ignored(); err != nil {
		return rep, err
	}
	return rep, nil
}

// finish fills st's future-dated records, rejects, problem and lag.
func (st *AgentStatus) finish(layout Layout, future []time.Time, oldest, now time.Time) {
	for _, t := range future {
		if t.After(now) {
			st.Future++
			if t.After(st.LastFuture) {
				st.LastFuture = t.UTC()
			}
		}
	}
	if live, err := LiveRejects(layout, st.Agent); err == nil {
		st.Rejects = len(live)
	}
	st.Problem = syncProblem(layout, st.Agent)
	if !oldest.IsZero() && now.After(oldest) {
		st.LagSeconds = now.Sub(oldest).Seconds()
	}
}

// oldestPending is the ts of the oldest record past a cursor, or the queue
// time of the outbox's first entry, whichever is older.
func oldestPending(layout Layout, agent string, state *State) time.Time {
	var oldest time.Time
	older := func(t time.Time) {
		if !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	if _, _, queued, err := readOutbox(layout.OutboxFile(agent), state.OutboxDone, 1); err == nil {
		older(queued)
	}
	files, _ := layout.JournalFiles(agent)
	for _, path := range files {
		cur := state.Files[layout.Rel(path)]
		fi, err := os.Stat(path)
		if err != nil || fi.Size() <= cur.Offset {
			continue
		}
		f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		if _, err := f.Seek(cur.Offset, io.SeekStart); err == nil {
			r := journal.NewReader(f, cur.Offset, cur.Line)
			for {
				l, err := r.Next()
				if err != nil {
					break
				}
				if l.Err == nil {
					older(l.Record.TS)
					break
				}
			}
		}
		f.Close()
	}
	return oldest
}

// graphLost says whether the graph behind cursors that say records were
// projected into it holds none (it was wiped, or its store deleted): the
// cursors must not be trusted, and the journals are projected again.
func graphLost(st *State, identity string, graphEmpty func() bool) bool {
	return st.Graph == identity && len(st.Files) > 0 && graphEmpty()
}

// syncProblem says why agent's sync files cannot be written by this
// process ("" when they can): the engine then stops that agent alone.
func syncProblem(layout Layout, agent string) string {
	dir := layout.SyncDir(agent)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "" // made at the first write
	case err != nil:
		return fmt.Sprintf("sync files: %v", err)
	case !fi.IsDir():
		return fmt.Sprintf("sync files: %s is not a directory", layout.Rel(dir))
	}
	if err := syscall.Access(dir, unixWriteOK); err != nil {
		return fmt.Sprintf("sync files: %s is not writable: %v", layout.Rel(dir), err)
	}
	for _, p := range []string{layout.StateFile(agent), layout.OutboxFile(agent), layout.RejectsFile(agent)} {
		if err := syscall.Access(p, unixWriteOK); err != nil && !errors.Is(err, syscall.ENOENT) {
			return fmt.Sprintf("sync files: %s is not writable: %v", layout.Rel(p), err)
		}
	}
	return ""
}

// unixWriteOK is access(2)'s W_OK.
const unixWriteOK = 0x2
