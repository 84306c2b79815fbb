package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// A memsync process killed (kill -9, a power cut) while it holds one of
// git's lock files (.git/index.lock, a ref's .lock) would leave it behind
// and block every later commit, memsync's and the person's, as a killed git
// does. So memsync records, beside each lock it creates, an owner file with
// its pid and the lock's identity (inode and birth time); a lock whose
// owner file names a process that is gone and the very same file is
// memsync's own leftover and is removed. A lock without such a record is a
// person's (or git's) and is never touched.
//
// The inode alone does not name a file over time: a process killed after
// renaming its lock into place (the index, a ref) but before forgetting
// the record leaves a record whose inode is that of the index or ref; once
// git replaces that file, the file system may give the freed inode to the
// next lock git creates, and a live git's lock would pass for a dead
// memsync's. The birth time (statx) tells them apart.

// ownerFile is where the owner of lock is recorded: in the directory of
// the lock's repository data, never among the refs (git would read a
// file there as a ref).
func ownerFile(lock string) string {
	sum := sha256.Sum256([]byte(lock))
	dir := filepath.Dir(lock)
	// Walk up to the git directory: the one holding HEAD or objects.
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "objects")); err == nil {
			dir = d
			break
		}
		if _, err := os.Stat(filepath.Join(d, "HEAD")); err == nil && filepath.Base(d) != "logs" {
			dir = d
			break
		}
	}
	return filepath.Join(dir, "memsync-lock-"+hex.EncodeToString(sum[:8]))
}

// createLock creates lock exclusively, as git does, after removing it if a
// dead memsync process left it. The lock is made as a private file first,
// whose owner (this pid, its inode) is recorded, and then linked to the
// lock's name (atomic, and refused when the name exists): so a recorded
// inode at the lock's name is always one this process made, whenever it
// died.
func createLock(lock string) (*os.File, error) {
	if _, err := os.Lstat(lock); err == nil {
		removeDeadOwnersLock(lock)
	}
	return tryLock(lock)
}

func tryLock(lock string) (*os.File, error) {
	owner := ownerFile(lock)
	tmp := owner + ".tmp"
	os.Remove(tmp) // a leftover of ours (the owner record says which lock we held)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	id, err := identify(tmp)
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := os.WriteFile(owner, fmt.Appendf(nil, "%d %d %d\n", os.Getpid(), id.ino, id.born), 0o644); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	err = os.Link(tmp, lock)
	os.Remove(tmp)
	if err != nil {
		f.Close()
		os.Remove(owner)
		if errors.Is(err, os.ErrExist) {
			return nil, os.ErrExist
		}
		return nil, err
	}
	return f, nil
}

// removeLockOwner forgets the owner of a lock this process released.
func removeLockOwner(lock string) { os.Remove(ownerFile(lock)) }

// removeDeadOwnersLock removes lock when memsync recorded that a process
// which no longer runs created this very file, and reports whether it did.
func removeDeadOwnersLock(lock string) bool {
	data, err := os.ReadFile(ownerFile(lock))
	if err != nil {
		return false
	}
	var pid int
	var rec fileID
	n, _ := fmt.Sscanf(string(data), "%d %d %d", &pid, &rec.ino, &rec.born)
	if n < 2 || pid <= 0 {
		return false
	}
	id, err := identify(lock)
	if err != nil || id.ino != rec.ino || n == 3 && id.born != rec.born {
		return false // another file at the lock's path (an older record, without a birth time, is judged by its inode)
	}
	if pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
		return false // alive (or not ours to judge)
	}
	if err := os.Remove(lock); err != nil {
		return false
	}
	removeLockOwner(lock)
	return true
}

// fileID tells one file from another at a path over time: its inode, and
// its birth time in ns (0 where the file system keeps none), since a
// file system reuses the inodes of deleted files.
type fileID struct {
	ino  uint64
	born int64
}

// identify reads path's fileID without following a link.
func identify(path string) (fileID, error) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &stx); err != nil {
		return fileID{}, err
	}
	id := fileID{ino: stx.Ino}
	if stx.Mask&unix.STATX_BTIME != 0 {
		id.born = stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
	}
	return id, nil
}
