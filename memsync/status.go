package memsync

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/memsync/memsync/journal"
)

// AgentStatus is one agent's line of `memsync status`.
type AgentStatus struct {
	Agent          string  `json:"agent"`
	JournalRecords int     `json:"journal_records"`
	Projected      int     `json:"projected"`
	Outbox         int     `json:"outbox"`
	Rejects        int     `json:"rejects"`
	LagSeconds     float64 `json:"lag_seconds"`
}

// GraphStatus says which graph status was asked of and whether it answered.
type GraphStatus struct {
	Backend   string `json:"backend"`
	Identity  string `json:"identity"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// StatusReport is the document `memsync status --json` prints.
type StatusReport struct {
	Graph  GraphStatus   `json:"graph"`
	Agents []AgentStatus `json:"agents"`
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
	agents, err := layout.Agents()
	if err != nil {
		return rep, err
	}
	rep.Agents = []AgentStatus{}
	for _, a := range agents {
		st := AgentStatus{Agent: a, Projected: stats.ByAgent[a]}
		if err := EachRecord(layout, a, func(Memory) error { st.JournalRecords++; return nil }); err != nil {
			return rep, err
		}
		state, err := LoadState(layout.StateFile(a))
		if err != nil {
			state = newState("")
		}
		st.Outbox, _ = countLines(layout.OutboxFile(a), state.OutboxDone)
		st.Rejects, _ = countLines(layout.RejectsFile(a), 0)
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
