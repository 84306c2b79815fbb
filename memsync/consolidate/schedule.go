package consolidate

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

// Scheduler runs the cycle for every agent every Interval (the daemon's
// consolidation.interval), the first time one Interval after it starts.
type Scheduler struct {
	Root     string
	Interval time.Duration
	// Options is the template of every run (NoSync, Now, Logger); Root,
	// Agent and DryRun are set per run.
	Options Options
}

// Run consolidates every Interval until ctx ends; it returns nil then.
// Failures are logged and retried at the next round; an agent whose
// compaction or consolidation is running is left for the next round.
func (s *Scheduler) Run(ctx context.Context) error {
	if s.Interval <= 0 {
		return nil
	}
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.RunOnce(ctx)
		}
	}
}

// RunOnce consolidates every agent once and returns the reports.
func (s *Scheduler) RunOnce(ctx context.Context) []Report {
	lg := s.Options.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	agents, err := memsync.Layout{Root: s.Root}.Agents()
	if err != nil {
		lg.Error("consolidation: list agents", zap.Error(err))
		return nil
	}
	var out []Report
	for _, a := range agents {
		if ctx.Err() != nil {
			break
		}
		o := s.Options
		o.Root, o.Agent, o.DryRun = s.Root, a, false
		rep, err := Run(ctx, o)
		switch {
		case errors.Is(err, ErrBusy):
			lg.Info("consolidation: the agent's compaction or consolidation is running; next round", zap.String("agent", a))
		case err != nil:
			lg.Error("scheduled consolidation failed; nothing is lost, it is retried at the next round",
				zap.String("agent", a), zap.Error(err))
		default:
			out = append(out, rep)
		}
	}
	return out
}
