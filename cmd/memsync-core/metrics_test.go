package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startDaemonArgs is startDaemon with more arguments for memsync run.
func startDaemonArgs(t *testing.T, repo string, env []string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), append([]string{"run", "--repo", repo, "--no-compact"}, args...)...)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH="), env...)
	d := &daemon{cmd: cmd, stderr: &lockedWriter{w: &bytes.Buffer{}}, done: make(chan error, 1)}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

// metricsAddr waits for the daemon to say where it serves metrics.
func metricsAddr(t *testing.T, d *daemon) string {
	t.Helper()
	re := regexp.MustCompile(`metrics on http://([^/\s]+)/metrics`)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(d.stderr.String()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the daemon never said where metrics are:\n%s", d.stderr)
	return ""
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metric is the value of one series in a /metrics page (0 when absent).
func metric(page, series string) float64 {
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// eventually polls cond until it holds, or fails with what it last saw.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened; last seen:\n%s", what, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDaemonMetrics scrapes a running daemon while records flow: the
// counters move, rejects and batches are counted, the Go and process
// collectors are there; /healthz answers 200, then 503 with a JSON reason
// while the graph is away (the test switch), then 200 again.
func TestDaemonMetrics(t *testing.T) {
	repo := newRepo(t, "ant", "bee")
	down := filepath.Join(t.TempDir(), "graph-down")
	// No --metrics: the config key turns them on.
	if err := os.WriteFile(configFile(repo), []byte("daemon:\n  metrics: 127.0.0.1:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, repo, []string{"MEMSYNC_GRAPH=embedded", testFaultEnv + "=" + down})
	base := "http://" + metricsAddr(t, d)

	eventually(t, "healthy", func() (bool, string) {
		code, body := get(t, base+"/healthz")
		return code == 200 && strings.Contains(body, `"ok"`), body
	})
	_, page := get(t, base+"/metrics")
	for _, s := range []string{"go_goroutines", "process_cpu_seconds_total", "memsync_passes_total", "memsync_graph_reachable 1"} {
		if !strings.Contains(page, s) {
			t.Fatalf("/metrics lacks %s:\n%s", s, page)
		}
	}
	passes := metric(page, "memsync_passes_total")

	appendRecords(t, repo, "ant", 120, 0)
	bad := filepath.Join(layout(repo).JournalDir("bee"), "2026-11-21.jsonl")
	if err := os.WriteFile(bad, []byte("not json\n{\"agent\":\"bee\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "counters move", func() (bool, string) {
		_, page := get(t, base+"/metrics")
		return metric(page, `memsync_records_projected_total{agent="ant"}`) >= 120 &&
			metric(page, `memsync_rejects_total{agent="bee"}`) == 2 &&
			metric(page, "memsync_batch_records_count") > 0 &&
			metric(page, "memsync_apply_seconds_count") > 0 &&
			metric(page, "memsync_passes_total") > passes &&
			metric(page, `memsync_lag_seconds{agent="ant"}`) == 0, page
	})

	// The graph goes away.
	if err := os.WriteFile(down, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "unhealthy", func() (bool, string) {
		code, body := get(t, base+"/healthz")
		var h struct{ Status, Reason string }
		json.Unmarshal([]byte(body), &h)
		return code == 503 && h.Status == "unavailable" && strings.Contains(h.Reason, "test switch"), fmt.Sprint(code, body)
	})
	appendRecords(t, repo, "ant", 10, 0)
	eventually(t, "outbox counted", func() (bool, string) {
		_, page := get(t, base+"/metrics")
		return metric(page, `memsync_outbox_depth{agent="ant"}`) > 0 && metric(page, "memsync_graph_write_failures_total") > 0 &&
			metric(page, "memsync_graph_reachable") == 0 && metric(page, `memsync_lag_seconds{agent="ant"}`) > 0, page
	})

	// It comes back.
	if err := os.Remove(down); err != nil {
		t.Fatal(err)
	}
	eventually(t, "healthy again, outbox drained", func() (bool, string) {
		code, body := get(t, base+"/healthz")
		_, page := get(t, base+"/metrics")
		return code == 200 && metric(page, `memsync_outbox_depth{agent="ant"}`) == 0 &&
			metric(page, `memsync_records_projected_total{agent="ant"}`) >= 130, body + page
	})
	if took, err := d.stop(t); err != nil || took > 10*time.Second {
		t.Fatalf("SIGTERM: %v after %v", err, took)
	}
}

// TestDaemonMetricsNeo4jDown: a daemon whose Neo4j cannot be reached
// serves /healthz as 503 with the reason while it waits. (Stopping the
// shared test server is not allowed here, so the server is a closed port.)
func TestDaemonMetricsNeo4jDown(t *testing.T) {
	repo := newRepo(t, "ant")
	cmd := []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=bolt://127.0.0.1:1"}
	d := startDaemonArgs(t, repo, cmd, "--metrics", "0")
	base := "http://" + metricsAddr(t, d)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("a bare port is not served on loopback: %s", base)
	}
	eventually(t, "unhealthy", func() (bool, string) {
		code, body := get(t, base+"/healthz")
		var h struct{ Status, Reason string }
		json.Unmarshal([]byte(body), &h)
		return code == 503 && strings.Contains(h.Reason, "graph unavailable at start"), fmt.Sprint(code, body)
	})
	_, page := get(t, base+"/metrics")
	if !strings.Contains(page, "memsync_graph_reachable 0") {
		t.Fatalf("graph reachable while down:\n%s", page)
	}
	if took, err := d.stop(t); err != nil || took > 10*time.Second {
		t.Fatalf("SIGTERM: %v after %v", err, took)
	}
}
