package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// The identity memsync commits as.
const (
	AuthorName  = "memsync"
	AuthorEmail = "memsync@localhost"
)

// DefaultInterval is how often the daemon commits when the configuration
// does not say.
const DefaultInterval = 5 * time.Minute

// ErrLocked means git is busy (another process holds .git/index.lock or the
// branch's ref lock, or a merge, rebase, cherry-pick or revert is in
// progress). Nothing was changed; try again later.
var ErrLocked = errors.New("git is busy")

// ErrDetached means HEAD is not on a branch (detached at a commit, or
// naming a ref outside refs/heads/). A commit there would be left behind by
// the next "git checkout <branch>", taking the records only it holds with
// it, so none is made until HEAD is on a branch again. It comes wrapped
// with ErrLocked: like a busy git, it only puts the commit off.
var ErrDetached = errors.New("HEAD is not on a branch")

// staleLockAge is how old an index.lock must be before the Committer warns
// that it may have been left behind by a crashed git process. It never
// removes it: only a person can know that no git process is running.
const staleLockAge = time.Hour

// maxMovedHEAD bounds how many times a commit is rebuilt on a HEAD that
// moved while it was being made.
const maxMovedHEAD = 3

// CommitterOptions configure a Committer.
type CommitterOptions struct {
	Root string // the work tree; required
	// Interval is how often Run commits; zero or negative turns Run off.
	Interval time.Duration
	Logger   *zap.Logger      // zap.NewNop() when nil
	Now      func() time.Time // time.Now when nil; stamps commits
}

// Committer records the owned files of the memory repository (see Owned) in
// git, as AuthorName <AuthorEmail>. It never fights a person using git in the
// same repository: it commits only owned paths (whatever else a person has
// staged stays staged and is not committed), takes git's own locks
// (.git/index.lock, then the branch's ref lock) and gives up with ErrLocked
// when either is held or a merge or rebase is in progress, never resets or
// checks out, and builds its commit on whatever HEAD is when it takes the
// lock (rebuilding it if HEAD moves before the ref is updated). Git hooks
// are not run. A Committer is safe for concurrent use.
type Committer struct {
	opts CommitterOptions
	lg   *zap.Logger

	mu     sync.Mutex
	paused string // why auto-commit is paused (HEAD not on a branch), or ""

	afterSnapshot func() // tests: runs between hashing the work tree and locking the index
}

// Result is what one commit attempt did.
type Result struct {
	Commit string   // the new commit; empty when the owned files were already committed
	Files  []string // owned paths the commit added, changed or deleted
}

// NewCommitter makes a Committer; it touches nothing until asked to commit.
func NewCommitter(opts CommitterOptions) (*Committer, error) {
	if opts.Root == "" {
		return nil, errors.New("ledger: CommitterOptions.Root is required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Committer{opts: opts, lg: opts.Logger}, nil
}

// Run commits every Interval until ctx is cancelled, then makes one last
// attempt so that lines appended just before shutdown are recorded. A busy
// git is skipped until the next tick; other failures are logged and retried
// on the next tick too. With Interval <= 0 Run returns nil at once.
func (c *Committer) Run(ctx context.Context) error {
	if c.opts.Interval <= 0 {
		return nil
	}
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// The last attempt waits for an exchange still finishing.
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			c.tick(final, waitTurn)
			cancel()
			return nil
		case <-t.C:
			c.tick(ctx, nil)
		}
	}
}

