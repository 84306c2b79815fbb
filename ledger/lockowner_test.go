package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
		owner    func(id fileID) string
		unlocked bool
		record   string // the owner record's name after ownerFile(lock); "" for an older memsync's
	}{
		{"index lock of a dead memsync (its attempt's own record)", "index.lock", func(id fileID) string { return fmt.Sprintf("%d %d %d\n", dead.Process.Pid, id.ino, id.born) }, true, fmt.Sprintf(".%d-0123abcd", dead.Process.Pid)},
		{"a live owner (its attempt's own record)", "index.lock", func(id fileID) string { return fmt.Sprintf("%d %d %d\n", os.Getppid(), id.ino, id.born) }, false, fmt.Sprintf(".%d-0123abcd", os.Getppid())},
		{"index lock of a dead memsync", "index.lock", func(id fileID) string { return fmt.Sprintf("%d %d %d\n", dead.Process.Pid, id.ino, id.born) }, true, ""},
		{"ref lock of a dead memsync", "refs/heads/main.lock", func(id fileID) string { return fmt.Sprintf("%d %d %d\n", dead.Process.Pid, id.ino, id.born) }, true, ""},
		{"a record of an older memsync (no birth time)", "index.lock", func(id fileID) string { return fmt.Sprintf("%d %d\n", dead.Process.Pid, id.ino) }, true, ""},
		{"a live owner", "index.lock", func(id fileID) string { return fmt.Sprintf("%d %d %d\n", os.Getppid(), id.ino, id.born) }, false, ""},
		{"another file at the lock's path", "index.lock", func(id fileID) string { return fmt.Sprintf("%d %d %d\n", dead.Process.Pid, id.ino+1, id.born) }, false, ""},
		// A dead memsync's record outlived its lock (renamed into place as
		// the index), git replaced the index, and git's next lock got the
		// freed inode: the same inode, born later. Git's live lock stays.
		{"a reused inode (a live git's lock)", "index.lock", func(id fileID) string { return fmt.Sprintf("%d %d %d\n", dead.Process.Pid, id.ino, id.born-1) }, false, ""},
		{"a person's lock (no owner record)", "index.lock", nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t)
			appendLine(t, dir, "a", "first", day)
			lock := filepath.Join(dir, ".git", filepath.FromSlash(tc.lock))
			write(t, filepath.Dir(lock), filepath.Base(lock), "")
			if tc.owner != nil {
				id, err := identify(lock)
				if err != nil {
					t.Fatal(err)
				}
				if id.born == 0 {
					t.Skip("the file system keeps no birth time")
				}
				write(t, filepath.Dir(ownerFile(lock)), filepath.Base(ownerFile(lock))+tc.record, tc.owner(id))
				// A private file the dead memsync never linked.
				write(t, filepath.Dir(ownerFile(lock)), filepath.Base(ownerFile(lock))+fmt.Sprintf(".%d-feed%s", dead.Process.Pid, lockTempSuffix), "")
			}
			res, err := committer(t, dir).CommitNow(context.Background(), "")
			if tc.unlocked {
				if err != nil || res.Commit == "" {
					t.Fatalf("CommitNow = %+v, %v; want the dead memsync's lock removed and a commit", res, err)
				}
				if left, _ := filepath.Glob(ownerFile(lock) + "*"); len(left) > 0 {
					t.Errorf("owner records or private files left behind: %v", left)
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
