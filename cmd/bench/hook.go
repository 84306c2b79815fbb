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
)

// targetHook is the SessionStart hook's target, process start included.
var targetHook = atMost(300, "p95 ≤ 300 ms")

// hookPayload is a Claude Code SessionStart payload (testdata/hooks has
// the recorded shapes).
const hookPayload = `{"session_id":"bench-session","transcript_path":"/tmp/bench.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"SessionStart","source":"startup"}`

// hookWall writes a corpus of records memories from agents agents,
// projects it into the repository's embedded graph (the hook's planner
// packet reads it, as after `memsync sync`), and execs `memsync hook
// claude-code SessionStart` calls times for its first agent, as Claude Code
// does at a session's start: payload on stdin, the envelope on stdout. It
// returns each call's wall time, process start included, in ms, and how
// many calls started without a packet (none came within the hook's packet
// budget).
func hookWall(ctx context.Context, bin, tmp string, records, agents, calls int, seed int64) ([]float64, int, error) {
	repo, err := os.MkdirTemp(tmp, "hook-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(repo)
	gen := newGenerator(seed, agents, false)
	agent := gen.agents[0]
	if err := writeJournals(repo, gen, records); err != nil {
		return nil, 0, err
	}
	eg, err := embedded.Open(filepath.Join(repo, ".memsync"), nil)
	if err != nil {
		return nil, 0, err
	}
	_, err = rebuildPath(ctx, eg, repo, records)
	eg.Close()
	if err != nil {
		return nil, 0, err
	}
	fallbacks := 0
	times := make([]float64, 0, calls)
	for i := 0; i < calls; i++ {
		cmd := exec.CommandContext(ctx, bin, "hook", "claude-code", "SessionStart", "--repo", repo, "--agent", agent)
		cmd.Env = childEnv()
		cmd.Stdin = strings.NewReader(hookPayload)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		out, err := cmd.Output()
		el := time.Since(start)
		if err != nil || !strings.Contains(string(out), `"additionalContext"`) {
			return nil, 0, fmt.Errorf("memsync hook: %v: stdout %q stderr %q", err, out, stderr.String())
		}
		if !strings.Contains(string(out), "# Working memory: planner") {
			fallbacks++
		}
		times = append(times, float64(el)/float64(time.Millisecond))
	}
	return times, fallbacks, nil
}

// measureHook runs the hook figure: p50 and p95 per run.
func (b *bench) measureHook(ctx context.Context) {
	o := b.opts
	b.logf("memsync hook claude-code SessionStart: %d execs per run at %s memories", o.hookCalls, thousands(float64(o.searchCorpus)))
	for run := 0; run < o.runs && b.hookP95.err == nil; run++ {
		ms, fallbacks, err := hookWall(ctx, b.bin, b.tmp, o.searchCorpus, o.agents, o.hookCalls, o.seed+int64(run))
		if err != nil {
			b.hookP50.err, b.hookP95.err = err, err
			break
		}
		b.hookP50.add(percentile(ms, 50))
		b.hookP95.add(percentile(ms, 95))
		b.logf("memsync hook run %d: p50 %s ms, p95 %s ms, %d of %d calls without a packet", run+1,
			millis(percentile(ms, 50)), millis(percentile(ms, 95)), fallbacks, len(ms))
	}
	b.noteFailure(&b.hookP95, nil)
}
