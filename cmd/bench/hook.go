package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// targetHook is the SessionStart hook's target, process start included.
var targetHook = atMost(300, "p95 ≤ 300 ms")

// hookPayload is a Claude Code SessionStart payload (testdata/hooks has
// the recorded shapes).
const hookPayload = `{"session_id":"bench-session","transcript_path":"/tmp/bench.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"SessionStart","source":"startup"}`

// hookWall writes a corpus of records memories from agents agents and
// execs `memsync hook claude-code SessionStart` calls times for its first
// agent, as Claude Code does at a session's start: payload on stdin, the
// envelope on stdout. It returns each call's wall time, process start
// included, in ms.
func hookWall(ctx context.Context, bin, tmp string, records, agents, calls int, seed int64) ([]float64, error) {
	repo, err := os.MkdirTemp(tmp, "hook-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(repo)
	gen := newGenerator(seed, agents, false)
	agent := gen.agents[0]
	if err := writeJournals(repo, gen, records); err != nil {
		return nil, err
	}
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
			return nil, fmt.Errorf("memsync hook: %v: stdout %q stderr %q", err, out, stderr.String())
		}
		times = append(times, float64(el)/float64(time.Millisecond))
	}
	return times, nil
}

// measureHook runs the hook figure: p50 and p95 per run.
func (b *bench) measureHook(ctx context.Context) {
	o := b.opts
	b.logf("memsync hook claude-code SessionStart: %d execs per run at %s memories", o.hookCalls, thousands(float64(o.searchCorpus)))
	for run := 0; run < o.runs && b.hookP95.err == nil; run++ {
		ms, err := hookWall(ctx, b.bin, b.tmp, o.searchCorpus, o.agents, o.hookCalls, o.seed+int64(run))
		if err != nil {
			b.hookP50.err, b.hookP95.err = err, err
			break
		}
		b.hookP50.add(percentile(ms, 50))
		b.hookP95.add(percentile(ms, 95))
		b.logf("memsync hook run %d: p50 %s ms, p95 %s ms", run+1, millis(percentile(ms, 50)), millis(percentile(ms, 95)))
	}
	b.noteFailure(&b.hookP95, nil)
}
