package memsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// LockHolder is who holds a repository's daemon lock, as the lock file
// says: the daemon (Command "run") or a command that must not run beside
// one (rebuild, compact, sync).
type LockHolder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// String is "a daemon (pid 123, since 2026-11-24T06:00:00Z)", or
// "memsync rebuild (pid ...)" for another command.
func (h LockHolder) String() string {
	who := "a daemon"
	if h.Command != "" && h.Command != "run" {
		who = "memsync " + h.Command
	}
	pid := "pid unknown"
	if h.PID > 0 {
		pid = "pid " + strconv.Itoa(h.PID)
	}
	if h.Since.IsZero() {
		return fmt.Sprintf("%s (%s)", who, pid)
	}
	return fmt.Sprintf("%s (%s, since %s)", who, pid, h.Since.UTC().Format(time.RFC3339))
}

// ErrRepoLocked is wrapped by LockedError: another process holds the
// repository's daemon lock.
var ErrRepoLocked = errors.New("the repository's daemon lock is held")

// LockedError says who holds the daemon lock of a repository.
type LockedError struct {
	Root   string
	Holder LockHolder
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is running on %s", e.Holder, e.Root)
}

// Unwrap is ErrRepoLocked.
func (e *LockedError) Unwrap() error { return ErrRepoLocked }

// How often and how long LockRepo tries again when the lock is held.
const (
	lockRetries    = 10
	lockRetryPause = 10 * time.Millisecond
)

// RepoLock is a held daemon lock: an exclusive flock on
// .memsync/daemon.lock, which the kernel releases when the process ends,
// however it ends. The file names the holder for others to report.
type RepoLock struct {
	f *os.File
}

// LockRepo takes the repository's daemon lock for command ("run" for the
// daemon) without waiting. When another process holds it, the error is a
// *LockedError naming that process.
func LockRepo(l Layout, command string, now time.Time) (*RepoLock, error) {
	path := l.DaemonLockFile()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	// RepoLockHolder (status) holds a shared lock for an instant to probe:
	// a few short retries keep such a probe from refusing a start.
	err = flockNB(f, syscall.LOCK_EX)
	for i := 0; i < lockRetries && errors.Is(err, syscall.EWOULDBLOCK); i++ {
		time.Sleep(lockRetryPause)
		err = flockNB(f, syscall.LOCK_EX)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			h, _ := readHolder(f)
			return nil, &LockedError{Root: l.Root, Holder: h}
		}
		return nil, fmt.Errorf("daemon lock %s: %w", path, err)
	}
	data, _ := json.Marshal(LockHolder{PID: os.Getpid(), Command: command, Since: now.UTC()})
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(data, '\n'), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("daemon lock %s: %w", path, err)
	}
	return &RepoLock{f: f}, nil
}

// How often WaitRepoLock tries again, and how long a holder that has not
// named itself (it took the lock an instant ago) is waited for.
const (
	lockWaitPause   = 200 * time.Millisecond
	lockUnnamedWait = 2 * time.Second
)

// WaitRepoLock takes the repository's daemon lock for command as LockRepo
// does, but waits while a command that ends holds it (compact, rebuild,
// sync: the lock file names the holder), calling waiting each time the
// holder it waits for changes. A daemon holding it (Command "run") is a
// *LockedError at once: one daemon per repository. It returns ctx's error
// when ctx ends first.
func WaitRepoLock(ctx context.Context, l Layout, command string, now func() time.Time, waiting func(LockHolder)) (*RepoLock, error) {
	var last LockHolder
	var unnamedSince time.Time
	for {
		lock, err := LockRepo(l, command, now())
		var le *LockedError
		if !errors.As(err, &le) {
			return lock, err
		}
		switch h := le.Holder; {
		case h.Command == "run":
			return nil, err
		case h.Command == "":
			// Locked an instant ago and not named yet, or an unknown
			// holder: waited for briefly, then reported.
			if unnamedSince.IsZero() {
				unnamedSince = time.Now()
			} else if time.Since(unnamedSince) > lockUnnamedWait {
				return nil, err
			}
		default:
			unnamedSince = time.Time{}
			if h != last && waiting != nil {
				waiting(h)
			}
			last = h
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(lockWaitPause):
		}
	}
}

// Release empties the lock file and releases the lock.
func (r *RepoLock) Release() error {
	if r == nil || r.f == nil {
		return nil
	}
	_ = r.f.Truncate(0)
	err := r.f.Close() // closing the last descriptor releases the flock
	r.f = nil
	return err
}

// RepoLockHolder says who holds the repository's daemon lock, if anyone,
// without taking it.
func RepoLockHolder(l Layout) (LockHolder, bool, error) {
	f, err := os.Open(l.DaemonLockFile())
	if errors.Is(err, os.ErrNotExist) {
		return LockHolder{}, false, nil
	}
	if err != nil {
		return LockHolder{}, false, fmt.Errorf("daemon lock: %w", err)
	}
	defer f.Close()
	err = flockNB(f, syscall.LOCK_SH)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return LockHolder{}, false, nil
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return LockHolder{}, false, fmt.Errorf("daemon lock: %w", err)
	}
	h, err := readHolder(f)
	return h, true, err
}

func flockNB(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}

// readHolder reads the holder the lock file names; a holder that has not
// written it yet reads as the zero LockHolder.
func readHolder(f *os.File) (LockHolder, error) {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	if err != nil {
		return LockHolder{}, err
	}
	var h LockHolder
	if len(data) > 0 {
		if err := json.Unmarshal(data, &h); err != nil {
			return LockHolder{}, nil
		}
	}
	return h, nil
}
