package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/memsync/memsync/memsync/consolidate"
)

const consolidateDescription = `Run the consolidation cycle (SPEC §10) for every agent, or one: promote (a
topic in 3+ of its learning records becomes a summary, a procedure used 3+
times is proposed for the core tier), prune (duplicate, superseded and
decayed learning records are archived), verify (core memories contradicted
by newer records are listed for review) and outcome check (decisions older
than a week with no outcome are followed up: "You decided X on DATE. How did
it turn out?"). Each action is journaled once, as memsync's own record with
a deterministic uuid, and MEMORY.md's consolidation section is rewritten: a
second run changes nothing, a crash at any point loses nothing and the next
run finishes. It needs no graph. The daemon runs it every
consolidation.interval (default 6h; memsync run --no-consolidate turns it
off). --dry-run prints what it would journal and writes nothing.`

// consolidateJSON is the document consolidate --json prints.
type consolidateJSON struct {
	DryRun bool                 `json:"dry_run"`
	Agents []consolidate.Report `json:"agents"`
	Errors []string             `json:"errors,omitempty"`
}

func runConsolidate(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "consolidate", "consolidate [--agent A]... [--dry-run] [--json] [--repo DIR]", consolidateDescription)
	repoFlag := addRepoFlag(fs)
	var agents stringList
	fs.Var(&agents, "agent", "consolidate only agent `A` (repeatable; default every agent)")
	dryRun := fs.Bool("dry-run", false, "print what would be journaled; write nothing")
	asJSON := fs.Bool("json", false, "print one JSON document")
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
	agents, code, done := selectAgents(fs, repo, agents)
	if done {
		return code
	}
	if !*dryRun {
		lock, code, done := lockRepo(fs, repo, "consolidate",
			"stop it first, or let it consolidate (every consolidation.interval)")
		if done {
			return code
		}
		defer lock.Release() //nolint:errcheck // nothing to do about it
	}
	doc := consolidateJSON{DryRun: *dryRun, Agents: []consolidate.Report{}}
	failed := false
	for _, a := range agents {
		rep, err := consolidate.Run(ctx, consolidate.Options{
			Root: repo, Agent: a, DryRun: *dryRun, NoSync: !cfg.Append.FSync, Now: env.Now, Logger: lg,
		})
		if err != nil {
			failed = true
			doc.Errors = append(doc.Errors, err.Error())
			if !*asJSON {
				fmt.Fprintf(env.Stderr, "memsync consolidate: %v\n", err)
			}
			continue
		}
		doc.Agents = append(doc.Agents, rep)
		if !*asJSON {
			printConsolidateReport(env.Stdout, rep)
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

func printConsolidateReport(w io.Writer, rep consolidate.Report) {
	verb := "journaled"
	if rep.DryRun {
		verb = "would journal"
	}
	fmt.Fprintf(w, "%s: %d records read, %s %d actions\n", rep.Agent, rep.Records, verb, len(rep.Actions))
	for _, a := range rep.Actions {
		fmt.Fprintf(w, "  %s %s %s (%d): %s\n", a.Step, a.Action, a.UUID, len(a.Targets), a.Text)
	}
	for _, f := range rep.FollowUps {
		fmt.Fprintf(w, "  follow-up %s: %s\n", f.Decision, f.Question)
	}
	for _, r := range rep.Review {
		fmt.Fprintf(w, "  review core %s, contradicted by %s: %s\n", r.Core, r.Newer, r.Text)
	}
}
