package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// checkRepo fails the test unless git finds the repository whole: the
// index readable (git status) and every object and ref sound (git fsck).
func checkRepo(t testing.TB, dir, when string) {
	t.Helper()
	if fi, err := os.Stat(filepath.Join(dir, ".git", "index")); err == nil && fi.Size() == 0 {
		t.Fatalf("%s: .git/index is 0 bytes", when)
	}
	if out, err := gitErr(dir, "status", "--porcelain"); err != nil {
		t.Fatalf("%s: git status: %v\n%s", when, err, out)
	}
	if out, err := gitErr(dir, "fsck", "--no-progress", "--no-dangling"); err != nil {
		t.Fatalf("%s: git fsck: %v\n%s", when, err, out)
	}
}

// rendezvous holds each of n parties at wait until every party has either
// reached wait or left the round: committers that both get as far as
// taking the index lock take it at the same moment, and one that is
// turned away earlier holds no one up.
type rendezvous struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n, seen int
}

func newRendezvous(n int) *rendezvous {
	r := &rendezvous{n: n}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// reach counts a party in, once per round, and reports whether it was the
// party's first call this round.
func (r *rendezvous) reach(counted *bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !*counted {
		*counted = true
		r.seen++
		r.cond.Broadcast()
	}
}

func (r *rendezvous) wait(counted *bool) {
	r.reach(counted)
	r.mu.Lock()
	for r.seen < r.n {
		r.cond.Wait()
	}
	r.mu.Unlock()
}

// Issue 25 §1: the daemon's auto-commit and its exchange each had a
// Committer; two of them taking the index lock at once swapped each
// other's lock file and renamed an empty one into place as .git/index.
// However many committers a process makes, and however exactly their
// attempts coincide, the index stays whole and every line is committed.
func TestTwoCommittersNeverDamageTheIndex(t *testing.T) {
	dir := newRepo(t)
	cs := []*Committer{committer(t, dir), committer(t, dir)}
	ctx := context.Background()
	var commits int
	for round := 0; round < 100; round++ {
		appendLine(t, dir, "a", fmt.Sprintf("line %d", round), day)
		rv := newRendezvous(len(cs))
		var wg sync.WaitGroup
		results := make([]Result, len(cs))
		errs := make([]error, len(cs))
		for i, c := range cs {
			counted := false
			c.afterSnapshot = func() { rv.wait(&counted) }
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer rv.reach(&counted) // turned away before the lock
				results[i], errs[i] = c.CommitNow(ctx, "")
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil && !errors.Is(err, ErrLocked) {
				t.Fatalf("round %d: committer %d: %v", round, i, err)
			}
			if results[i].Commit != "" {
				commits++
			}
		}
		if round%10 == 9 {
			checkRepo(t, dir, fmt.Sprintf("round %d", round))
		} else if out, err := gitErr(dir, "status", "--porcelain"); err != nil {
			t.Fatalf("round %d: git status: %v\n%s", round, err, out)
		}
		// A round where both were turned away leaves its line for the next.
	}
	if commits == 0 {
		t.Fatal("no commit was made")
	}
	for _, c := range cs {
		c.afterSnapshot = nil
	}
	if _, err := cs[0].CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "status", "--porcelain", "--untracked-files=all", "agents"); out != "" {
		t.Errorf("owned files left uncommitted:\n%s", out)
	}
}

// A lock memsync holds is the very file at the lock's name, and no two
// callers hold it at once, however many try together, in one process or
// in several (the daemon and memsync compact commit through git's lock
// files alone).
func TestLockIsExclusiveUnderContention(t *testing.T) {
	dir := newRepo(t)
	lock := filepath.Join(dir, ".git", "index.lock")
	var holders, taken int64
	var wg sync.WaitGroup
	errs := make(chan error, 8*300*2)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				l, err := createLock(lock)
				if errors.Is(err, os.ErrExist) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if n := atomic.AddInt64(&holders, 1); n != 1 {
					errs <- fmt.Errorf("%d holders of one lock", n)
				}
				atomic.AddInt64(&taken, 1)
				held, err1 := l.Stat()
				named, err2 := os.Lstat(lock)
				if err1 != nil || err2 != nil || !os.SameFile(held, named) {
					errs <- fmt.Errorf("the file held is not the lock (%v, %v)", err1, err2)
				}
				atomic.AddInt64(&holders, -1)
				l.Close()
				os.Remove(lock)
				l.forgetOwner()
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err, ok := <-errs; ok {
		t.Fatalf("%v (and %d more faults)", err, len(errs))
	}
	if taken == 0 {
		t.Fatal("the lock was never taken")
	}
	leftovers, _ := filepath.Glob(ownerFile(lock) + "*")
	if _, err := os.Lstat(lock); !errors.Is(err, os.ErrNotExist) || len(leftovers) > 0 {
		t.Errorf("left behind: lock %v, records %v", err, leftovers)
	}
}

