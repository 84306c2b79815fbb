package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"

	"github.com/memsync/memsync/cache"
	"github.com/memsync/memsync/compaction"
	"github.com/memsync/memsync/ledger"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/consolidate"
	"github.com/memsync/memsync/memsync/metrics"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/webui"
)

const runDescription = `Run the memsync daemon in the foreground: tail every agent's journal and
project each record into the graph, exactly once, keeping cursors, an outbox
for retries and a rejects file. Meant for systemd or launchd (see
scripts/memsync.service and scripts/com.memsync.daemon.plist); it needs no
terminal and logs to stderr (JSON unless stderr is a terminal).
One daemon runs per repository: it holds .memsync/daemon.lock for its whole
life, and a second one exits 2 naming the first one's pid. It logs a short
start line and one line per pass that projected something.
SIGTERM or SIGINT: finish the batch in flight and exit 0. SIGHUP: reload
memsync.yaml and the environment, reconnect, and go on (a broken memsync.yaml
is logged and the previous configuration kept).
--remote NAME (or sync.remote): every sync.interval (default 1m) also commit,
fetch NAME, merge (journals as a union of lines; any other conflict is left
for a person and shown by status) and push, never forcing (SPEC §12).`

func runRun(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "run", "run [--repo DIR] [--graph embedded|neo4j] [--neo4j-uri URI] [flags]", runDescription)
	repoFlag := addRepoFlag(fs)
	noCommit := fs.Bool("no-commit", false, "do not auto-commit journals to git (else every daemon.commit_interval)")
	noCompact := fs.Bool("no-compact", false, "do not run scheduled compaction (weekly, or when a day passes compaction.max_day_lines)")
	noConsolidate := fs.Bool("no-consolidate", false, "do not run the consolidation cycle every consolidation.interval")
	metricsFlag := fs.String("metrics", "", "serve Prometheus /metrics and /healthz on `ADDR`: HOST:PORT, or a bare port on 127.0.0.1 (also daemon.metrics; default off)")
	uiAddr := fs.String("ui", "", "serve the web view (memsync ui) on `ADDR` from the daemon's graph (default off; loopback unless $"+uiTokenEnv+" or --ui-token-file)")
	uiTokenFile := fs.String("ui-token-file", "", "the web view's access token, from `F` (its first line); else $"+uiTokenEnv)
	remote := fs.String("remote", "", "git remote `NAME` to commit, fetch, merge and push every sync.interval (else sync.remote; SPEC §12)")
	var cfg Config
	addGraphFlags(fs.FlagSet, &cfg)
	addGraphitiFlags(fs.FlagSet, &cfg)
	if _, code, done := fs.parse(args); done {
		return code
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return fs.usageErr("%v", err)
	}
	var ui uiOptions
	if *uiAddr != "" {
		if ui.token, err = uiToken(env, *uiTokenFile); err != nil {
			return fs.usageErr("--ui-token-file: %v", err)
		}
		if err := webui.CheckAddr(*uiAddr, ui.token); err != nil {
			return fs.usageErr("--ui: %v", err)
		}
		ui.addr = *uiAddr
		if ui.token == "" {
			// The view never answers without a token (.memsync/ui-token).
			if ui.token, err = ensureUIToken(repo); err != nil {
				return fs.fail("--ui: %v", err)
			}
		}
	}
	// One daemon per repository, for the daemon's whole life (across
	// reloads); the kernel releases the lock however the process ends.
	// A compact, rebuild or sync holding it is waited for.
	lock, code, done := waitRepoLock(ctx, fs, repo, "run", "stop it first (one daemon per repository)")
	if done {
		return code
	}
	defer lock.Release() //nolint:errcheck // the process is ending
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var obs *metrics.Metrics // nil: no metrics; kept across reloads
	for started := false; ; started = true {
		prev := cfg
		if err := loadConfig(env, repo, fs.FlagSet, &cfg); err != nil {
			if !started {
				return fs.usageErr("%v", err)
			}
			// A reload must never take the daemon down: agents keep
			// journaling, and the projection goes on under the old settings
			// until memsync.yaml is fixed and SIGHUP sent again.
			cfg = prev
			if lg, lerr := newLogger(&cfg, env.Stderr); lerr == nil {
				lg.Error("SIGHUP: memsync.yaml is broken: keeping the previous configuration", zap.Error(err))
				_ = lg.Sync()
			}
		}
		if *noCommit {
			cfg.Daemon.CommitInterval = 0
		}
		if *remote != "" {
			cfg.Sync.Remote = *remote
		}
		if *noConsolidate {
			cfg.Consolidation.Interval = 0
		}
		if !started {
			stop, err := startMetrics(env, &cfg, *metricsFlag, &obs)
			if err != nil {
				return fs.fail("%v", err)
			}
			defer stop()
		}
		reload, err := runDaemon(ctx, env, repo, &cfg, !*noCompact, hup, obs, ui)
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
func runDaemon(ctx context.Context, env *Env, repo string, cfg *Config, compact bool, hup <-chan os.Signal, obs *metrics.Metrics, ui uiOptions) (reload bool, err error) {
	lg, err := newLogger(cfg, env.Stderr)
	if err != nil {
		return false, err
	}
	defer lg.Sync() //nolint:errcheck // stderr
	agents, _ := listAgents(repo)
	lg.Info("memsync starting", zap.String("graph", cfg.graph()), zap.String("repo", repo), zap.Strings("agents", agents))
	lg.Debug("configuration", zap.Stringer("config", cfg))

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

	var observer memsync.Observer
	if obs != nil {
		observer = obs
		obs.Stopped("opening the " + cfg.graph() + " graph")
		defer obs.Stopped("stopped")
	}
	g, err := openGraphPatiently(runCtx, cfg, repo, lg, obs)
	if err != nil {
		if runCtx.Err() != nil {
			return reload, nil
		}
		return false, err
	}
	defer g.Close()
	g = withTestFault(env, g)
	if obs != nil {
		obs.SetProbe(probeGraph(g))
		defer obs.SetProbe(nil)
	}
	// Snapshots follow the graph, debounced; Close writes what is pending
	// and runs before the graph closes.
	regen := cache.NewRegenerator(g, layout(repo), 0, lg)
	defer regen.Close()
	// One walk of every agent on start: snapshots are replaced without
	// fsync, so a crash may have left one stale or empty, and a restart
	// with nothing new to project would otherwise never rewrite it.
	regen.Notify(nil)
	eng, err := memsync.New(memsync.Options{
		Root: repo, Graph: g, Logger: lg, Now: env.Now, OnChanged: regen.NotifyGroups,
		OnSignals: promotions(runCtx, g, repo, cfg, lg, env, nil),
		BatchSize: cfg.Daemon.BatchSize, BatchWindow: cfg.Daemon.BatchWindow, PollInterval: cfg.Daemon.PollInterval,
		Observer: observer,
	})
	if err != nil {
		return false, err
	}
	// Auto-commit and scheduled compaction run beside the engine and stop
	// with it; compaction rewrites journals, which the engine notices and
	// re-reads idempotently.
	var wg sync.WaitGroup
	defer wg.Wait()
	// One Committer for the daemon: auto-commit, the exchange and
	// scheduled compaction commit through it (and the ledger lets one
	// commit or exchange of the repository run at a time; issue 25 §1).
	var committer *ledger.Committer
	if _, err := os.Stat(filepath.Join(repo, ".git")); err == nil {
		committer, err = ledger.NewCommitter(ledger.CommitterOptions{Root: repo, Interval: cfg.Daemon.CommitInterval, Logger: lg, Now: env.Now})
		if err != nil {
			return false, err
		}
	}
	if cfg.Daemon.CommitInterval > 0 {
		if committer == nil {
			lg.Warn("not a git work tree: auto-commit is off", zap.String("repo", repo))
		} else {
			wg.Add(1)
			go func() { defer wg.Done(); _ = committer.Run(runCtx) }()
		}
	}
	if cfg.Sync.Remote != "" {
		// A misconfigured exchange must not stop the projection: it is
		// logged, and SIGHUP after fixing it starts the exchange.
		if err := startExchange(runCtx, &wg, repo, committer, cfg, lg, env); err != nil {
			lg.Error("exchange with the remote is off", zap.String("remote", cfg.Sync.Remote), zap.Error(err))
		}
	}
	if compact {
		commit := gitCommit(repo, lg, env.Now)
		if committer != nil {
			commit = commitWith(committer)
		}
		s := &compaction.Scheduler{Root: repo, Weekday: cfg.CompactionWeekday(), Options: compaction.Options{
			MaxDayLines: cfg.Compaction.MaxDayLines, Summarizer: summarizerArgv(cfg),
			Commit: commit, Logger: lg, Now: env.Now,
		}}
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Run(runCtx) }()
	}
	if cfg.Consolidation.Interval > 0 {
		s := &consolidate.Scheduler{Root: repo, Interval: cfg.Consolidation.Interval,
			Options: consolidate.Options{NoSync: !cfg.Append.FSync, Now: env.Now, Logger: lg}}
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Run(runCtx) }()
	}
	if ui.addr != "" {
		// The web view reads the daemon's own graph; a failure to serve
		// it is logged and never stops the projection.
		srv, err := newUIServer(env, repo, cfg, ui.token, lg, func(context.Context) *read.Reader {
			r := read.New(g, nil, nil) // the daemon's graph: never closed by a request
			r.Graph, r.Suffix = cfg.graph(), offlineVectors(cfg)
			return r
		}, g)
		if err != nil {
			return false, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// status shows the view's state from .memsync/ui.json.
			since := env.Now()
			writeUIState(repo, uiState{Addr: ui.addr, Since: since})
			err := serveUI(runCtx, env, ui.addr, srv, lg, func(url string) {
				writeUIState(repo, uiState{Addr: ui.addr, URL: url, Since: since})
				lg.Info("web view: open it with ?token= and the token", zap.String("url", url), zap.String("token_file", uiTokenFile(repo)))
			})
			if err != nil {
				lg.Error("web view stopped", zap.String("addr", ui.addr), zap.Error(err))
				writeUIState(repo, uiState{Addr: ui.addr, Error: uiErrorText(err), Since: since})
			}
		}()
	}
	if err := eng.Run(runCtx); err != nil {
		cancel()
		if errors.Is(err, memsync.ErrStoreLost) {
			// Start again on a fresh store: the engine finds it empty
			// behind cursors that say otherwise and projects every journal
			// again, without a restart.
			lg.Warn("graph store lost: opening it again", zap.Error(err))
			return true, nil
		}
		return false, err
	}
	cancel()
	return reload, nil
}

// openGraphPatiently opens the graph, waiting with backoff while it cannot
// be reached: the daemon may start before its database does. Journals are
// durable, so nothing waits in memory meanwhile.
func openGraphPatiently(ctx context.Context, cfg *Config, repo string, lg *zap.Logger, obs *metrics.Metrics) (memsync.Graph, error) {
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
		if obs != nil {
			obs.Stopped("graph unavailable at start: " + oneLineErr(err))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
	}
}

// startExchange runs the exchange with cfg.Sync.Remote beside the engine
// (SPEC §12): it commits (through c, the daemon's one Committer; nil when
// repo is no git work tree) before each exchange, whatever commit_interval
// says.
func startExchange(ctx context.Context, wg *sync.WaitGroup, repo string, c *ledger.Committer, cfg *Config, lg *zap.Logger, env *Env) error {
	if c == nil {
		return fmt.Errorf("%s is not a git work tree", repo)
	}
	x, err := ledger.NewExchanger(ledger.ExchangerOptions{
		Root: repo, Remote: cfg.Sync.Remote, Committer: c, Interval: cfg.Sync.Interval, Logger: lg, Now: env.Now,
	})
	if err != nil {
		return err
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = x.Run(ctx) }()
	return nil
}