// Paused says why the last attempt to commit was put off until HEAD is on
// a branch again (as HeadNotOnBranch does), or "" when it was not.
func (c *Committer) Paused() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// tick makes one attempt; turn, when not nil, replaces takeTurn.
func (c *Committer) tick(ctx context.Context, turn func(context.Context, string) (func(), error)) {
	var res Result
	var err error
	if turn == nil {
		res, err = c.CommitNow(ctx, "")
	} else if done, terr := turn(ctx, c.opts.Root); terr != nil {
		err = terr
	} else {
		res, err = c.commit(ctx, "", nil)
		done()
	}
	switch {
	case errors.Is(err, ErrDetached):
		// Warned once per pause, not at every interval.
		c.lg.Debug("auto-commit paused", zap.Error(err))
	case errors.Is(err, ErrLocked):
		c.lg.Info("git is busy: auto-commit skipped until the next interval", zap.Error(err))
	case err != nil:
		c.lg.Error("auto-commit failed: will retry at the next interval", zap.Error(err))
	case res.Commit != "":
		c.lg.Info("auto-commit", zap.String("commit", res.Commit), zap.Int("files", len(res.Files)))
	}
}

// CommitNow commits every owned file whose content differs from HEAD (new,
// changed or deleted) in one commit with message (a default message naming
// the agents when empty). A journal's last line is committed only once it
// has its newline. It returns ErrLocked (wrapped) when git is busy.
//
// Within a process, one commit or exchange of a repository runs at a time
// (however many Committers and Exchangers the process made): CommitNow
// returns ErrLocked at once, without waiting, while another runs.
func (c *Committer) CommitNow(ctx context.Context, message string) (Result, error) {
	done, err := takeTurn(c.opts.Root)
	if err != nil {
		if errors.Is(err, ErrLocked) {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	defer done()
	return c.commit(ctx, message, nil)
}

// commit is CommitNow for a caller that holds the repository's turn
// (takeTurn); held names the journals whose exclusive lock the caller (the
// exchange) already holds, which are read without locking. A nil held
// takes MergeLockFile shared for the whole commit; a non-nil one says the
// caller holds it exclusively.
func (c *Committer) commit(ctx context.Context, message string, held map[string]bool) (Result, error) {
	r, err := openRepo(c.opts.Root)
	if err != nil {
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	defer r.Close()
	r.held = held
	if held == nil {
		// Not the exchange's commit under its own merge lock: wait for
		// a merge another process's git is making (MergeLockFile).
		ml, err := lockMerge(c.opts.Root, false)
		if err != nil {
			return Result{}, fmt.Errorf("commit: %w", err)
		}
		if ml != nil {
			defer ml.Close()
		}
	}
	if busy := r.busy(c.lg); busy != "" {
		return Result{}, fmt.Errorf("%w: %s", ErrLocked, busy)
	}
	if why := r.headNotOnBranch(); why != "" {
		return Result{}, c.pause(why)
	}
	c.resume()

	// Hash the work tree's owned files before taking the index lock, so
	// that the lock is held for milliseconds, not for as long as hashing
	// large journals takes. Blobs written now are harmless if unused.
	// Under the lock, what changed meanwhile is hashed again (fresh).
	var snapHead plumbing.Hash
	if h, err := r.readHead(); err == nil {
		snapHead = h.commit
	}
	old, oldTime, err := r.readIndex()
	if err != nil {
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	cached := map[string]*index.Entry{}
	for _, e := range old.Entries {
		if e.Stage == index.Merged {
			cached[e.Name] = e
		}
	}
	files, err := ownedFiles(r.root)
	if err != nil {
		return Result{}, fmt.Errorf("commit: list owned files: %w", err)
	}
	snaps := make(map[string]*snapshot, len(files))
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		s, err := r.snapshot(rel, cached[rel], oldTime)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since it was listed: a deletion, seen below
		}
		if err != nil {
			return Result{}, fmt.Errorf("commit: %s: %w", rel, err)
		}
		snaps[rel] = s
	}

	if c.afterSnapshot != nil {
		c.afterSnapshot()
	}
	lock, err := r.lockIndex()
	if err != nil {
		return Result{}, err
	}
	defer lock.abandon()
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		head, err := r.readHead()
		if err != nil {
			return Result{}, fmt.Errorf("commit: %w", err)
		}
		if !strings.HasPrefix(string(head.ref), "refs/heads/") {
			// Detached (or moved off the branch) since it was checked.
			return Result{}, c.pause(r.headNotOnBranch())
		}
		if err := r.fresh(snaps, head.commit != snapHead); err != nil {
			return Result{}, fmt.Errorf("commit: %w", err)
		}
		snapHead = head.commit
		changes, err := r.changes(head, snaps)
		if err != nil {
			return Result{}, fmt.Errorf("commit: %w", err)
		}
		if len(changes) == 0 {
			return Result{}, nil
		}
		var res Result
		for _, ch := range changes {
			res.Files = append(res.Files, ch.path)
		}
		msg := message
		if msg == "" {
			msg = defaultMessage(res.Files)
		}
		treeHash, err := r.writeTree(head.tree, changes)
		if err != nil {
			return Result{}, fmt.Errorf("commit: write tree: %w", err)
		}
		commitHash, err := r.writeCommit(treeHash, head.commit, msg, c.opts.Now())
		if err != nil {
			return Result{}, fmt.Errorf("commit: %w", err)
		}
		// The index is read again under the lock: a person may have
		// staged something since it was read for the stat cache.
		idx, _, err := r.readIndex()
		if err != nil {
			return Result{}, fmt.Errorf("commit: %w", err)
		}
		applyToIndex(idx, changes)
		if err := lock.write(idx); err != nil {
			return Result{}, fmt.Errorf("commit: write index: %w", err)
		}
		// A person may have started a commit since busy was checked.
		if r.commitInProgress() {
			return Result{}, fmt.Errorf("%w: a person's commit is being made", ErrLocked)
		}
		err = r.updateRef(head, commitHash, msg, c.opts.Now())
		if errors.Is(err, errHeadMoved) && attempt+1 < maxMovedHEAD {
			c.lg.Info("HEAD moved while committing: building the commit again on the new HEAD")
			continue
		}
		if err != nil {
			return Result{}, fmt.Errorf("commit: %w", err)
		}
		if err := lock.commit(); err != nil {
			// The commit is made; only the index is stale, and git will
			// see our files as modified-then-reverted in the index until
			// the next successful commit refreshes it.
			return Result{}, fmt.Errorf("commit %s made, but updating the index failed: %w", commitHash, err)
		}
		res.Commit = commitHash.String()
		c.lg.Debug("committed", zap.String("commit", res.Commit), zap.Strings("files", res.Files))
		return res, nil
	}
}

// pause records why commits are put off (why as HeadNotOnBranch says it),
// warns when that is news, and returns the error CommitNow gives.
func (c *Committer) pause(why string) error {
	if why == "" {
		why = "HEAD is not on a branch"
	}
	c.mu.Lock()
	news := c.paused != why
	c.paused = why
	c.mu.Unlock()
	if news {
		c.lg.Warn("auto-commit paused: "+why+"; nothing is committed until a branch is checked out again "+
			"(the journals keep every record meanwhile)", zap.String("repo", c.opts.Root))
	}
	return fmt.Errorf("%w: %w: %s", ErrLocked, ErrDetached, why)
}

// resume ends a pause, saying so once.
func (c *Committer) resume() {
	c.mu.Lock()
	was := c.paused
	c.paused = ""
	c.mu.Unlock()
	if was != "" {
		c.lg.Info("auto-commit resumed: HEAD is on a branch again", zap.String("was", was))
	}
}

// HeadNotOnBranch says why memsync would not commit in the work tree root
// because of where HEAD points: "HEAD is detached", "HEAD is not on a
// branch (<ref>)", or "" when HEAD names a branch (an unborn one included)
// or root is not a git work tree. Status reports use it.
func HeadNotOnBranch(root string) string {
	r, err := openRepo(root)
	if err != nil {
		return ""
	}
	defer r.Close()
	return r.headNotOnBranch()
}

func (r *repo) headNotOnBranch() string {
	data, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return "" // readHead reports it
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref:")
	if !ok {
		return "HEAD is detached"
	}
	if target = strings.TrimSpace(target); !strings.HasPrefix(target, "refs/heads/") {
		return "HEAD is not on a branch (" + target + ")"
	}
	return ""
}

func defaultMessage(files []string) string {
	seen := map[string]bool{}
	var agents []string
	for _, f := range files {
		if parts := strings.SplitN(f, "/", 3); len(parts) >= 2 && !seen[parts[1]] {
			seen[parts[1]] = true
			agents = append(agents, parts[1])
		}
	}
	sort.Strings(agents)
	return fmt.Sprintf("memsync: record memory of %s\n\n%d file(s) changed.\n", strings.Join(agents, ", "), len(files))
}

// busy names the git operation in progress that a commit must not disturb,
// or returns "".
func (r *repo) busy(lg *zap.Logger) string {
	lockPath := filepath.Join(r.gitDir, "index.lock")
	if fi, err := os.Stat(lockPath); err == nil && !removeDeadOwnersLock(lockPath) {
		if age := time.Since(fi.ModTime()); age > staleLockAge {
			lg.Warn("index.lock is old: if no git process is running, a crashed one left it; remove it by hand",
				zap.String("path", lockPath), zap.Duration("age", age))
		}
		return lockPath + " exists"
	}
	for _, name := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(r.gitDir, name)); err == nil {
			return "a merge, rebase, cherry-pick or revert is in progress (" + name + ")"
		}
	}
	if r.commitInProgress() {
		return "a person's commit is being made (COMMIT_EDITMSG is newer than HEAD)"
	}
	return ""
}

