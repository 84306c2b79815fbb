package memsync

import (
	"time"
)

// Observer is told what the engine does, for monitoring (the daemon's
// Prometheus metrics implement it). The engine owns the interface and knows
// nothing of what is behind it: data flows from the engine out, never back.
// Methods are called on the engine's goroutines, one at a time per engine,
// and must return quickly.
type Observer interface {
	// GraphWrite reports one write of batch to the graph and how long it
	// took; err is nil when the graph acknowledged it (the records are
	// projected) and wraps ErrUnavailable when the graph could not be
	// reached (the records wait in an outbox).
	GraphWrite(batch []Memory, took time.Duration, err error)
	// Rejected reports n new rejects recorded for agent's journals.
	Rejected(agent string, n int)
	// Pass reports the end of a daemon pass: how long it took, whether the
	// graph is reachable as far as the engine knows (and why not), and
	// every known agent's backlog.
	Pass(took time.Duration, graph GraphHealth, backlog []AgentBacklog)
}

// GraphHealth is whether the engine can write the graph.
type GraphHealth struct {
	Reachable bool
	Reason    string // why not, when not reachable
}

// AgentBacklog is what of one agent waits for the graph.
type AgentBacklog struct {
	Agent string
	// Outbox is the number of outbox entries (batches) not yet in the graph.
	Outbox int
	// LagSeconds is the age of the oldest record not yet projected; 0 when
	// caught up.
	LagSeconds float64
}

// nopObserver is the Observer when none is given.
type nopObserver struct{}

func (nopObserver) GraphWrite([]Memory, time.Duration, error)       {}
func (nopObserver) Rejected(string, int)                            {}
func (nopObserver) Pass(time.Duration, GraphHealth, []AgentBacklog) {}

// health is the engine's view of the graph.
func (e *Engine) health(lost error) GraphHealth {
	switch {
	case lost != nil:
		return GraphHealth{Reason: "graph store lost: " + lost.Error()}
	case e.paused && e.cause == causeGraph:
		return GraphHealth{Reason: e.cause + ": " + e.pauseErr}
	}
	return GraphHealth{Reachable: true}
}

// backlog is every known agent's outbox and lag as of now.
func (e *Engine) backlog() []AgentBacklog {
	now := e.opts.Now()
	var out []AgentBacklog
	for _, a := range e.snapshotAgents() {
		b := AgentBacklog{Agent: a.name}
		if a.outboxPending() {
			b.Outbox, _ = countLines(e.layout.OutboxFile(a.name), a.state.OutboxDone)
		}
		if oldest := oldestPending(e.layout, a.name, a.state); !oldest.IsZero() {
			b.LagSeconds = max(now.Sub(oldest).Seconds(), 0)
		}
		out = append(out, b)
	}
	return out
}

// observePass tells the Observer that a pass that began at start ended
// (lost: the graph's store vanished). The backlog costs a look at every
// journal file, so it is measured only for a real Observer.
func (e *Engine) observePass(start time.Time, lost error) {
	if _, none := e.opts.Observer.(nopObserver); none {
		return
	}
	e.opts.Observer.Pass(time.Since(start), e.health(lost), e.backlog())
}
