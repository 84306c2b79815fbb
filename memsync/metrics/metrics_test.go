package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

func TestHealthz(t *testing.T) {
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name   string
		setup  func(m *Metrics)
		code   int
		reason string
	}{
		{"before the first pass", func(m *Metrics) {}, 503, "engine not running: starting"},
		{"waiting for the graph", func(m *Metrics) { m.Stopped("graph unavailable at start: refused") }, 503, "graph unavailable at start"},
		{"running", func(m *Metrics) { m.Pass(time.Millisecond, memsync.GraphHealth{Reachable: true}, nil) }, 200, ""},
		{"engine paused", func(m *Metrics) {
			m.Pass(time.Millisecond, memsync.GraphHealth{Reason: "graph unavailable: refused"}, nil)
		}, 503, "graph unavailable: refused"},
		{"a write failed", func(m *Metrics) {
			m.Pass(time.Millisecond, memsync.GraphHealth{Reachable: true}, nil)
			m.GraphWrite(make([]memsync.Memory, 3), time.Millisecond, down)
		}, 503, "connection refused"},
		{"the probe fails", func(m *Metrics) {
			m.Pass(time.Millisecond, memsync.GraphHealth{Reachable: true}, nil)
			m.SetProbe(func(context.Context) error { return down })
		}, 503, "graph unavailable: connection refused"},
		{"stopped", func(m *Metrics) {
			m.Pass(time.Millisecond, memsync.GraphHealth{Reachable: true}, nil)
			m.Stopped("stopped")
		}, 503, "engine not running: stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			tc.setup(m)
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			body := rec.Body.String()
			if rec.Code != tc.code || !strings.Contains(body, tc.reason) || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s, want %d with %q", rec.Code, body, tc.code, tc.reason)
			}
		})
	}
}

func TestObserverCounts(t *testing.T) {
	m := New()
	batch := []memsync.Memory{
		{Record: journal.Record{Agent: "a", Kind: journal.KindFact}},
		{Record: journal.Record{Agent: "a", Kind: journal.KindCompaction}},
		{Record: journal.Record{Agent: "b", Kind: journal.KindPromotion}},
	}
	m.GraphWrite(batch, 2*time.Millisecond, nil)
	m.Rejected("b", 2)
	m.Pass(time.Millisecond, memsync.GraphHealth{Reachable: true}, []memsync.AgentBacklog{{Agent: "a", Outbox: 3, LagSeconds: 7}})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`memsync_records_projected_total{agent="a"} 2`, `memsync_records_projected_total{agent="b"} 1`,
		`memsync_rejects_total{agent="b"} 2`, `memsync_outbox_depth{agent="a"} 3`, `memsync_lag_seconds{agent="a"} 7`,
		"memsync_compactions_total 1", "memsync_promotions_total 1", "memsync_batch_records_sum 3",
		"memsync_passes_total 1", "memsync_graph_reachable 1", "go_goroutines", "process_open_fds",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
