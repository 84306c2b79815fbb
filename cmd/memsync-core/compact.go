package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/memsync/memsync/compaction"
	"github.com/memsync/memsync/ledger"
)

const compactDescription = `Fold every agent's (or one agent's) old journal lines into its MEMORY.md
and entity pages, deterministically (latest decision and preference per
subject, superseded ones dropped, conflicts listed; or the text of
compaction.summarizer, falling back to that on failure), then move them to
journal/archive/ and commit. A day's journal is compacted once the day is
over, or earlier when it holds more than compaction.max_day_lines records.
A crash at any point loses nothing, and running it again finishes the work.
Text outside the generated sections of MEMORY.md and the entity pages is
never touched. --dry-run prints what would be absorbed and writes nothing.
It refuses to run (exit 2) while a daemon runs on the repository: the
daemon compacts by itself.`

func runCompact(ctx context.Context, env *Env, args []string) int {
	p := newAgentPass(env, "compact", "compact [--agent A]... [--dry-run] [--json] [--no-commit] [--repo DIR]", compactDescription,
		"print what would be absorbed; write nothing")
	noCommit := p.Bool("no-commit", false, "leave the result for the daemon's auto-commit")
	repo, lg, agents, release, code, done := p.start(args,
		"stop it first, or let it compact (on compaction.weekday, or when a day passes compaction.max_day_lines)")
	defer release()
	if done {
		return code
	}
	if p.cfg.Log.Level != "debug" {
		// The report on stdout says what compaction's info lines would.
		lg = lg.WithOptions(zap.IncreaseLevel(zapcore.WarnLevel))
	}
	var commit func(context.Context, string) error
	if !*p.dryRun && !*noCommit {
		commit = gitCommit(repo, lg, env.Now)
	}
	summarizer := summarizerArgv(&p.cfg)
	return runAgentPass(p, agents, func(a string) (compaction.Report, error) {
		return compaction.Compact(ctx, compaction.Options{
			Root: repo, Agent: a, MaxDayLines: p.cfg.Compaction.MaxDayLines, Summarizer: summarizer,
			Commit: commit, DryRun: *p.dryRun, Now: env.Now, Logger: lg,
		})
	}, printCompactReport)
}

// summarizerArgv is the configured external summarizer as a shell command.
func summarizerArgv(cfg *Config) []string {
	if cfg.Compaction.Summarizer == "" {
		return nil
	}
	return []string{"/bin/sh", "-c", cfg.Compaction.Summarizer}
}

// gitCommit commits through the ledger when repo is a git work tree; a busy
// git puts the commit off to the daemon's auto-commit instead of failing.
func gitCommit(repo string, lg *zap.Logger, now func() time.Time) func(context.Context, string) error {
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		return func(context.Context, string) error {
			return fmt.Errorf("%w: %s is not a git work tree", compaction.ErrNotCommitted, repo)
		}
	}
	c, err := ledger.NewCommitter(ledger.CommitterOptions{Root: repo, Logger: lg, Now: now})
	if err != nil {
		return func(context.Context, string) error { return err }
	}
	return commitWith(c)
}

// commitWith is compaction's Commit through c: a busy git (or another
// commit or exchange of this process) puts the commit off.
func commitWith(c *ledger.Committer) func(context.Context, string) error {
	return func(ctx context.Context, msg string) error {
		_, err := c.CommitNow(ctx, msg)
		if errors.Is(err, ledger.ErrLocked) {
			return fmt.Errorf("%w: %w", compaction.ErrNotCommitted, err)
		}
		return err
	}
}

func printCompactReport(w io.Writer, rep compaction.Report) {
	switch {
	case rep.Absorbed == 0:
		fmt.Fprintf(w, "%s: nothing to compact\n", rep.Agent)
		return
	case rep.DryRun:
		fmt.Fprintf(w, "%s: would absorb %s\n", rep.Agent, plural(rep.Absorbed, "record"))
	default:
		fmt.Fprintf(w, "%s: absorbed %s (%d copied to the archive), %s updated, summary %s",
			rep.Agent, plural(rep.Absorbed, "record"), rep.Archived, plural(len(rep.Pages), "page"), rep.Summary)
		if len(rep.Records) > 0 {
			fmt.Fprintf(w, ", compaction record %s", rep.Records[0])
			if len(rep.Records) > 1 {
				fmt.Fprintf(w, " (+%d)", len(rep.Records)-1)
			}
		}
		if rep.Commit != "" {
			fmt.Fprintf(w, ", %s", rep.Commit)
		}
		fmt.Fprintln(w)
	}
	for _, f := range rep.Files {
		fmt.Fprintf(w, "  journal/%s: %d (%s)\n", f.File, f.Absorbed, f.Reason)
	}
	for _, it := range rep.Items {
		resumed := ""
		if it.Resumed {
			resumed = " [resumed]"
		}
		fmt.Fprintf(w, "    %s:%d %s %s %s: %s%s\n", it.File, it.Line, it.UUID, it.TS.Format(time.RFC3339), it.Kind, it.Text, resumed)
	}
}

// plural is "1 record", "2 records", "1 memory", "2 memories".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && stem != "" && !strings.ContainsRune("aeiou", rune(stem[len(stem)-1])) {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
