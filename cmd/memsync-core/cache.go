package main

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/memsync/memsync/cache"
)

const cacheDescription = `Regenerate the markdown snapshots agents read when the graph is down:
agents/A/memory/cache/GRAPHITI_FACTS.md (current facts, decisions,
preferences and procedures, open conflicts, entities) and
cache/GRAPHITI_ENTITIES/<slug>.md, one page per entity, each holding only
what A may see. Without --agent, every agent's snapshot is regenerated, from
one pass over the graph. Files that did not change are left alone; pages of
entities no longer mentioned are removed. The daemon does this by itself
after changes; this command is for a cache that must be current now.`

func runCache(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "cache", "cache [--agent A]... [--repo DIR] [--graph embedded|neo4j] [flags]", cacheDescription)
	repoFlag := addRepoFlag(fs)
	var agents stringList
	fs.Var(&agents, "agent", "regenerate agent `A`'s snapshot (repeatable; default: every agent)")
	var cfg Config
	addGraphFlags(fs.FlagSet, &cfg)
	rest, code, done := fs.parse(args)
	if done {
		return code
	}
	if len(rest) > 0 {
		return fs.usageErr("unexpected argument %q", rest[0])
	}
	for _, a := range agents {
		if !validAgent(a) {
			return fs.usageErr("--agent: %s", agentNameError(a))
		}
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return fs.usageErr("%v", err)
	}
	if err := loadConfig(env, repo, fs.FlagSet, &cfg); err != nil {
		return fs.usageErr("%v", err)
	}
	known, err := listAgents(repo)
	if err != nil {
		return fs.fail("list agents: %v", err)
	}
	for _, a := range agents {
		if code, done := knownAgent(fs, repo, a); done {
			return code
		}
	}
	if len(agents) == 0 && len(known) == 0 {
		fmt.Fprintln(env.Stdout, "no agents")
		return exitOK
	}
	g, err := openGraph(ctx, &cfg, repo, zap.NewNop())
	if err != nil {
		return fs.fail("open %s graph: %v (the snapshots were left as they are)", cfg.graph(), err)
	}
	defer g.Close()
	results, err := cache.NewWriter(g, layout(repo), nil).Generate(ctx, agents)
	for _, r := range results {
		for _, p := range r.Written {
			fmt.Fprintf(env.Stdout, "wrote   %s\n", p)
		}
		for _, p := range r.Removed {
			fmt.Fprintf(env.Stdout, "removed %s\n", p)
		}
		fmt.Fprintf(env.Stdout, "%s: %d written, %d removed, %d unchanged\n", r.Agent, len(r.Written), len(r.Removed), r.Unchanged)
	}
	if err != nil {
		return fs.fail("%v", err)
	}
	return exitOK
}
