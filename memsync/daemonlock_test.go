package memsync

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The daemon lock: one holder at a time, who is named to the others and to
// RepoLockHolder; released, it is free for the next.
func TestRepoLock(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	if _, held, err := RepoLockHolder(l); err != nil || held {
		t.Fatalf("no lock file yet: held %t, %v", held, err)
	}
	since := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	lock, err := LockRepo(l, "run", since)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockRepo(l, "rebuild", since.Add(time.Minute))
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrRepoLocked) {
		t.Fatalf("second LockRepo: %v", err)
	}
	want := LockHolder{PID: os.Getpid(), Command: "run", Since: since}
	if le.Holder != want || !strings.HasPrefix(err.Error(), "a daemon (pid "+strconv.Itoa(os.Getpid())+", since 2026-11-24T06:00:00Z) is running on ") {
		t.Fatalf("holder %+v, error %q", le.Holder, err)
	}
	if h, held, err := RepoLockHolder(l); err != nil || !held || h != want {
		t.Fatalf("RepoLockHolder = %+v %t %v", h, held, err)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	if _, held, err := RepoLockHolder(l); err != nil || held {
		t.Fatalf("after Release: held %t, %v", held, err)
	}
	again, err := LockRepo(l, "compact", since)
	if err != nil {
		t.Fatalf("LockRepo after Release: %v", err)
	}
	_, err = LockRepo(l, "run", since)
	if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "memsync compact (pid ") {
		t.Fatalf("held by compact: %v", err)
	}
	again.Release()
}
