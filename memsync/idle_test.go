package memsync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// A daemon with many agents and nothing to do reads no journal between
// full rescans: ticks while file events flow only read agents with an
// event, an outbox, or a directory that cannot be watched. Before, every
// tick read every agent (2,000 agents: 12 % of a core idle). And a write
// in that quiet is still read at once, through its file event.
func TestIdleDaemonReadsNothingBetweenRescans(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	const agents = 40
	for i := range agents {
		r.appendN(fmt.Sprintf("agent%02d", i), 2)
	}
	e := r.engine()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, func() bool { return count(r.g) == 2*agents })

	// Start counting just after the first full rescan after the start (the
	// start's own events are read by then), and stop before the next.
	rescan := int64(memsync.RescanTicks)
	waitFor(t, func() bool { ticks, _ := e.IdleCounts(); return ticks > rescan && ticks%rescan == 1 })
	fromTick, fromReads := e.IdleCounts()
	waitFor(t, func() bool { ticks, _ := e.IdleCounts(); return ticks >= fromTick+rescan-3 })
	toTick, toReads := e.IdleCounts()
	if toTick >= fromTick+rescan-1 { // a slow host let a rescan in: the window says nothing
		t.Skipf("ticks %d..%d crossed a rescan", fromTick, toTick)
	}
	if got := toReads - fromReads; got != 0 {
		t.Errorf("%d quiet ticks read %d agents, want 0", toTick-fromTick, got)
	}

	// What the cache and compaction write beside the journals (snapshots,
	// MEMORY.md) reads nothing; a journal line reads its writer alone.
	waitFor(t, func() bool { ticks, _ := e.IdleCounts(); return ticks > fromTick+rescan && ticks%rescan == 1 })
	fromTick, fromReads = e.IdleCounts()
	layout := memsync.Layout{Root: r.root}
	for _, f := range []string{filepath.Join(layout.MemoryDir("agent03"), "MEMORY.md"),
		filepath.Join(layout.MemoryDir("agent04"), "MEMORY.md.tmp-1")} {
		if err := os.WriteFile(f, []byte("# snapshot\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.appendN("agent07", 1)
	waitFor(t, func() bool { return count(r.g) == 2*agents+1 })
	toTick, toReads = e.IdleCounts()
	if toTick >= fromTick+rescan-1 {
		t.Skipf("ticks %d..%d crossed a rescan", fromTick, toTick)
	}
	if got := toReads - fromReads; got != 1 {
		t.Errorf("two snapshot writes and one journal line read %d agents, want 1 (the writer)", got)
	}
}
