package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// The daemon's defaults (cmd/internal/cmdline/config.go): the latency run uses them.
const (
	daemonBatchWindow  = 50 * time.Millisecond
	daemonPollInterval = time.Second
)

// latencyResult is one append → visible run.
type latencyResult struct {
	p50, p99, max time.Duration
	records       int
	rate          float64 // records/s the appenders achieved
}

// appendToVisible runs memsync.Engine.Run on a fresh repository of agents
// agents while appenders call journal.Append (fsync on, uuid allocated, as
// `memsync append` does) at rate records/s for dur, round-robin over the
// agents; a poller asks g.Get every couple of milliseconds for the records
// not seen yet. A record's latency is from the moment its Append returned
// (the line is in the file) to the end of the first Get that returned it.
func appendToVisible(ctx context.Context, g memsync.Graph, tmp string, agents, rate int, dur time.Duration, seed int64) (latencyResult, error) {
	var res latencyResult
	repo, err := os.MkdirTemp(tmp, "latency-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(repo)
	layout := memsync.Layout{Root: repo}
	gen := newGenerator(seed, agents, false)
	for _, a := range gen.agents {
		if err := os.MkdirAll(layout.JournalDir(a), 0o755); err != nil {
			return res, err
		}
	}
	eng, err := memsync.New(memsync.Options{Root: repo, Graph: g, BatchSize: engineBatch,
		BatchWindow: daemonBatchWindow, PollInterval: daemonPollInterval})
	if err != nil {
		return res, err
	}
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- eng.Run(runCtx) }()
	defer func() {
		stopRun()
		<-runDone
	}()
	time.Sleep(300 * time.Millisecond) // the first pass over the empty repository

	var (
		mu       sync.Mutex
		pending  = map[string]time.Time{}
		lat      []float64
		appendEr error
	)
	total := int(float64(rate) * dur.Seconds())
	jobs := make(chan memsync.Memory, 64)
	var workers sync.WaitGroup
	for w := 0; w < 4; w++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for m := range jobs {
				rec := m.Record
				rec.UUID, rec.TS = "", time.Time{}
				rec.Links, rec.Supersedes, rec.ConflictsWith = nil, nil, nil
				if _, err := journal.Append(layout.JournalDir(rec.Agent), &rec, journal.AppendOptions{SequenceFile: layout.SequenceFile(rec.Agent)}); err != nil {
					mu.Lock()
					appendEr = errors.Join(appendEr, err)
					mu.Unlock()
					continue
				}
				done := time.Now()
				mu.Lock()
				pending[rec.UUID] = done
				mu.Unlock()
			}
		}()
	}
	appending := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(appending)
		interval := time.Second / time.Duration(rate)
		for i := 0; i < total; i++ {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
			jobs <- gen.nextMemory()
		}
		close(jobs)
		workers.Wait()
	}()

	var pollErr error
	finished := false
	var doneAt time.Time
	for {
		select {
		case <-appending:
			if doneAt.IsZero() {
				doneAt = time.Now()
				res.rate = float64(total) / doneAt.Sub(start).Seconds()
			}
			finished = true
		default:
		}
		mu.Lock()
		ids := make([]string, 0, len(pending))
		for id := range pending {
			ids = append(ids, id)
		}
		mu.Unlock()
		if len(ids) == 0 {
			if finished {
				break
			}
			time.Sleep(time.Millisecond)
			continue
		}
		got, err := g.Get(ctx, ids)
		seen := time.Now()
		if err != nil {
			pollErr = err
			break
		}
		mu.Lock()
		for id := range got {
			if at, ok := pending[id]; ok {
				lat = append(lat, float64(seen.Sub(at))/float64(time.Millisecond))
				delete(pending, id)
			}
		}
		left := len(pending)
		mu.Unlock()
		if finished && time.Since(doneAt) > 30*time.Second {
			pollErr = fmt.Errorf("%d appended records not visible 30s after the last append", left)
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := errors.Join(appendEr, pollErr); err != nil {
		return res, err
	}
	res.records = len(lat)
	res.p50 = time.Duration(percentile(lat, 50) * float64(time.Millisecond))
	res.p99 = time.Duration(percentile(lat, 99) * float64(time.Millisecond))
	res.max = time.Duration(percentile(lat, 100) * float64(time.Millisecond))
	return res, nil
}

// appendWall execs `memsync append` calls times into a fresh repository
// (fsync on, the default) and returns each call's wall time in ms, from
// fork to exit; extra goes on every call's command line.
func appendWall(ctx context.Context, bin, tmp string, calls int, seed int64, extra ...string) ([]float64, error) {
	repo, err := os.MkdirTemp(tmp, "append-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(repo)
	if out, err := exec.CommandContext(ctx, bin, "init", "--repo", repo, "--agent", "planner-01").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("memsync init: %v: %s", err, out)
	}
	gen := newGenerator(seed, 1, false)
	seeded, err := seedRecent(repo, "planner-01", gen, gateRecent)
	if err != nil {
		return nil, err
	}
	times := make([]float64, 0, calls)
	for i := 0; i < calls; i++ {
		m := gen.nextMemory()
		if m.Kind.Memsync() {
			m.Kind = journal.KindFact // an agent's append may not write memsync's own kinds
		}
		// --tier learning: the surprise gate reads and scores against the
		// seeded records; --force keeps every record (the gate's work is
		// the same, and the line count below stays exact).
		args := []string{"append", "--repo", repo, "--agent", "planner-01",
			"--kind", string(m.Kind), "--scope", string(m.Scope), "--tier", "learning", "--force"}
		cmd := exec.CommandContext(ctx, bin, append(append(args, extra...), m.Text)...)
		cmd.Env = childEnv()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		el := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("memsync append: %v: %s", err, out)
		}
		times = append(times, float64(el)/float64(time.Millisecond))
	}
	n, err := countLines(filepath.Join(repo, "agents", "planner-01", "memory", "journal"))
	if err != nil {
		return nil, err
	}
	if n != calls+seeded {
		return nil, fmt.Errorf("journal holds %d lines after %d appends (and %d seeded)", n, calls, seeded)
	}
	return times, nil
}

