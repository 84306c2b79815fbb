// Package metrics exposes the daemon as Prometheus metrics and a health
// check. Metrics implements memsync.Observer, so the engine reports to it
// without knowing Prometheus exists; Handler serves /metrics (memsync's
// own series, plus the Go runtime and process collectors) and /healthz.
package metrics

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// Metrics holds the daemon's series and its health. The zero value is not
// usable: call New.
type Metrics struct {
	reg *prometheus.Registry

	projected    *prometheus.CounterVec
	writeErrors  prometheus.Counter
	rejects      *prometheus.CounterVec
	outbox       *prometheus.GaugeVec
	lag          *prometheus.GaugeVec
	batchSize    prometheus.Histogram
	applySeconds prometheus.Histogram
	passes       prometheus.Counter
	passSeconds  prometheus.Histogram
	reachable    prometheus.Gauge
	compactions  prometheus.Counter
	promotions   prometheus.Counter

	mu      sync.Mutex
	running bool
	health  memsync.GraphHealth
	probe   func(context.Context) error // nil: trust the engine's view
	probed  time.Time
	probeOK error
}

var _ memsync.Observer = (*Metrics)(nil)

// New registers every series in a registry of its own.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.projected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memsync_records_projected_total",
		Help: "Records the graph acknowledged (replays included), by authoring agent."}, []string{"agent"})
	m.writeErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "memsync_graph_write_failures_total",
		Help: "Graph writes that failed because the graph could not be reached (their records went to an outbox)."})
	m.rejects = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memsync_rejects_total",
		Help: "Journal lines rejected (recorded in sync/rejects.jsonl), by agent."}, []string{"agent"})
	m.outbox = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memsync_outbox_depth",
		Help: "Outbox entries waiting for the graph, by agent."}, []string{"agent"})
	m.lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memsync_lag_seconds",
		Help: "Age of the oldest record not yet in the graph, by agent; 0 when caught up."}, []string{"agent"})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memsync_batch_records",
		Help: "Records per graph write.", Buckets: []float64{1, 5, 10, 50, 100, 250, 500, 1000, 2500, 5000}})
	m.applySeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memsync_apply_seconds",
		Help: "Latency of one graph write.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)})
	m.passes = prometheus.NewCounter(prometheus.CounterOpts{Name: "memsync_passes_total",
		Help: "Daemon passes over the journals."})
	m.passSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memsync_pass_seconds",
		Help: "Duration of one daemon pass.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)})
	m.reachable = prometheus.NewGauge(prometheus.GaugeOpts{Name: "memsync_graph_reachable",
		Help: "1 when the graph is reachable, 0 when not."})
	m.compactions = prometheus.NewCounter(prometheus.CounterOpts{Name: "memsync_compactions_total",
		Help: "Compaction records projected (one per compaction of an agent's day)."})
	m.promotions = prometheus.NewCounter(prometheus.CounterOpts{Name: "memsync_promotions_total",
		Help: "Promotion records projected (private memories promoted to shared)."})
	for _, c := range []prometheus.Collector{m.projected, m.writeErrors, m.rejects, m.outbox, m.lag, m.batchSize,
		m.applySeconds, m.passes, m.passSeconds, m.reachable, m.compactions, m.promotions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	m.health = memsync.GraphHealth{Reason: "starting"}
	return m
}

// GraphWrite counts a graph write (memsync.Observer).
func (m *Metrics) GraphWrite(batch []memsync.Memory, took time.Duration, err error) {
	m.applySeconds.Observe(took.Seconds())
	if err != nil {
		m.writeErrors.Inc()
		m.setHealth(memsync.GraphHealth{Reason: "graph unavailable: " + err.Error()})
		return
	}
	m.batchSize.Observe(float64(len(batch)))
	byAgent := map[string]int{}
	for i := range batch {
		byAgent[batch[i].Agent]++
		switch batch[i].Kind {
		case journal.KindCompaction:
			m.compactions.Inc()
		case journal.KindPromotion:
			m.promotions.Inc()
		}
	}
	for a, n := range byAgent {
		m.projected.WithLabelValues(a).Add(float64(n))
	}
	m.setHealth(memsync.GraphHealth{Reachable: true})
}

// Rejected counts rejects (memsync.Observer).
func (m *Metrics) Rejected(agent string, n int) { m.rejects.WithLabelValues(agent).Add(float64(n)) }

// Pass records a pass and the backlog it left (memsync.Observer).
func (m *Metrics) Pass(took time.Duration, graph memsync.GraphHealth, backlog []memsync.AgentBacklog) {
	m.passes.Inc()
	m.passSeconds.Observe(took.Seconds())
	for _, b := range backlog {
		m.outbox.WithLabelValues(b.Agent).Set(float64(b.Outbox))
		m.lag.WithLabelValues(b.Agent).Set(b.LagSeconds)
	}
	m.mu.Lock()
	m.running = true
	m.mu.Unlock()
	m.setHealth(graph)
}

// Stopped says the engine is not running (starting, waiting for the graph
// at start, reloading); reason says why, for /healthz.
func (m *Metrics) Stopped(reason string) {
	m.mu.Lock()
	m.running = false
	m.mu.Unlock()
	m.setHealth(memsync.GraphHealth{Reason: reason})
}

// SetProbe gives /healthz a cheap check of the graph itself, run at most
// every few seconds: without it a graph that went away while no record
// was written would look reachable until the next write. nil removes it.
func (m *Metrics) SetProbe(probe func(context.Context) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.probe, m.probed, m.probeOK = probe, time.Time{}, nil
}

func (m *Metrics) setHealth(h memsync.GraphHealth) {
	m.mu.Lock()
	m.health = h
	m.mu.Unlock()
	if h.Reachable {
		m.reachable.Set(1)
	} else {
		m.reachable.Set(0)
	}
}

// probeEvery bounds how often /healthz asks the graph itself.
const probeEvery = 2 * time.Second

// Healthy says whether the engine runs and the graph is reachable, and if
// not, why.
func (m *Metrics) Healthy(ctx context.Context) (bool, string) {
	m.mu.Lock()
	running, h, probe := m.running, m.health, m.probe
	stale := time.Since(m.probed) >= probeEvery
	probeErr := m.probeOK
	m.mu.Unlock()
	if !running {
		return false, "engine not running: " + h.Reason
	}
	if !h.Reachable {
		return false, h.Reason
	}
	if probe != nil {
		if stale {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			probeErr = probe(pctx)
			cancel()
			m.mu.Lock()
			m.probed, m.probeOK = time.Now(), probeErr
			m.mu.Unlock()
		}
		if probeErr != nil {
			m.reachable.Set(0)
			return false, "graph unavailable: " + probeErr.Error()
		}
	}
	return true, ""
}

// Handler serves /metrics and /healthz: 200 {"status":"ok"} while the
// engine runs and the graph is reachable, else 503 {"status":
// "unavailable", "reason": ...}.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		ok, reason := m.Healthy(r.Context())
		w.Header().Set("Content-Type", "application/json")
		body := map[string]string{"status": "ok"}
		if !ok {
			body = map[string]string{"status": "unavailable", "reason": reason}
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	return mux
}