// editorGrace is how long an unfinished commit message may hold memsync
// off; past it the commit is taken for abandoned.
const editorGrace = 15 * time.Minute

// commitInProgress reports whether a person's "git commit" is between
// writing its message and moving HEAD. git does not hold the index lock
// then (for as long as its editor is open), and it checks that HEAD did not
// move, so committing in that window would make the person's commit fail.
// git writes .git/COMMIT_EDITMSG at the start of that window and updates
// HEAD's reflog (and the branch) at its end.
func (r *repo) commitInProgress() bool {
	msg, err := os.Stat(filepath.Join(r.gitDir, "COMMIT_EDITMSG"))
	if err != nil || time.Since(msg.ModTime()) > editorGrace {
		return false
	}
	var moved time.Time
	paths := []string{filepath.Join(r.gitDir, "logs", "HEAD"), filepath.Join(r.gitDir, "HEAD")}
	if data, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD")); err == nil {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref:"); ok {
			paths = append(paths, filepath.Join(r.commonDir, filepath.FromSlash(strings.TrimSpace(ref))))
		}
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(moved) {
			moved = fi.ModTime()
		}
	}
	return msg.ModTime().After(moved)
}

// readIndex decodes the index (an empty one if there is none) and returns
// its modification time, which tells racily clean entries apart.
func (r *repo) readIndex() (*index.Index, time.Time, error) {
	idx := &index.Index{Version: 2}
	path := filepath.Join(r.gitDir, "index")
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return idx, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := index.NewDecoder(f).Decode(idx); err != nil {
		return nil, time.Time{}, fmt.Errorf("read %s: %w", path, err)
	}
	return idx, fi.ModTime(), nil
}

