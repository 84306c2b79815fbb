package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

const agentsDescription = `The repository's agents (the directories under agents/ that memsync
reads), each with its valid journal records (archived journals included),
how many of them are shared and private, and the time of its newest record.
Read from the journals: the same answer with or without a daemon or a
graph. memsync init --agent NAME adds an agent.`

// agentInfo is one agent as agents --json prints it.
type agentInfo struct {
	Agent   string `json:"agent"`
	Records int    `json:"records"`
	Shared  int    `json:"shared"`
	Private int    `json:"private"`
	Newest  string `json:"newest,omitempty"` // RFC 3339; absent when the journal is empty
}

func runAgents(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "agents", "agents [--json] [--repo DIR]", agentsDescription)
	repoFlag := addRepoFlag(fs)
	asJSON := fs.Bool("json", false, `print one JSON document: {"agents": [...]}`)
	positional, code, done := fs.parse(args)
	if done {
		return code
	}
	if len(positional) > 0 {
		return fs.usageErr("unexpected argument %q", positional[0])
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return fs.usageErr("%v", err)
	}
	names, err := listAgents(repo)
	if err != nil {
		return fs.fail("list agents: %v", err)
	}
	out := []agentInfo{}
	for _, a := range names {
		if ctx.Err() != nil {
			return fs.fail("%v", ctx.Err())
		}
		info := agentInfo{Agent: a}
		var newest time.Time
		err := memsync.EachRecord(layout(repo), a, func(m memsync.Memory) error {
			info.Records++
			if m.Scope == journal.ScopeShared {
				info.Shared++
			} else {
				info.Private++
			}
			if m.TS.After(newest) {
				newest = m.TS
			}
			return nil
		})
		if err != nil {
			return fs.fail("read %s's journals: %v", a, err)
		}
		if !newest.IsZero() {
			info.Newest = newest.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, info)
	}
	if *asJSON {
		doc, _ := json.MarshalIndent(struct {
			Agents []agentInfo `json:"agents"`
		}{out}, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", doc)
		return exitOK
	}
	if len(out) == 0 {
		fmt.Fprintln(env.Stdout, "no agents: memsync init --agent NAME adds one")
		return exitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "agent\trecords\tshared\tprivate\tnewest")
	for _, a := range out {
		newest := a.Newest
		if newest == "" {
			newest = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", a.Agent, a.Records, a.Shared, a.Private, newest)
	}
	tw.Flush()
	return exitOK
}
