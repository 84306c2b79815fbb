package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/memsync/memsync/memsync"
)

const rejectsDescription = `List the journal lines that can never be projected (bad JSON, a missing
or invalid field, a uuid already projected with other content...), every
agent's or only A's: the agent, the file and line, and why. They are kept
in each agent's sync/rejects.jsonl; fix or remove the line in the journal
(a fixed copy appended again gets projected). Exit 0 whether or not there
are any.`

// rejectJSON is one reject as rejects --json prints it.
type rejectJSON struct {
	Agent  string `json:"agent"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Offset int64  `json:"offset"`
	UUID   string `json:"uuid,omitempty"`
	Reason string `json:"reason"`
	Time   string `json:"time"`
}

func runRejects(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "rejects", "rejects [--agent A]... [--json] [--repo DIR]", rejectsDescription)
	repoFlag := addRepoFlag(fs)
	var agents stringList
	fs.Var(&agents, "agent", "only agent `A`'s rejects (repeatable; default every agent)")
	asJSON := fs.Bool("json", false, `print one JSON document: {"rejects": [...]}`)
	if pos, code, done := fs.parse(args); done {
		return code
	} else if len(pos) > 0 {
		return fs.usageErr("unexpected argument %q", pos[0])
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
	if len(agents) == 0 {
		if agents, err = listAgents(repo); err != nil {
			return fs.fail("list agents: %v", err)
		}
	} else {
		for _, a := range agents {
			if code, done := knownAgent(fs, repo, a); done {
				return code
			}
		}
	}
	out := []rejectJSON{}
	for _, a := range agents {
		rs, err := memsync.LiveRejects(layout(repo), a)
		if err != nil {
			return fs.fail("%s: %v", relPath(repo, layout(repo).RejectsFile(a)), err)
		}
		for _, r := range rs {
			out = append(out, rejectJSON{Agent: a, File: r.File, Line: r.Line, Offset: r.Offset, UUID: r.UUID,
				Reason: r.Reason, Time: r.Time.UTC().Format(time.RFC3339)})
		}
	}
	if *asJSON {
		data, _ := json.MarshalIndent(struct {
			Rejects []rejectJSON `json:"rejects"`
		}{out}, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", data)
		return exitOK
	}
	if len(out) == 0 {
		fmt.Fprintln(env.Stdout, "no rejected lines")
		return exitOK
	}
	for _, r := range out {
		uuid := ""
		if r.UUID != "" {
			uuid = " " + r.UUID
		}
		fmt.Fprintf(env.Stdout, "%s:%d:%s %s\n", r.File, r.Line, uuid, r.Reason)
	}
	return exitOK
}

// rejectCount is how many live rejects the agents' files hold.
func rejectCount(repo string) (int, error) {
	agents, err := listAgents(repo)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range agents {
		rs, err := memsync.LiveRejects(layout(repo), a)
		if err != nil {
			return 0, err
		}
		n += len(rs)
	}
	return n, nil
}
