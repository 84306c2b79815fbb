package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// A memsync killed while it held git's index lock (or a ref's) must not
// block every later commit; a lock a person's git holds, or one memsync
// cannot prove its own, stays.
func TestStaleLockOfKilledMemsync(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		lock     string // relative to .git
		owner    func(ino uint64) string
		unlocked bool
	}{
		{"index lock of a dead memsync", "index.lock", func(ino uint64) string { return fmt.Sprintf("%d %d\n", dead.Process.Pid, ino) }, true},
		{"ref lock of a dead memsync", "refs/heads/main.lock", func(ino uint64) string { return fmt.Sprintf("%d %d\n", dead.Process.Pid, ino) }, true},
		{"a live owner", "index.lock", func(ino uint64) string { return fmt.Sprintf("%d %d\n", os.Getppid(), ino) }, false},
		{"another file at the lock's path", "index.lock", func(ino uint64) string { return fmt.Sprintf("%d %d\n", dead.Process.Pid, ino+1) }, false},
		{"a person's lock (no owner record)", "index.lock", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t)
			appendLine(t, dir, "a", "first", day)
			lock := filepath.Join(dir, ".git", filepath.FromSlash(tc.lock))
			write(t, filepath.Dir(lock), filepath.Base(lock), "")
			if tc.owner != nil {
				var st syscall.Stat_t
				if err := syscall.Stat(lock, &st); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Dir(ownerFile(lock)), filepath.Base(ownerFile(lock)), tc.owner(st.Ino))
			}
			res, err := committer(t, dir).CommitNow(context.Background(), "")
			if tc.unlocked {
				if err != nil || res.Commit == "" {
					t.Fatalf("CommitNow = %+v, %v; want the dead memsync's lock removed and a commit", res, err)
				}
				if _, err := os.Stat(ownerFile(lock)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("owner record left behind: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("CommitNow = %+v, %v; want ErrLocked", res, err)
			}
			if _, err := os.Stat(lock); err != nil {
				t.Fatalf("a lock memsync cannot prove its own was removed: %v", err)
			}
		})
	}
}
