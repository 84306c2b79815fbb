package memsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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

// Status reads the journals, the sync files and the graph's counts; it
// works whether or not a daemon is running. Lag is the age of the oldest
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
	if h, held, err := RepoLockHolder(layout); err == nil && held {
		rep.Daemon = DaemonStatus{Running: true, PID: h.PID, Command: h.Command, Since: h.Since}
	}
	agents, err := layout.Agents()
	if err != nil {
		return rep, err
	}
	rep.Agents = []AgentStatus{}
	for _, a := range agents {
		st := AgentStatus{Agent: a, Projected: stats.ByAgent[a]}
		if err := EachRecord(layout, a, func(m Memory) error {
			st.JournalRecords++
			if m.TS.After(now) {
				st.Future++
				if m.TS.After(st.LastFuture) {
					st.LastFuture = m.TS.UTC()
				}
			}
			return nil
		}); err != nil {
			return rep, err
		}
		state, err := LoadState(layout.StateFile(a))
		if err != nil {
			state = newState("")
		}
		st.Outbox, _ = countLines(layout.OutboxFile(a), state.OutboxDone)
		if live, err := LiveRejects(layout, a); err == nil {
			st.Rejects = len(live)
		}
		st.Problem = syncProblem(layout, a)
		// Cursors that describe another graph, or a graph since emptied
		// (wiped, its store deleted), say nothing of what this one holds:
		// every record is pending until the daemon projects it again.
		if (rep.Graph.Reachable && state.Graph != "" && state.Graph != rep.Graph.Identity) ||
			graphLost(state, rep.Graph.Identity, func() bool { return rep.Graph.Reachable && stats.Memories == 0 }) {
			state = newState("")
		}
		oldest := oldestPending(layout, a, state)
		if !oldest.IsZero() && now.After(oldest) {
			st.LagSeconds = now.Sub(oldest).Seconds()
		}
		rep.Agents = append(rep.Agents, st)
	}
	if rep.Ignored, err = layout.Ignored(); err != nil {
		return rep, err
	}
	return rep, nil
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