// snapshot is an owned file's content as it will be committed.
type snapshot struct {
	hash plumbing.Hash
	mode filemode.FileMode
	size int64 // bytes committed: less than the file when a journal's last line is partial
	st   *syscall.Stat_t
}

// snapshot hashes rel and stores its blob. A journal is read under a shared
// lock (journal.Append writes under an exclusive one) and only up to its
// last newline; below that, journals are append-only, so the bytes stay put
// after the lock is released. An index entry whose stat data matches, and
// that is not racily clean, saves the reading.
func (r *repo) snapshot(rel string, cached *index.Entry, indexTime time.Time) (*snapshot, error) {
	f, err := os.Open(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	var st syscall.Stat_t
	if isJournal(rel) && r.held[rel] {
		if err = syscall.Fstat(int(f.Fd()), &st); err == nil {
			size, err = journal.CompleteLength(f, st.Size)
		}
	} else if isJournal(rel) {
		if err := journal.Flock(f, syscall.LOCK_SH); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		err = syscall.Fstat(int(f.Fd()), &st)
		if err == nil {
			size, err = journal.CompleteLength(f, st.Size)
		}
		_ = journal.Flock(f, syscall.LOCK_UN)
	} else {
		err = syscall.Fstat(int(f.Fd()), &st)
		size = st.Size
	}
	if err != nil {
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("not a regular file")
	}
	s := &snapshot{mode: filemode.Regular, size: size, st: &st}
	if st.Mode&0o111 != 0 {
		s.mode = filemode.Executable
	}
	if cached != nil && size == st.Size && statMatches(cached, &st) && modTime(&st).Before(indexTime) {
		s.hash = cached.Hash
		return s, nil
	}
	h := plumbing.NewHasher(plumbing.BlobObject, size)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		return nil, err
	}
	s.hash = h.Sum()
	if r.store.HasEncodedObject(s.hash) == nil {
		return s, nil
	}
	w, writeHeader, err := r.store.LazyWriter()
	if err != nil {
		return nil, err
	}
	if err := writeHeader(plumbing.BlobObject, size); err != nil {
		w.Close()
		return nil, err
	}
	if _, err := io.Copy(w, io.NewSectionReader(f, 0, size)); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if hw, ok := w.(interface{ Hash() plumbing.Hash }); ok && hw.Hash() != s.hash {
		return nil, fmt.Errorf("changed while being committed (rewritten in place?); will try again")
	}
	return s, nil
}

