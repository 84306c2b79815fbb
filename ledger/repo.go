package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// objectCacheBytes bounds go-git's object cache: the ledger reads each
// object about once, so a large cache only costs memory.
const objectCacheBytes = 8 * cache.MiByte

// repo is a work tree and where its git data lives.
type repo struct {
	root      string // the work tree
	gitDir    string // HEAD, index and per-worktree state
	commonDir string // objects and refs (gitDir unless this is a linked worktree)
	store     *filesystem.Storage
	held      map[string]bool // journals whose lock the caller holds (see Committer.commit)
}

// openRepo opens the repository whose work tree is root. root/.git may be
// a directory or, for linked worktrees and submodules, a "gitdir:" file.
func openRepo(root string) (*repo, error) {
	abs, gitDir, commonDir, err := gitDirs(root)
	if err != nil {
		return nil, err
	}
	var fs = osfs.New(gitDir)
	if commonDir != gitDir {
		fs = dotgit.NewRepositoryFilesystem(osfs.New(gitDir), osfs.New(commonDir))
	}
	store := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(objectCacheBytes), filesystem.Options{})
	return &repo{root: abs, gitDir: gitDir, commonDir: commonDir, store: store}, nil
}

// gitDirs finds where the git data of the work tree root lives: root made
// absolute, its git directory and the common one (objects and refs).
func gitDirs(root string) (abs, gitDir, commonDir string, err error) {
	abs, err = filepath.Abs(root)
	if err != nil {
		return "", "", "", err
	}
	dotGit := filepath.Join(abs, ".git")
	fi, err := os.Stat(dotGit)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "", "", fmt.Errorf("%s is not a git work tree (no .git)", abs)
		}
		return "", "", "", err
	}
	gitDir = dotGit
	if !fi.IsDir() {
		data, err := os.ReadFile(dotGit)
		if err != nil {
			return "", "", "", err
		}
		line := strings.TrimSpace(string(data))
		dir, ok := strings.CutPrefix(line, "gitdir:")
		if !ok {
			return "", "", "", fmt.Errorf("%s: not a gitdir file", dotGit)
		}
		gitDir = strings.TrimSpace(dir)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(abs, gitDir)
		}
	}
	commonDir = gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		commonDir = strings.TrimSpace(string(bytes.TrimSpace(data)))
		if !filepath.IsAbs(commonDir) {
			commonDir = filepath.Join(gitDir, commonDir)
		}
	}
	return abs, gitDir, commonDir, nil
}

func (r *repo) Close() error { return r.store.Close() }

// repoTurns holds one turn (a channel of one slot) per repository, by its
// common git directory with links resolved, for the whole process.
var repoTurns sync.Map

// turn is root's repository's turn.
func turn(root string) (chan struct{}, error) {
	_, _, commonDir, err := gitDirs(root)
	if err != nil {
		return nil, err
	}
	key := filepath.Clean(commonDir)
	if real, err := filepath.EvalSymlinks(key); err == nil {
		key = real
	}
	t, _ := repoTurns.LoadOrStore(key, make(chan struct{}, 1))
	return t.(chan struct{}), nil
}

// takeTurn claims root's repository for one commit or one exchange among
// everything in this process that changes its index or refs (Committers,
// Exchangers, however many a process makes), or fails with ErrLocked at
// once when another holds it: a busy round is skipped, not queued up. The
// returned func gives the turn back. Git's own lock files still keep
// other processes (a person's git, another memsync) out.
func takeTurn(root string) (func(), error) {
	t, err := turn(root)
	if err != nil {
		return nil, err
	}
	select {
	case t <- struct{}{}:
		return func() { <-t }, nil
	default:
		return nil, fmt.Errorf("%w: another commit or exchange of this repository is under way in this process", ErrLocked)
	}
}

// waitTurn is takeTurn waiting for the turn until ctx ends (ErrLocked then).
func waitTurn(ctx context.Context, root string) (func(), error) {
	t, err := turn(root)
	if err != nil {
		return nil, err
	}
	select {
	case t <- struct{}{}:
		return func() { <-t }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: another commit or exchange of this repository is under way in this process: %w", ErrLocked, ctx.Err())
	}
}
