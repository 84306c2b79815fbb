package main

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/journal/importer"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
)

const exportDescription = `Write the memories agent A may see (its own and the shared ones, as
search sees them, read from the journals) to stdout, oldest first: jsonl is
every record as its journal line (memsync's own records included: a backup);
markdown and mcp-memory (the MCP memory server's memory.jsonl, which memsync
import mcp-memory reads back) leave out what search leaves out by default
(superseded memories, memories flagged wrong) and memsync's own records
(feedback, promotions, compaction).`

func runExport(ctx context.Context, env *Env, args []string) int {
	c := newFlags(env, "export", "export --agent A --format markdown|mcp-memory|jsonl", exportDescription)
	repoFlag := addRepoFlag(c)
	agent := c.String("agent", "", "the agent `A` whose view is exported (required)")
	format := c.String("format", "", "`F`: markdown, mcp-memory or jsonl (required)")
	positional, code, done := c.parse(args)
	if done {
		return code
	}
	switch {
	case len(positional) > 0:
		return c.usageErr("unexpected arguments %q", positional)
	case *agent == "":
		return c.usageErr("--agent: required")
	case !validAgent(*agent):
		return c.usageErr("--agent: %s", agentNameError(*agent))
	case !slices.Contains(importer.ExportFormats, *format):
		return c.usageErr("--format: %q is not one of %s", *format, strings.Join(importer.ExportFormats, ", "))
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return c.usageErr("%v", err)
	}
	agents, err := listAgents(repo)
	if err != nil {
		return c.fail("%v", err)
	}
	if !slices.Contains(agents, *agent) {
		return c.usageErr("--agent: no agent %q in this repository", *agent)
	}
	groups := []string{journal.SharedGroup, journal.PrivateGroup(*agent)}
	journals := offline.NewJournals(layout(repo))
	nodes, err := journals.List(ctx, memsync.ListQuery{Groups: groups, Limit: math.MaxInt32})
	if err != nil {
		return c.fail("%v", err)
	}
	slices.Reverse(nodes) // oldest first
	var scored map[string]memsync.Scored
	if *format != "jsonl" {
		// What search leaves out by default, by search's own rule.
		if scored, err = memsync.ScoreNodes(ctx, journals, nodes, groups, memsync.Present(env.Now())); err != nil {
			return c.fail("%v", err)
		}
	}
	var recs []journal.Record
	for i := range nodes {
		n := &nodes[i]
		if *format != "jsonl" {
			switch n.Record.Kind {
			case journal.KindFeedback, journal.KindPromotion, journal.KindCompaction:
				continue
			}
			if s, ok := scored[n.UUID]; !ok || s.Result.Retired() {
				continue
			}
		}
		recs = append(recs, n.Record)
	}
	if err := importer.Export(env.Stdout, *format, *agent, recs); err != nil {
		return c.fail("%v", err)
	}
	return exitOK
}
