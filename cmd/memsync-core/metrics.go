package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/metrics"
)

// startMetrics serves /metrics and /healthz when --metrics (else
// daemon.metrics) names an address, and sets *obs to the metrics the
// daemon reports to; with neither it does nothing. The listener is bound
// before the daemon starts, so a taken port fails the start at once. The
// address served is printed on stderr. stop shuts the server down.
func startMetrics(env *Env, cfg *Config, flagValue string, obs **metrics.Metrics) (stop func(), err error) {
	spec := flagValue
	if spec == "" {
		spec = cfg.Daemon.Metrics
	}
	if spec == "" {
		return func() {}, nil
	}
	addr, err := cmdline.MetricsAddr(spec)
	if err != nil {
		return nil, fmt.Errorf("--metrics %q: %w", spec, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	m := metrics.New()
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(env.Stderr, "memsync run: metrics on http://%s/metrics, health on http://%s/healthz\n", ln.Addr(), ln.Addr())
	*obs = m
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// probeGraph is /healthz's own look at the graph: fetching a uuid that
// does not exist costs one index lookup and fails when the graph is gone.
func probeGraph(g memsync.Graph) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := g.Get(ctx, []string{"memsync-healthz-probe"})
		return err
	}
}

// testFaultEnv names a file whose existence makes the graph unreachable
// for the daemon: the switch the metrics test flips to take the embedded
// store "away" (the real store cannot be stopped like a server). Unset in
// production, where it changes nothing.
const testFaultEnv = "MEMSYNC_TEST_GRAPH_DOWN_FILE"

// withTestFault wraps g in the test switch when testFaultEnv is set.
func withTestFault(env *Env, g memsync.Graph) memsync.Graph {
	path := env.Getenv(testFaultEnv)
	if path == "" {
		return g
	}
	return faultGraph{Graph: g, switchFile: path}
}

// faultGraph is a Graph that is unreachable while switchFile exists.
type faultGraph struct {
	memsync.Graph
	switchFile string
}

func (f faultGraph) down() error {
	if _, err := os.Stat(f.switchFile); err == nil {
		return fmt.Errorf("%w: test switch %s is on", memsync.ErrUnavailable, f.switchFile)
	}
	return nil
}

func (f faultGraph) Apply(ctx context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	if err := f.down(); err != nil {
		return memsync.ApplyResult{}, err
	}
	return f.Graph.Apply(ctx, batch)
}

func (f faultGraph) Get(ctx context.Context, uuids []string) (map[string]memsync.Node, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	return f.Graph.Get(ctx, uuids)
}

func (f faultGraph) Stats(ctx context.Context) (memsync.Stats, error) {
	if err := f.down(); err != nil {
		return memsync.Stats{}, err
	}
	return f.Graph.Stats(ctx)
}
