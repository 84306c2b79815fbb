package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// compactJSON is the document compact --json prints.
type compactJSON struct {
	DryRun bool                `json:"dry_run"`
	Agents []compaction.Report `json:"agents"`
	Errors []string            `json:"errors,omitempty"`
}

func runCompact(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "compact", "compact [--agent A]... [--dry-run] [--json] [--no-commit] [--repo DIR]", compactDescription)
	repoFlag := addRepoFlag(fs)
	var agents stringList
	fs.Var(&agents, "agent", "compact only agent `A` (repeatable; default every agent)")
	dryRun := fs.Bool("dry-run", false, "print what would be absorbed; write nothing")
	asJSON := fs.Bool("json", false, "print one JSON document")
	noCommit := fs.Bool("no-commit", false, "leave the result for the daemon's auto-commit")
	var cfg Config
	if pos, code, done := fs.parse(args); done {
		return code
	} else if len(pos) > 0 {
		return fs.usageErr("unexpected argument %q", pos[0])
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return fs.usageErr("%v", err)
	}
	if err := loadConfig(env, repo, fs.FlagSet, &cfg); err != nil {
		return fs.usageErr("%v", err)
	}
	lg, err := newLogger(&cfg, env.Stderr)
	if err != nil {
		return fs.fail("%v", err)
	}
	if cfg.Log.Level != "debug" {
		// The report on stdout says what compaction's info lines would.
		lg = lg.WithOptions(zap.IncreaseLevel(zapcore.WarnLevel))
	}
	agents, code, done := selectAgents(fs, repo, agents)
	if done {
		return code
	}
	if !*dryRun {
		lock, code, done := lockRepo(fs, repo, "compact",
			"stop it first, or let it compact (on compaction.weekday, or when a day passes compaction.max_day_lines)")
		if done {
			return code
		}
		defer lock.Release() //nolint:errcheck // nothing to do about it
	}
	var commit func(context.Context, string) error
	if !*dryRun && !*noCommit {
		commit = gitCommit(repo, lg, env.Now)
	}
	summarizer := summarizerArgv(&cfg)
	doc := compactJSON{DryRun: *dryRun, Agents: []compaction.Report{}}
	failed := false
	for _, a := range agents {
		rep, err := compaction.Compact(ctx, compaction.Options{
			Root: repo, Agent: a, MaxDayLines: cfg.Compaction.MaxDayLines, Summarizer: summarizer,
			Commit: commit, DryRun: *dryRun, Now: env.Now, Logger: lg,
		})
		if err != nil {
			failed = true
			doc.Errors = append(doc.Errors, err.Error())
			if !*asJSON {
				fmt.Fprintf(env.Stderr, "memsync compact: %v\n", err)
			}
			continue
		}
		doc.Agents = append(doc.Agents, rep)
		if !*asJSON {
			printCompactReport(env.Stdout, rep)
		}
	}
	if *asJSON {
		out, _ := json.MarshalIndent(doc, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
	}
	if failed {
		return exitFail
	}
	return exitOK
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

// plural is "1 record", "2 records".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
