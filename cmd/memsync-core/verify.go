package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

const verifyDescription = `Compare the journals (work tree, archives included) with the graph:
memories missing from the graph, extra ones no journal has, and ones whose
content differs. Exit 0 when they agree, 1 when they differ or the graph
cannot be read.`

func runVerify(ctx context.Context, env *Env, args []string) int {
	fs := newRepoCmd(env, "verify", "verify [--json] [--repo DIR] [--graph embedded|neo4j] [flags]", verifyDescription)
	asJSON := fs.Bool("json", false, "print one JSON document")
	repo, _, code, done := fs.load(args)
	if done {
		return code
	}
	cfg := &fs.cfg
	g, err := openGraph(ctx, cfg, repo, zap.NewNop())
	if err != nil {
		return fs.fail("open graph: %v", err)
	}
	defer g.Close()
	rep, err := memsync.Verify(ctx, repo, g)
	if err != nil {
		return fs.fail("%v", err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
	} else {
		verdict := "ok"
		if !rep.OK {
			verdict = "DIFFERS"
		}
		fmt.Fprintf(env.Stdout, "%s: %d journal records, %d in the graph; missing %d, extra %d, different %d\n",
			verdict, rep.JournalRecords, rep.GraphRecords, rep.Missing, rep.Extra, rep.Different)
		for _, l := range []struct {
			name string
			ids  []string
		}{{"missing", rep.MissingUUIDs}, {"extra", rep.ExtraUUIDs}, {"different", rep.DifferentUUIDs}} {
			if len(l.ids) > 0 {
				fmt.Fprintf(env.Stdout, "  %s: %s\n", l.name, strings.Join(l.ids, " "))
			}
		}
		if n, err := rejectCount(repo); err == nil && n > 0 {
			fmt.Fprintf(env.Stdout, "  rejects: %d journal lines can never be projected (memsync rejects lists them)\n", n)
		}
	}
	if !rep.OK {
		return exitFail
	}
	return exitOK
}
