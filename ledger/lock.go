package ledger

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/memsync/memsync/journal"
)

// indexLock is git's own lock on the index: .git/index.lock, created
// exclusively. The new index is written into it and renamed over the index,
// exactly as git does, so a person's git sees either the old index or the
// new one and is refused (not corrupted) while memsync holds it.
type indexLock struct {
	path, target string
	f            *heldLock
	done         bool
}

func (r *repo) lockIndex() (*indexLock, error) {
	target := filepath.Join(r.gitDir, "index")
	path := target + ".lock"
	f, err := createLock(path)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%w: %s exists", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("commit: lock index: %w", err)
	}
	return &indexLock{path: path, target: target, f: f}, nil
}

// write replaces what the lock file holds with idx, synced.
func (l *indexLock) write(idx *index.Index) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	if _, err := l.f.Seek(0, 0); err != nil {
		return err
	}
	w := bufio.NewWriter(l.f)
	if err := index.NewEncoder(w).Encode(idx); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return l.f.Sync()
}

// commit installs the written index and releases the lock.
func (l *indexLock) commit() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(l.path, l.target); err != nil {
		return err
	}
	l.f.forgetOwner()
	l.done = true
	return journal.SyncDir(filepath.Dir(l.target))
}

// abandon releases the lock without touching the index (a no-op after commit).
func (l *indexLock) abandon() {
	if l.done {
		return
	}
	l.f.Close()
	os.Remove(l.path)
	l.f.forgetOwner()
	l.done = true
}

// errHeadMoved means the ref HEAD names no longer points where it did when
// the commit was built.
var errHeadMoved = errors.New("HEAD moved")

// updateRef points h.ref at commit if it still points at h.commit, under
// git's ref lock (<ref>.lock, created exclusively, renamed over the ref), and
// appends to the reflogs as git does.
func (r *repo) updateRef(h *head, commit plumbing.Hash, msg string, now time.Time) error {
	dir := r.commonDir
	if h.ref == plumbing.HEAD {
		dir = r.gitDir
	}
	path := filepath.Join(dir, filepath.FromSlash(h.ref.String()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lockPath := path + ".lock"
	f, err := createLock(lockPath)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: %s exists", ErrLocked, lockPath)
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", h.ref, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(lockPath)
		}
		f.forgetOwner()
	}()
	current := plumbing.ZeroHash
	if h.ref == plumbing.HEAD {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		current = plumbing.NewHash(strings.TrimSpace(string(data)))
	} else if ref, err := r.store.Reference(h.ref); err == nil {
		current = ref.Hash()
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return fmt.Errorf("read %s: %w", h.ref, err)
	}
	if current != h.commit {
		return errHeadMoved
	}
	if _, err := f.WriteString(commit.String() + "\n"); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(lockPath, path); err != nil {
		return err
	}
	renamed = true
	// At once: the record now names the ref's own file (see lockowner.go).
	f.forgetOwner()
	if err := journal.SyncDir(filepath.Dir(path)); err != nil {
		return err
	}
	subject, _, _ := strings.Cut(msg, "\n")
	entry := fmt.Sprintf("%s %s %s <%s> %d %s\tcommit: %s\n", h.commit, commit, AuthorName, AuthorEmail,
		now.Unix(), now.Format("-0700"), subject)
	// Reflogs are a convenience for people (git reflog); failing to write
	// one does not undo the commit.
	r.appendReflog(h.ref, entry)
	if h.ref != plumbing.HEAD {
		r.appendReflog(plumbing.HEAD, entry)
	}
	return nil
}

// appendReflog adds entry to ref's reflog when reflogs are kept (a logs
// directory exists, as git creates for non-bare repositories).
func (r *repo) appendReflog(ref plumbing.ReferenceName, entry string) {
	dir := r.commonDir
	if ref == plumbing.HEAD {
		dir = r.gitDir
	}
	logs := filepath.Join(dir, "logs")
	if _, err := os.Stat(logs); err != nil {
		return
	}
	path := filepath.Join(logs, filepath.FromSlash(ref.String()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	f.WriteString(entry)
	f.Close()
}