// gateRecent is how many records the agent holds before the timed
// appends: the surprise gate compares each learning record with up to
// this many recent ones (SPEC §9's p50 target holds at 5,000).
const gateRecent = 5000

// seedRecent writes n generated records of agent into its journal,
// dated in the hour before now, in one file write, and returns n.
func seedRecent(repo, agent string, gen *generator, n int) (int, error) {
	dir := filepath.Join(repo, "agents", agent, "memory", "journal")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Hour)
	var buf []byte
	for i := 0; i < n; i++ {
		rec := gen.nextMemory().Record
		rec.Agent, rec.TS, rec.Tier = agent, start.Add(time.Duration(i)*time.Millisecond), "learning"
		rec.UUID = fmt.Sprintf("mem_%s_%s_s%05d", journal.UUIDTime(rec.TS), agent, i)
		rec.Links, rec.Supersedes, rec.ConflictsWith = nil, nil, nil
		buf = append(append(buf, rec.Canonical()...), '\n')
	}
	return n, os.WriteFile(filepath.Join(dir, journal.FileName(start)), buf, 0o644)
}

// countLines counts the newlines of every file in dir.
func countLines(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, err
		}
		for _, c := range b {
			if c == '\n' {
				n++
			}
		}
	}
	return n, nil
}

// measureLatency measures append → visible with the engine running.
func (b *bench) measureLatency(ctx context.Context, c *column) error {
	o := b.opts
	name := c.b.name
	b.each(ctx, c, "append → visible", func(run int) error {
		g, release, err := c.b.fresh(ctx)
		if err != nil {
			return err
		}
		defer release()
		r, err := appendToVisible(ctx, g, b.tmp, o.latencyAgents, o.latencyRate, o.latencyDur, o.seed+int64(run))
		if err != nil {
			return err
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		c.latP50.add(ms(r.p50))
		c.latP99.add(ms(r.p99))
		c.latMax.add(ms(r.max))
		c.latRate.add(r.rate)
		b.logf("%s append → visible run %d: p50 %s ms, p99 %s ms, max %s ms (%d records at %s/s)", name, run+1,
			millis(ms(r.p50)), millis(ms(r.p99)), millis(ms(r.max)), r.records, thousands(r.rate))
		return nil
	}, &c.latP50, &c.latP99)
	return nil
}
