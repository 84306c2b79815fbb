package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/packet"
)

// packetRequests turns the search queries into packet requests: the
// query's words as the goal, its agent, the four roles in turn, as of asOf.
func packetRequests(queries []memsync.SearchQuery, asOf time.Time) []packet.Request {
	out := make([]packet.Request, len(queries))
	for i, q := range queries {
		agent, _ := journal.GroupAgent(q.Groups[len(q.Groups)-1])
		out[i] = packet.Request{Role: packet.Roles[i%len(packet.Roles)], Agent: agent, Goal: q.Text,
			Task: fmt.Sprintf("task-%d", i%7), AsOf: asOf}
	}
	return out
}

// packetLatencies builds every packet once in process (packet.BuildPacket:
// the candidates' recall and lists, their signals, score.Evaluate, routing)
// and returns each one's latency in ms.
func packetLatencies(ctx context.Context, g memsync.Graph, reqs []packet.Request) ([]float64, error) {
	out := make([]float64, len(reqs))
	for i, req := range reqs {
		start := time.Now()
		_, err := packet.BuildPacket(ctx, g, req)
		out[i] = float64(time.Since(start)) / float64(time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("packet %q: %w", req.Goal, err)
		}
	}
	return out, nil
}

// packetCommandLatencies runs `memsync packet --json` through the built
// binary for each request against g (the embedded store is reached through
// a repository whose .memsync is g's directory; every agent gets its
// directory, since the command refuses an unknown agent), and `memsync
// packet --help` as often, which starts the process and parses flags but reads
// nothing: the process start. Both in ms.
func (b *bench) packetCommandLatencies(ctx context.Context, c *column, g memsync.Graph, agents []string, reqs []packet.Request) (cmd, start []float64, err error) {
	if b.bin == "" {
		if err := b.build(ctx); err != nil {
			return nil, nil, err
		}
	}
	repo, err := os.MkdirTemp(b.tmp, "packet-repo-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(repo)
	for _, a := range agents {
		if err := os.MkdirAll(filepath.Join(repo, "agents", a, "memory", "journal"), 0o755); err != nil {
			return nil, nil, err
		}
	}
	if e, ok := g.(*embedded.Graph); ok {
		if err := os.Symlink(filepath.Dir(e.Path()), filepath.Join(repo, ".memsync")); err != nil {
			return nil, nil, err
		}
	}
	run := func(args ...string) (float64, error) {
		cmd := exec.CommandContext(ctx, b.bin, args...)
		cmd.Env = childEnv()
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		ms := float64(time.Since(t0)) / float64(time.Millisecond)
		if err != nil {
			return 0, fmt.Errorf("memsync %s: %v: %s", strings.Join(args, " "), err, out)
		}
		if args[1] == "--json" && strings.Contains(string(out), `"offline": true`) {
			return 0, fmt.Errorf("memsync %s answered offline: %s", strings.Join(args, " "), out)
		}
		return ms, nil
	}
	for _, req := range reqs {
		args := append([]string{"packet", "--json", "--repo", repo, "--role", string(req.Role), "--agent", req.Agent,
			"--goal", req.Goal, "--task", req.Task, "--as-of", req.AsOf.Format(time.RFC3339Nano)}, c.b.cliArgs()...)
		ms, err := run(args...)
		if err != nil {
			return nil, nil, err
		}
		cmd = append(cmd, ms)
		ms, err = run("packet", "--help")
		if err != nil {
			return nil, nil, err
		}
		start = append(start, ms)
	}
	return cmd, start, nil
}

// measurePacket times packets on the loaded search corpus: in process,
// then through the built command (with its process start apart).
func (b *bench) measurePacket(ctx context.Context, c *column, g memsync.Graph, agents []string, queries []memsync.SearchQuery, asOf time.Time) {
	reqs := packetRequests(queries, asOf)
	for run := 0; run < b.opts.runs; run++ {
		lat, err := packetLatencies(ctx, g, reqs)
		if err != nil {
			c.packetP50.err, c.packetP95.err = err, err
			b.noteFailure(&c.packetP50, c)
			return
		}
		c.packetP50.add(percentile(lat, 50))
		c.packetP95.add(percentile(lat, 95))
		b.logf("%s packet run %d: p50 %s ms, p95 %s ms, max %s ms", c.b.name, run+1,
			millis(percentile(lat, 50)), millis(percentile(lat, 95)), millis(percentile(lat, 100)))
	}
	cmdReqs := reqs[:min(len(reqs), b.opts.packetCommands)]
	for run := 0; run < b.opts.runs; run++ {
		cmd, start, err := b.packetCommandLatencies(ctx, c, g, agents, cmdReqs)
		if err != nil {
			c.packetCmdP50.err, c.packetCmdP95.err = err, err
			b.noteFailure(&c.packetCmdP50, c)
			return
		}
		c.packetCmdP50.add(percentile(cmd, 50))
		c.packetCmdP95.add(percentile(cmd, 95))
		c.processStart.add(percentile(start, 50))
		b.logf("%s packet command run %d: p50 %s ms, p95 %s ms; process start (packet --help) p50 %s ms", c.b.name, run+1,
			millis(percentile(cmd, 50)), millis(percentile(cmd, 95)), millis(percentile(start, 50)))
	}
}
