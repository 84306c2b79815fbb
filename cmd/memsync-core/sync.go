package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/memsync/memsync/memsync"
)

const syncDescription = `Make one full pass, then exit: try every agent's outbox once, then project
every journal line past its cursor. Exit 0 when everything reached the
graph; exit 1 when the graph could not be reached (the records wait in the
outbox for the next pass or the daemon) or a sync file could not be written.
It refuses to run (exit 2) while a daemon runs on the repository: the daemon
projects everything already.`

func runSync(ctx context.Context, env *Env, args []string) int {
	fs := newRepoCmd(env, "sync", "sync --once [--repo DIR] [--graph embedded|neo4j] [flags]", syncDescription)
	addGraphitiFlags(fs.FlagSet, &fs.cfg)
	once := fs.Bool("once", true, "one pass, then exit (the only mode: --once=false is refused; memsync run keeps going)")
	repo, _, code, done := fs.load(args)
	if done {
		return code
	}
	if !*once {
		return fs.usageErr("--once=false: sync only makes one pass; run the daemon with memsync run")
	}
	lock, code, done := lockRepo(fs.cmdFlags, repo, "sync", "it projects every record already (memsync status shows how far it is)")
	if done {
		return code
	}
	defer lock.Release() //nolint:errcheck // nothing to do about it
	cfg := &fs.cfg
	lg, err := newLogger(cfg, env.Stderr)
	if err != nil {
		return fs.fail("%v", err)
	}
	g, err := openGraph(ctx, cfg, repo, lg)
	if err != nil {
		return fs.fail("open graph: %v (journals are untouched; run again when it is reachable)", err)
	}
	defer g.Close()
	promoted := 0
	eng, err := memsync.New(memsync.Options{Root: repo, Graph: g, Logger: lg, Now: env.Now, BatchSize: cfg.Daemon.BatchSize,
		OnSignals: promotions(ctx, g, repo, cfg, lg, env, &promoted)})
	if err != nil {
		return fs.fail("%v", err)
	}
	rep, err := eng.SyncOnce(ctx)
	if err == nil && promoted > 0 {
		// Project the promotions this pass journaled before saying done.
		var again memsync.PassReport
		again, err = eng.SyncOnce(ctx)
		rep.Projected += again.Projected
		rep.Queued, rep.Rejected, rep.Pending = rep.Queued+again.Queued, rep.Rejected+again.Rejected, again.Pending
	}
	fmt.Fprintf(env.Stdout, "projected %d, queued %d, rejected %d, outbox %d\n", rep.Projected, rep.Queued, rep.Rejected, rep.Pending)
	if errors.Is(err, memsync.ErrPaused) {
		return fs.fail("%v: %d records wait in the outbox", err, rep.Pending)
	}
	if err != nil {
		return fs.fail("%v", err)
	}
	return exitOK
}