// fresh hashes again, under the index lock, every snapshot the work tree
// no longer matches: a file replaced since it was read (git's merge,
// checkout or pull writes a new file, and an unlinked inode still reads as
// it was) and, when HEAD moved since the snapshots were taken, a file
// changed in any way. A snapshot taken before a merge wrote the union of
// both sides and moved HEAD would otherwise be committed on the merge,
// deleting the other side's lines from history, and from the journals of
// every host that merges that commit. Journals only grow in place, so while
// HEAD stays put an older snapshot of the same file is still a sound commit.
// A file gone since is dropped (a deletion, as changes sees it).
func (r *repo) fresh(snaps map[string]*snapshot, headMoved bool) error {
	for rel, s := range snaps {
		var st syscall.Stat_t
		err := syscall.Lstat(filepath.Join(r.root, filepath.FromSlash(rel)), &st)
		if err == nil && st.Dev == s.st.Dev && st.Ino == s.st.Ino &&
			(!headMoved || st.Size == s.st.Size && modTime(&st).Equal(modTime(s.st)) && changeTime(&st).Equal(changeTime(s.st))) {
			continue
		}
		ns, err := r.snapshot(rel, nil, time.Time{})
		if errors.Is(err, os.ErrNotExist) {
			delete(snaps, rel)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		snaps[rel] = ns
	}
	return nil
}

func statMatches(e *index.Entry, st *syscall.Stat_t) bool {
	return int64(e.Size) == st.Size&0xffffffff && e.ModifiedAt.Equal(modTime(st)) && e.Inode == uint32(st.Ino)
}

// head is what HEAD pointed at when read.
type head struct {
	ref    plumbing.ReferenceName // the branch HEAD names; "HEAD" itself when detached
	commit plumbing.Hash          // zero on an unborn branch
	tree   *object.Tree           // nil on an unborn branch
}

func (r *repo) readHead() (*head, error) {
	data, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return nil, fmt.Errorf("read HEAD: %w", err)
	}
	line := strings.TrimSpace(string(data))
	h := &head{ref: plumbing.HEAD}
	if target, ok := strings.CutPrefix(line, "ref:"); ok {
		h.ref = plumbing.ReferenceName(strings.TrimSpace(target))
		ref, err := r.store.Reference(h.ref)
		switch {
		case errors.Is(err, plumbing.ErrReferenceNotFound):
			return h, nil // unborn branch: the first commit
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", h.ref, err)
		}
		h.commit = ref.Hash()
	} else {
		h.commit = plumbing.NewHash(line)
	}
	c, err := object.GetCommit(r.store, h.commit)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h.commit, err)
	}
	if h.tree, err = c.Tree(); err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", h.commit, err)
	}
	return h, nil
}

