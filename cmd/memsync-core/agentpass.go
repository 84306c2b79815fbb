package main

import (
	"encoding/json"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

// agentPass is the frame of a maintenance command that works agent by
// agent on the journals (compact, consolidate): --agent (repeatable),
// --dry-run, --json and --repo; the repository and its configuration; a
// logger; and, unless it is a dry run, the daemon lock, since the daemon
// runs the same work by itself.
type agentPass struct {
	*cmdFlags
	repoFlag *string
	named    stringList
	dryRun   *bool
	asJSON   *bool
	cfg      Config
}

// newAgentPass defines the shared flags; the command may add its own
// before start.
func newAgentPass(env *Env, name, synopsis, description, dryRunHelp string) *agentPass {
	p := &agentPass{cmdFlags: newFlags(env, name, synopsis, description)}
	p.repoFlag = addRepoFlag(p.cmdFlags)
	p.Var(&p.named, "agent", name+" only agent `A` (repeatable; default every agent)")
	p.dryRun = p.Bool("dry-run", false, dryRunHelp)
	p.asJSON = p.Bool("json", false, "print one JSON document")
	return p
}

// start parses args, finds the repository, loads its configuration,
// builds the logger, picks the agents and, unless --dry-run, takes the
// daemon lock (advice says what to do while a daemon holds it). The
// caller defers release; done says the command must return code.
func (p *agentPass) start(args []string, advice string) (repo string, lg *zap.Logger, agents []string, release func(), code int, done bool) {
	release = func() {}
	if pos, code, done := p.parse(args); done {
		return "", nil, nil, release, code, true
	} else if len(pos) > 0 {
		return "", nil, nil, release, p.usageErr("unexpected argument %q", pos[0]), true
	}
	repo, err := existingRepo(p.Env, *p.repoFlag)
	if err != nil {
		return "", nil, nil, release, p.usageErr("%v", err), true
	}
	if err := loadConfig(p.Env, repo, p.FlagSet, &p.cfg); err != nil {
		return "", nil, nil, release, p.usageErr("%v", err), true
	}
	if lg, err = newLogger(&p.cfg, p.Env.Stderr); err != nil {
		return "", nil, nil, release, p.fail("%v", err), true
	}
	if agents, code, done = selectAgents(p.cmdFlags, repo, p.named); done {
		return "", nil, nil, release, code, true
	}
	if !*p.dryRun {
		var lock *memsync.RepoLock
		if lock, code, done = lockRepo(p.cmdFlags, repo, p.Name, advice); done {
			return "", nil, nil, release, code, true
		}
		release = func() { lock.Release() } //nolint:errcheck // nothing to do about it
	}
	return repo, lg, agents, release, 0, false
}

// passJSON is the document a pass prints with --json.
type passJSON[R any] struct {
	DryRun bool     `json:"dry_run"`
	Agents []R      `json:"agents"`
	Errors []string `json:"errors,omitempty"`
}

// runAgentPass runs each agent's work in turn: a failing agent is reported
// (on stderr, or in the document's errors) and the others still run. It
// prints each report with print, or one JSON document, and returns the
// exit code: exitFail when any agent failed.
func runAgentPass[R any](p *agentPass, agents []string, work func(agent string) (R, error), print func(io.Writer, R)) int {
	doc := passJSON[R]{DryRun: *p.dryRun, Agents: []R{}}
	for _, a := range agents {
		rep, err := work(a)
		if err != nil {
			doc.Errors = append(doc.Errors, err.Error())
			if !*p.asJSON {
				fmt.Fprintf(p.Env.Stderr, "memsync %s: %v\n", p.Name, err)
			}
			continue
		}
		doc.Agents = append(doc.Agents, rep)
		if !*p.asJSON {
			print(p.Env.Stdout, rep)
		}
	}
	if *p.asJSON {
		out, _ := json.MarshalIndent(doc, "", "  ")
		fmt.Fprintf(p.Env.Stdout, "%s\n", out)
	}
	if len(doc.Errors) > 0 {
		return exitFail
	}
	return exitOK
}
