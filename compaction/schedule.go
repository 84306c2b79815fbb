package compaction

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// DefaultCheckEvery is how often a Scheduler looks for work.
const DefaultCheckEvery = 10 * time.Minute

// Scheduler runs compactions for a daemon: every agent's finished days on
// the weekly compaction day, and any day whose journal grows past
// MaxDayLines records on every other day. Both are safe to attempt often:
// a compaction with nothing to absorb writes nothing.
type Scheduler struct {
	Root       string
	Weekday    time.Weekday
	CheckEvery time.Duration // DefaultCheckEvery when 0
	// Options is the template of every compaction (MaxDayLines,
	// Summarizer, Commit, Logger, Now); Root, Agent, KeepDays and DryRun
	// are set per run.
	Options Options
}

// Run checks at once and then every CheckEvery until ctx ends; it returns
// nil then. Failures are logged and retried at the next check.
func (s *Scheduler) Run(ctx context.Context) error {
	every := s.CheckEvery
	if every <= 0 {
		every = DefaultCheckEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RunOnce compacts every agent as the day calls for and returns the reports
// of the compactions that absorbed something.
func (s *Scheduler) RunOnce(ctx context.Context) []Report {
	lg := s.Options.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	now := s.Options.Now
	if now == nil {
		now = time.Now
	}
	agents, err := journal.Layout{Root: s.Root}.Agents()
	if err != nil {
		lg.Error("compaction: list agents", zap.Error(err))
		return nil
	}
	keep := -1 // only overfull days
	if now().UTC().Weekday() == s.Weekday {
		keep = 0
	}
	var out []Report
	for _, a := range agents {
		if ctx.Err() != nil {
			break
		}
		o := s.Options
		o.Root, o.Agent, o.KeepDays, o.DryRun = s.Root, a, keep, false
		rep, err := Compact(ctx, o)
		switch {
		case errors.Is(err, ErrBusy):
			lg.Info("compaction already running for this agent", zap.String("agent", a))
		case err != nil:
			lg.Error("scheduled compaction failed; nothing is lost, it is retried at the next check",
				zap.String("agent", a), zap.Error(err))
		case rep.Absorbed > 0:
			out = append(out, rep)
		}
	}
	return out
}
