package consolidate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// Scheduler runs the cycle for every agent every Interval (the daemon's
// consolidation.interval). When the last round ran is kept in a host-local
// stamp (.memsync/consolidation.last), so a daemon restarted more often
// than Interval still consolidates; a host without one starts counting
// when its first daemon starts.
type Scheduler struct {
	Root     string
	Interval time.Duration
	// Options is the template of every run (NoSync, Now, Logger); Root,
	// Agent and DryRun are set per run.
	Options Options
}

// Run consolidates whenever a round is due until ctx ends; it returns nil
// then. Failures are logged and retried at the next round; an agent whose
// compaction or consolidation is running is left for the next round.
func (s *Scheduler) Run(ctx context.Context) error {
	if s.Interval <= 0 {
		return nil
	}
	for {
		wait := time.Until(s.Next(time.Now()))
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		s.RunOnce(ctx)
		s.stamp(time.Now())
	}
}

// Next is when the next round is due: Interval after the last round (now
// when that is past), or Interval after now on a host that never ran one
// (which starts the count).
func (s *Scheduler) Next(now time.Time) time.Time {
	data, err := os.ReadFile(s.stampFile())
	if last, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data))); err == nil && perr == nil {
		return last.Add(s.Interval)
	}
	s.stamp(now)
	return now.Add(s.Interval)
}

func (s *Scheduler) stampFile() string {
	return filepath.Join(memsync.Layout{Root: s.Root}.LocalDir(), "consolidation.last")
}

// stamp records when a round ran (host-local; losing it only delays the
// next round by one Interval).
func (s *Scheduler) stamp(t time.Time) {
	_ = journal.ReplaceDerived(s.stampFile(), []byte(t.UTC().Format(time.RFC3339Nano)+"\n"))
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
