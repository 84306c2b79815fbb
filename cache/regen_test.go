package cache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func factsOf(layout memsync.Layout, agent string) string {
	data, _ := os.ReadFile(filepath.Join(layout.CacheDir(agent), FactsFile))
	return string(data)
}

func TestRegeneratorDebounces(t *testing.T) {
	layout := repo(t, "alice", "bob")
	g := &countingGraph{Graph: openGraph(t, nil)}
	r := NewRegenerator(g, layout, 300*time.Millisecond, zaptest.NewLogger(t))
	defer r.Close()
	for i := range 5 {
		if _, err := g.Apply(context.Background(), []memsync.Memory{
			mem("mem_r"+string(rune('0'+i)), "alice", i, journal.KindFact, "shared fact "+string(rune('0'+i)), shared),
		}); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		r.Notify([]string{"alice"})
		time.Sleep(time.Millisecond)
	}
	// Alice was notified; bob sees her shared records and is regenerated too.
	waitFor(t, "bob's snapshot", func() bool { return strings.Contains(factsOf(layout, "bob"), "shared fact 4") })
	if !strings.Contains(factsOf(layout, "alice"), "shared fact 4") {
		t.Fatal("alice's snapshot is stale")
	}
	time.Sleep(600 * time.Millisecond)
	if n := g.walks.Load(); n != 1 {
		t.Fatalf("%d walks for one burst of notices, want 1", n)
	}
}

func TestRegeneratorCloseFlushes(t *testing.T) {
	layout := repo(t, "alice")
	g := openGraph(t, []memsync.Memory{mem("mem_z", "alice", 1, journal.KindFact, "flushed on close", shared)})
	r := NewRegenerator(g, layout, time.Hour, nil)
	r.Notify([]string{"alice", "newcomer"})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(factsOf(layout, "alice"), "flushed on close") {
		t.Fatal("Close did not write the pending snapshot")
	}
	if !strings.Contains(factsOf(layout, "newcomer"), "flushed on close") {
		t.Fatal("a notified agent without a directory was not written")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r.Notify([]string{"alice"}) // after Close: harmless
}

func TestRegeneratorIdleClose(t *testing.T) {
	layout := repo(t, "alice")
	r := NewRegenerator(openGraph(t, nil), layout, 0, nil)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(layout.CacheDir("alice")); !os.IsNotExist(err) {
		t.Fatal("Close without notices wrote snapshots")
	}
}

func TestRegeneratorRetries(t *testing.T) {
	layout := repo(t, "alice")
	g := &downGraph{Graph: openGraph(t, []memsync.Memory{mem("mem_q", "alice", 1, journal.KindFact, "after the outage", shared)})}
	g.setDown(true)
	r := NewRegenerator(g, layout, 20*time.Millisecond, zaptest.NewLogger(t))
	defer r.Close()
	r.Notify([]string{"alice"})
	time.Sleep(100 * time.Millisecond)
	if factsOf(layout, "alice") != "" {
		t.Fatal("written with the graph down")
	}
	g.setDown(false)
	waitFor(t, "the retry", func() bool { return strings.Contains(factsOf(layout, "alice"), "after the outage") })
}

// NotifyGroups regenerates only the agents that see the groups named,
// after a first regeneration that covers every agent.
func TestRegeneratorNotifyGroups(t *testing.T) {
	layout := repo(t, "alice", "bob")
	g := openGraph(t, []memsync.Memory{mem("mem_g1", "alice", 1, journal.KindFact, "first private fact")})
	r := NewRegenerator(g, layout, 20*time.Millisecond, zaptest.NewLogger(t))
	defer r.Close()
	r.NotifyGroups([]string{journal.PrivateGroup("alice")})
	// The first regeneration covers bob too, though nothing of his changed.
	waitFor(t, "the first regeneration", func() bool {
		return strings.Contains(factsOf(layout, "alice"), "first private fact") && factsOf(layout, "bob") != ""
	})

	// A shared record told as alice's private change: only alice's
	// snapshot shows it, which proves bob was left alone.
	if _, err := g.Apply(context.Background(), []memsync.Memory{
		mem("mem_g2", "alice", 2, journal.KindFact, "a shared fact", shared),
	}); err != nil {
		t.Fatal(err)
	}
	r.NotifyGroups([]string{journal.PrivateGroup("alice")})
	waitFor(t, "alice's snapshot", func() bool { return strings.Contains(factsOf(layout, "alice"), "a shared fact") })
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(factsOf(layout, "bob"), "a shared fact") {
		t.Fatal("bob was regenerated for a change to alice's group")
	}

	r.NotifyGroups([]string{journal.SharedGroup})
	waitFor(t, "bob's snapshot", func() bool { return strings.Contains(factsOf(layout, "bob"), "a shared fact") })

	// A private group of an agent without a directory yet is written too.
	r.NotifyGroups([]string{journal.PrivateGroup("newcomer")})
	waitFor(t, "the newcomer's snapshot", func() bool { return strings.Contains(factsOf(layout, "newcomer"), "a shared fact") })
	r.NotifyGroups(nil) // nothing changed: harmless
}

// TestRestAfter pins the regenerator's pacing: a walk is followed by
// fifteen times its length without another (at most a sixteenth of the
// daemon's time), and never more than a minute.
func TestRestAfter(t *testing.T) {
	for _, tc := range []struct{ walk, want time.Duration }{
		{0, 0},
		{100 * time.Millisecond, 1500 * time.Millisecond},
		{2300 * time.Millisecond, 34500 * time.Millisecond}, // 2,000 agents: one walk in ~36.8 s at most
		{3 * time.Second, 45 * time.Second},
		{5 * time.Second, time.Minute},
		{30 * time.Second, time.Minute}, // a first walk of a large fleet
	} {
		if got := restAfter(tc.walk); got != tc.want {
			t.Errorf("restAfter(%v) = %v, want %v", tc.walk, got, tc.want)
		}
		if tc.walk > 0 && tc.walk*16 <= time.Minute+tc.walk {
			if share := float64(tc.walk) / float64(tc.walk+restAfter(tc.walk)); share > 1.0/16+1e-9 {
				t.Errorf("a walk of %v takes %.3f of the time, want at most 1/16", tc.walk, share)
			}
		}
	}
}

// TestRegeneratorNoRestAfterFirstWalk: the first walk after a start is
// followed by no rest (what the start's backlog left pending is served at
// once); every later walk is followed by restAfter of its length.
func TestRegeneratorNoRestAfterFirstWalk(t *testing.T) {
	layout := repo(t, "alice", "bob")
	g := openGraph(t, nil)
	// No loop goroutine: run is called directly, so nothing races the checks.
	r := &Regenerator{w: NewWriter(g, layout, zaptest.NewLogger(t)), lg: zaptest.NewLogger(t),
		delay: DefaultDelay, pending: map[string]bool{}}
	ctx := context.Background()
	for i, wantRest := range []bool{false, true, true} {
		r.mu.Lock()
		r.rest, r.all = time.Time{}, true
		r.markLocked()
		r.mu.Unlock()
		before := time.Now()
		if !r.run(ctx) {
			t.Fatalf("walk %d failed", i+1)
		}
		r.mu.Lock()
		rest := r.rest
		r.mu.Unlock()
		if got := rest.After(before); got != wantRest {
			t.Errorf("walk %d: rest until %v (walk began %v), want a rest: %v", i+1, rest, before, wantRest)
		}
		if _, err := os.Stat(filepath.Join(layout.CacheDir("bob"), FactsFile)); err != nil {
			t.Fatalf("walk %d wrote no snapshot: %v", i+1, err)
		}
	}
}
