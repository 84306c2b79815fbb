package ledger

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// ownerFile is the name every owner record of lock starts with: in the
// directory of the lock's repository data, never among the refs (git
// would read a file there as a ref). Each attempt to take the lock records
// its owner in a file of its own, ownerFile(lock)+"."+<pid>-<random>, so
// that two attempts (two committers of one process, two processes) never
// share a temporary file or a record; a record named ownerFile(lock)
// alone is an older memsync's.
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

// lockTempSuffix ends the name of the private file a lock is made as.
const lockTempSuffix = ".tmp"

// heldLock is a lock file this process created, open, and where its owner
// is recorded.
type heldLock struct {
	*os.File
	owner string
}

// forgetOwner removes the owner record: once the lock is released, or
// renamed into place (the record would name the index or the ref).
func (l *heldLock) forgetOwner() { os.Remove(l.owner) }

// createLock creates lock exclusively, as git does, after removing it if a
// dead memsync process left it. The lock is made as a private file first,
// under a name unique to this attempt, whose owner (this pid, its inode)
// is recorded, and then linked to the lock's name (atomic, and refused
// when the name exists): so a recorded inode at the lock's name is always
// one its recorded process made, whenever it died. It returns os.ErrExist
// when the lock is held.
func createLock(lock string) (*heldLock, error) {
	if _, err := os.Lstat(lock); err == nil {
		removeDeadOwnersLock(lock)
	}
	return tryLock(lock)
}

func tryLock(lock string) (*heldLock, error) {
	prefix := ownerFile(lock) + "." + strconv.Itoa(os.Getpid()) + "-"
	var f *os.File
	var owner string
	for attempt := 0; ; attempt++ {
		var rnd [8]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, err
		}
		owner = prefix + hex.EncodeToString(rnd[:])
		var err error
		f, err = os.OpenFile(owner+lockTempSuffix, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || attempt >= 10 {
			return nil, err // never os.ErrExist: that would say the lock is held
		}
	}
	tmp := f.Name()
	fail := func(err error) (*heldLock, error) {
		f.Close()
		os.Remove(tmp)
		os.Remove(owner)
		return nil, err
	}
	id, err := identify(tmp)
	if err != nil {
		return fail(err)
	}
	if err := writeNew(owner, fmt.Appendf(nil, "%d %d %d\n", os.Getpid(), id.ino, id.born)); err != nil {
		return fail(err)
	}
	err = os.Link(tmp, lock)
	os.Remove(tmp)
	if errors.Is(err, os.ErrExist) {
		return fail(os.ErrExist)
	}
	if err != nil {
		return fail(err)
	}
	return &heldLock{File: f, owner: owner}, nil
}

// writeNew creates path, which must not exist, holding data.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeDeadOwnersLock removes lock when memsync recorded that a process
// which no longer runs created this very file, and reports whether it did.
// The records (and private files) of dead processes for lock are removed
// with it: they can name no file that will ever be at the lock's name.
func removeDeadOwnersLock(lock string) bool {
	prefix := ownerFile(lock)
	dir, base := filepath.Dir(prefix), filepath.Base(prefix)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	id, idErr := identify(lock)
	removed := false
	for _, e := range entries {
		name := e.Name()
		if name != base && !strings.HasPrefix(name, base+".") {
			continue
		}
		path := filepath.Join(dir, name)
		if strings.HasSuffix(name, lockTempSuffix) {
			// A private file its process died before linking.
			if pid := namedPid(strings.TrimPrefix(name, base+".")); pid > 0 && dead(pid) {
				os.Remove(path)
			}
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var pid int
		var rec fileID
		n, _ := fmt.Sscanf(string(data), "%d %d %d", &pid, &rec.ino, &rec.born)
		if n < 2 || pid <= 0 || !dead(pid) {
			continue // alive (or not ours to judge)
		}
		// An older record, without a birth time, is judged by its inode.
		if !removed && idErr == nil && id.ino == rec.ino && (n == 2 || id.born == rec.born) {
			if os.Remove(lock) != nil {
				continue
			}
			removed = true
		}
		os.Remove(path)
	}
	return removed
}

// namedPid is the pid a private file's name starts with ("<pid>-…"), or 0.
func namedPid(rest string) int {
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0
	}
	pid, err := strconv.Atoi(digits)
	if err != nil {
		return 0
	}
	return pid
}

// dead reports whether no process pid runs (this process is alive).
func dead(pid int) bool {
	return pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH
}

// fileID tells one file from another at a path over time: its inode, and
// its birth time in ns (0 where the file system keeps none), since a
// file system reuses the inodes of deleted files.
type fileID struct {
	ino  uint64
	born int64
}
