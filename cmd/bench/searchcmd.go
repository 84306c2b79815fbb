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
	"github.com/memsync/memsync/memsync"
)

// searchCommandLatencies times `memsync search --json` through the built
// binary on g's store (embedded: the store itself, through a repository
// whose .memsync links to it), one exec per query, in ms. With a real
// model (--vectors-model) the command embeds with it too (cliArgs),
// and every answer must carry a vector part: each process loads the
// store's vector index before it can answer.
func (b *bench) searchCommandLatencies(ctx context.Context, c *column, g memsync.Graph, agents []string, queries []memsync.SearchQuery, asOf time.Time) ([]float64, error) {
	if b.bin == "" {
		if err := b.build(ctx); err != nil {
			return nil, err
		}
	}
	repo, err := os.MkdirTemp(b.tmp, "search-repo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(repo)
	for _, a := range agents {
		if err := os.MkdirAll(filepath.Join(repo, "agents", a, "memory", "journal"), 0o755); err != nil {
			return nil, err
		}
	}
	if e, ok := g.(*embedded.Graph); ok {
		if err := os.Symlink(filepath.Dir(e.Path()), filepath.Join(repo, ".memsync")); err != nil {
			return nil, err
		}
	}
	model := b.cliEmbedder()
	var out []float64
	for _, req := range packetRequests(queries, asOf) {
		args := append([]string{"search", "--json", "--repo", repo, "--agent", req.Agent, "--query", req.Goal}, c.b.cliArgs()...)
		cmd := exec.CommandContext(ctx, b.bin, args...)
		cmd.Env = childEnv()
		t0 := time.Now()
		stdout, err := cmd.Output()
		ms := float64(time.Since(t0)) / float64(time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("memsync %s: %w", strings.Join(args, " "), err)
		}
		if strings.Contains(string(stdout), `"offline": true`) {
			return nil, fmt.Errorf("memsync %s answered offline", strings.Join(args, " "))
		}
		if model != "" && strings.Contains(string(stdout), `"uuid"`) && !strings.Contains(string(stdout), `"retrieval"`) {
			return nil, fmt.Errorf("memsync %s: no hit has a vector part: %.300s", strings.Join(args, " "), stdout)
		}
		out = append(out, ms)
	}
	return out, nil
}

// cliEmbedder is the --embedder the commands get: the real model the
// graphs embed with (--vectors-model), "" for none or the test embedder
// (which no command has).
func (b *bench) cliEmbedder() string {
	switch m := b.opts.vectorsModel; m {
	case "", "test", "none":
		return ""
	default:
		return m
	}
}

// measureSearchCommand times the search command (issue 27's budget holds
// for the command, with its process start and the vector index's load).
func (b *bench) measureSearchCommand(ctx context.Context, c *column, g memsync.Graph, agents []string, queries []memsync.SearchQuery, asOf time.Time) {
	qs := queries[:min(len(queries), b.opts.packetCommands)]
	for run := 0; run < b.opts.runs; run++ {
		lat, err := b.searchCommandLatencies(ctx, c, g, agents, qs, asOf)
		if err != nil {
			c.searchCmdP50.err, c.searchCmdP95.err = err, err
			b.noteFailure(&c.searchCmdP50, c)
			return
		}
		c.searchCmdP50.add(percentile(lat, 50))
		c.searchCmdP95.add(percentile(lat, 95))
		b.logf("%s search command run %d: p50 %s ms, p95 %s ms, max %s ms (%d execs, --embedder %q)", c.b.name, run+1,
			millis(percentile(lat, 50)), millis(percentile(lat, 95)), millis(percentile(lat, 100)), len(lat), b.cliEmbedder())
	}
}