// change is one owned path to set (snap non-nil) or delete in the next commit.
type change struct {
	path string
	snap *snapshot
}

// changes compares the snapshots with HEAD's tree: owned files whose blob
// or mode differs, and owned files HEAD has that are gone from the work tree.
func (r *repo) changes(h *head, snaps map[string]*snapshot) ([]change, error) {
	committed := map[string]object.TreeEntry{}
	if h.tree != nil {
		agents, err := h.tree.Tree("agents")
		if err != nil && !errors.Is(err, object.ErrDirectoryNotFound) {
			return nil, err
		}
		if agents != nil {
			walker := object.NewTreeWalker(agents, true, nil)
			defer walker.Close()
			for {
				name, e, err := walker.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, err
				}
				if rel := "agents/" + name; e.Mode.IsFile() && Owned(rel) {
					committed[rel] = e
				}
			}
		}
	}
	var out []change
	for rel, s := range snaps {
		if e, ok := committed[rel]; !ok || e.Hash != s.hash || e.Mode != s.mode {
			out = append(out, change{path: rel, snap: s})
		}
	}
	for rel := range committed {
		if _, ok := snaps[rel]; ok {
			continue
		}
		// Only a path that is really gone is a deletion; one that became
		// a symlink or could not be read is left as committed.
		if _, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(rel))); errors.Is(err, os.ErrNotExist) {
			out = append(out, change{path: rel})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// writeCommit stores a commit of tree on parent (none when zero).
func (r *repo) writeCommit(tree, parent plumbing.Hash, msg string, now time.Time) (plumbing.Hash, error) {
	sig := object.Signature{Name: AuthorName, Email: AuthorEmail, When: now}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	obj := r.store.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.store.SetEncodedObject(obj)
}

// applyToIndex makes idx agree with the commit for the changed paths and
// leaves every other entry (a person's staged work) as it was. The cached
// tree extension is dropped: git rebuilds it.
func applyToIndex(idx *index.Index, changes []change) {
	byPath := map[string]*snapshot{}
	for _, ch := range changes {
		byPath[ch.path] = ch.snap
	}
	kept := idx.Entries[:0]
	for _, e := range idx.Entries {
		if _, ok := byPath[e.Name]; !ok {
			kept = append(kept, e)
		}
	}
	idx.Entries = kept
	for _, ch := range changes {
		if ch.snap == nil {
			continue
		}
		st := ch.snap.st
		idx.Entries = append(idx.Entries, &index.Entry{
			Hash:       ch.snap.hash,
			Name:       ch.path,
			CreatedAt:  changeTime(st),
			ModifiedAt: modTime(st),
			Dev:        uint32(st.Dev),
			Inode:      uint32(st.Ino),
			Mode:       ch.snap.mode,
			UID:        st.Uid,
			GID:        st.Gid,
			// A journal committed short of a partial last line records
			// the committed length, so git sees the rest as a change.
			Size: uint32(ch.snap.size),
		})
	}
	idx.Cache = nil
	idx.ResolveUndo = nil
	idx.EndOfIndexEntry = nil
}
