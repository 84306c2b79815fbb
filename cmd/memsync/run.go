package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"

	"github.com/memsync/memsync/cache"
	"github.com/memsync/memsync/memsync"
)

const runDescription = `Run the memsync daemon in the foreground: tail every agent's journal and
project each record into the graph, exactly once, keeping cursors, an outbox
for retries and a rejects file. Meant for systemd or launchd (see
scripts/memsync.service and scripts/com.memsync.daemon.plist); it needs no
terminal and logs to stderr (JSON unless stderr is a terminal).
SIGTERM or SIGINT: finish the batch in flight and exit 0. SIGHUP: reload
memsync.yaml and the environment, reconnect, and go on.`

func runRun(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "run", "run [--repo DIR] [--graph embedded|neo4j] [--neo4j-uri URI] [flags]", runDescription)
	repoFlag := addRepoFlag(fs)
	var cfg Config
	addGraphFlags(fs.FlagSet, &cfg)
	if _, code, done := fs.parse(args); done {
		return code
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return fs.fail("%v", err)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		if err := loadConfig(env, repo, fs.FlagSet, &cfg); err != nil {
			return fs.usageErr("%v", err)
		}
		reload, err := runDaemon(ctx, env, repo, &cfg, hup)
		if err != nil {
			return fs.fail("%v", err)
		}
		if !reload {
			return exitOK
		}
	}
}

// runDaemon runs one configuration until ctx ends (reload false) or SIGHUP
// arrives (reload true).
func runDaemon(ctx context.Context, env *Env, repo string, cfg *Config, hup <-chan os.Signal) (reload bool, err error) {
	lg, err := newLogger(cfg, env.Stderr)
	if err != nil {
		return false, err
	}
	defer lg.Sync() //nolint:errcheck // stderr
	lg.Info("memsync starting", zap.String("repo", repo), zap.Stringer("config", cfg))

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-hup:
			lg.Info("SIGHUP: reloading configuration")
			reload = true
			cancel()
		case <-runCtx.Done():
		}
	}()

	g, err := openGraphPatiently(runCtx, cfg, repo, lg)
	if err != nil {
		if runCtx.Err() != nil {
			return reload, nil
		}
		return false, err
	}
	defer g.Close()
	// Snapshots follow the graph, debounced; Close writes what is pending
	// and runs before the graph closes.
	regen := cache.NewRegenerator(g, layout(repo), 0, lg)
	defer regen.Close()
	eng, err := memsync.New(memsync.Options{
		Root: repo, Graph: g, Logger: lg, Now: env.Now, OnApplied: regen.Notify,
		BatchSize: cfg.Daemon.BatchSize, BatchWindow: cfg.Daemon.BatchWindow, PollInterval: cfg.Daemon.PollInterval,
	})
	if err != nil {
		return false, err
	}
	if err := eng.Run(runCtx); err != nil {
		return false, err
	}
	return reload, nil
}

// openGraphPatiently opens the graph, waiting with backoff while it cannot
// be reached: the daemon may start before its database does. Journals are
// durable, so nothing waits in memory meanwhile.
func openGraphPatiently(ctx context.Context, cfg *Config, repo string, lg *zap.Logger) (memsync.Graph, error) {
	b := memsync.DefaultBackOff()
	for {
		g, err := openGraph(ctx, cfg, repo, lg)
		if err == nil {
			return g, nil
		}
		if !isUnavailable(err) || ctx.Err() != nil {
			return nil, err
		}
		d := b.NextBackOff()
		if d == backoff.Stop {
			return nil, err
		}
		lg.Error("graph unavailable at start: waiting for it (journals keep every record)",
			zap.Error(err), zap.Duration("retry_in", d))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
	}
}
