package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	dotGit := filepath.Join(abs, ".git")
	fi, err := os.Stat(dotGit)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a git work tree (no .git)", abs)
		}
		return nil, err
	}
	gitDir := dotGit
	if !fi.IsDir() {
		data, err := os.ReadFile(dotGit)
		if err != nil {
			return nil, err
		}
		line := strings.TrimSpace(string(data))
		dir, ok := strings.CutPrefix(line, "gitdir:")
		if !ok {
			return nil, fmt.Errorf("%s: not a gitdir file", dotGit)
		}
		gitDir = strings.TrimSpace(dir)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(abs, gitDir)
		}
	}
	commonDir := gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		commonDir = strings.TrimSpace(string(bytes.TrimSpace(data)))
		if !filepath.IsAbs(commonDir) {
			commonDir = filepath.Join(gitDir, commonDir)
		}
	}
	var fs = osfs.New(gitDir)
	if commonDir != gitDir {
		fs = dotgit.NewRepositoryFilesystem(osfs.New(gitDir), osfs.New(commonDir))
	}
	store := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(objectCacheBytes), filesystem.Options{})
	return &repo{root: abs, gitDir: gitDir, commonDir: commonDir, store: store}, nil
}

func (r *repo) Close() error { return r.store.Close() }
