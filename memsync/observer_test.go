package memsync_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// recorder is an Observer that keeps what it was told.
type recorder struct {
	mu       sync.Mutex
	written  map[string]int // records acknowledged, by agent
	failures int
	rejects  map[string]int
	passes   int
	health   memsync.GraphHealth
	backlog  map[string]memsync.AgentBacklog
}

func (r *recorder) GraphWrite(batch []memsync.Memory, _ time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.failures++
		return
	}
	for _, m := range batch {
		r.written[m.Agent]++
	}
}

func (r *recorder) Rejected(agent string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejects[agent] += n
}

func (r *recorder) Pass(_ time.Duration, h memsync.GraphHealth, backlog []memsync.AgentBacklog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.passes++
	r.health = h
	for _, b := range backlog {
		r.backlog[b.Agent] = b
	}
}

func (r *recorder) check(fn func(r *recorder) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fn(r)
}

// TestObserverSeesWhatTheEngineDoes: writes, rejects, passes, the graph
// going away (outbox depth, lag, health) and coming back.
func TestObserverSeesWhatTheEngineDoes(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	obs := &recorder{written: map[string]int{}, rejects: map[string]int{}, backlog: map[string]memsync.AgentBacklog{}}
	e, err := memsync.New(memsync.Options{
		Root: r.root, Graph: r.g, Logger: zaptest.NewLogger(t), BatchSize: 50,
		PollInterval: 20 * time.Millisecond, BatchWindow: 5 * time.Millisecond,
		NewBackOff: func() backoffT { return fastBackOff() }, Observer: obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	r.appendN("alice", 120)
	r.write("bob", "2026-11-21.jsonl", "not json\n")
	waitFor(t, func() bool {
		return obs.check(func(o *recorder) bool {
			return o.written["alice"] == 120 && o.rejects["bob"] == 1 && o.passes > 0 && o.health.Reachable &&
				o.backlog["alice"].Outbox == 0 && o.backlog["alice"].LagSeconds == 0
		})
	})

	r.g.SetDown(true)
	r.appendN("alice", 10)
	waitFor(t, func() bool {
		return obs.check(func(o *recorder) bool {
			return o.failures > 0 && !o.health.Reachable && o.health.Reason != "" &&
				o.backlog["alice"].Outbox > 0 && o.backlog["alice"].LagSeconds > 0
		})
	})

	r.g.SetDown(false)
	waitFor(t, func() bool {
		return obs.check(func(o *recorder) bool {
			return o.written["alice"] == 130 && o.health.Reachable && o.backlog["alice"].Outbox == 0
		})
	})
}