// One commit or exchange of a repository runs at a time in a process,
// whichever Committer or Exchanger it goes through. A commit is turned away
// at once with ErrLocked (skipped, not queued); an exchange waits up to its
// interval (here 100 ms, while the first never finishes) and is then
// skipped, recording nothing. Once the first is done the next goes through.
func TestOneCommitOrExchangeAtATime(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		first string // what holds the turn: "commit" or "exchange"
		then  string // what is tried meanwhile
	}{
		{"a commit during a commit", "commit", "commit"},
		{"an exchange during a commit", "commit", "exchange"},
		{"a commit during an exchange", "exchange", "commit"},
		{"an exchange during an exchange", "exchange", "exchange"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, hosts := remoteAndHosts(t, 1)
			dir := hosts[0]
			appendLine(t, dir, "a", "first", day)
			first := exchanger(t, dir)
			var during error
			var duringStatus bool
			try := func() {
				// Another Committer and Exchanger, as the daemon had.
				other, err := NewExchanger(ExchangerOptions{Root: dir, Remote: "origin", Committer: committer(t, dir), Interval: 100 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(dir, filepath.FromSlash(ExchangeFile)))
				if tc.then == "commit" {
					_, during = other.opts.Committer.CommitNow(ctx, "")
				} else {
					_, during = other.ExchangeNow(ctx)
				}
				_, err = os.Stat(filepath.Join(dir, filepath.FromSlash(ExchangeFile)))
				duringStatus = err == nil
			}
			if tc.first == "commit" {
				first.opts.Committer.afterSnapshot = try
				if _, err := first.opts.Committer.CommitNow(ctx, ""); err != nil {
					t.Fatal(err)
				}
			} else {
				first.beforePush = try
				exchange(t, first)
			}
			if !errors.Is(during, ErrLocked) {
				t.Fatalf("%s during a %s = %v, want ErrLocked", tc.then, tc.first, during)
			}
			if duringStatus {
				t.Errorf("a skipped %s recorded an exchange status", tc.then)
			}
			appendLine(t, dir, "a", "second", day.Add(time.Second))
			x := exchanger(t, dir)
			if tc.then == "commit" {
				if res, err := x.opts.Committer.CommitNow(ctx, ""); err != nil || res.Commit == "" {
					t.Fatalf("commit afterwards = %+v, %v", res, err)
				}
			} else {
				exchange(t, x)
			}
			checkRepo(t, dir, "afterwards")
		})
	}
}

// An exchange that finds a commit under way waits for it rather than
// skipping its round: with auto-commit and exchange ticking together
// (both every second in issue 25's repro) the exchange would otherwise
// lose every round to the commit and never push.
func TestExchangeWaitsForACommitUnderWay(t *testing.T) {
	_, hosts := remoteAndHosts(t, 1)
	dir := hosts[0]
	appendLine(t, dir, "a", "first", day)
	c := committer(t, dir)
	x := exchanger(t, dir) // a minute's interval: far longer than the commit
	var wg sync.WaitGroup
	var xerr error
	c.afterSnapshot = func() {
		wg.Add(1)
		go func() { defer wg.Done(); _, xerr = x.ExchangeNow(context.Background()) }()
	}
	if res, err := c.CommitNow(context.Background(), ""); err != nil || res.Commit == "" {
		t.Fatalf("CommitNow = %+v, %v", res, err)
	}
	wg.Wait()
	if xerr != nil {
		t.Fatalf("the exchange behind a commit: %v", xerr)
	}
	if local, pushed := headOf(t, dir), strings.TrimSpace(git(t, dir, "rev-parse", "origin/main")); local != pushed {
		t.Errorf("HEAD %s, origin/main %s: the exchange did not push the commit", local, pushed)
	}
}
