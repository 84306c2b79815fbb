package main

import (
	"context"
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

func runConsolidate(ctx context.Context, env *Env, args []string) int {
	p := newAgentPass(env, "consolidate", "consolidate [--agent A]... [--dry-run] [--json] [--repo DIR]", consolidateDescription,
		"print what would be journaled; write nothing")
	repo, lg, agents, release, code, done := p.start(args, "stop it first, or let it consolidate (every consolidation.interval)")
	defer release()
	if done {
		return code
	}
	return runAgentPass(p, agents, func(a string) (consolidate.Report, error) {
		return consolidate.Run(ctx, consolidate.Options{
			Root: repo, Agent: a, DryRun: *p.dryRun, NoSync: !p.cfg.Append.FSync, Now: env.Now, Logger: lg,
		})
	}, printConsolidateReport)
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
