package webui

import (
	"context"
	readpath "github.com/memsync/memsync/memsync/read"
	"sync"
	"testing"
	"time"
)

// TestFleetStatusNeverWaitsOnARefresh: past FleetTTL the page answers with
// the status it has while a fresh one is read in the background (one
// read at a time); past FleetStale, or with no status yet, the request
// reads it itself. Fails on a status reused only within its TTL: the
// request after the TTL would block on the held read.
func TestFleetStatusNeverWaitsOnARefresh(t *testing.T) {
	var (
		mu      sync.Mutex
		now     = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		reads   int
		release = make(chan struct{})
		hold    bool
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s, err := New(Config{Repo: t.TempDir(), Now: clock, FleetTTL: 5 * time.Second, Token: "t",
		Open: func(context.Context) *readpath.Reader { return readpath.New(nil, nil, nil) },
		Fleet: func(ctx context.Context) (Fleet, error) {
			mu.Lock()
			reads++
			n, h := reads, hold
			mu.Unlock()
			if h {
				<-release
			}
			return Fleet{Remote: &Exchange{Remote: string(rune('0' + n))}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get := func() string {
		t.Helper()
		done := make(chan string, 1)
		go func() { f, _ := s.fleetStatus(ctx); done <- f.Remote.Remote }()
		select {
		case v := <-done:
			return v
		case <-time.After(10 * time.Second):
			t.Fatal("fleetStatus waited on a read")
			return ""
		}
	}
	if v := get(); v != "1" {
		t.Fatalf("first read %q", v)
	}
	advance(time.Second)
	if v := get(); v != "1" {
		t.Fatalf("within the TTL %q", v)
	}
	mu.Lock()
	hold = true
	mu.Unlock()
	advance(6 * time.Second) // past the TTL: answered at once, read behind
	if v := get(); v != "1" {
		t.Fatalf("past the TTL %q, want the held status", v)
	}
	if v := get(); v != "1" {
		t.Fatalf("during the background read %q", v)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.fleetMu.Lock()
		busy := s.fleetBusy
		s.fleetMu.Unlock()
		if !busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("background read never finished")
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	n := reads
	hold = false
	mu.Unlock()
	if n != 2 {
		t.Fatalf("%d reads, want 2 (one background read for two stale requests)", n)
	}
	if v := get(); v != "2" {
		t.Fatalf("after the background read %q", v)
	}
	advance(2 * FleetStale) // too old to show: read in the request
	if v := get(); v != "3" {
		t.Fatalf("past FleetStale %q", v)
	}
}
