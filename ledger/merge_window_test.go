package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pausingGit is a git for the exchange whose merge stops where git's own
// merge has a window: the work tree and index hold the merged files and
// .git/index.lock is released, but the merge commit is not written and
// HEAD has not moved (git's merge writes the index, then the tree, the
// commit and HEAD, which it moves only if it is still where it was). It
// touches $dir/paused there and goes on once $dir/go exists.
const pausingGit = `#!/bin/sh
real=$(command -v git)
verb=
for a in "$@"; do
	case "$a" in merge) verb=merge; break;; fetch|push|diff|merge-base|rev-parse|rev-list|config|symbolic-ref) break;; esac
done
if [ "$verb" != merge ]; then exec "$real" "$@"; fi
for last in "$@"; do :; done
old=$("$real" rev-parse HEAD)
"$real" -c core.attributesFile="$ATTRS" merge --squash --quiet "$last" >/dev/null || exit 1
touch "$DIR/paused"
while [ ! -e "$DIR/go" ]; do sleep 0.01; done
tree=$("$real" write-tree) || exit 1
new=$("$real" commit-tree "$tree" -p "$old" -p "$last" -m "memsync: merge") || exit 1
rm -f "$("$real" rev-parse --git-dir)/SQUASH_MSG"
exec "$real" update-ref HEAD "$new" "$old"
`

// TestCommitWaitsForAMergeInAnotherProcess: a daemon killed -9 mid-merge
// leaves its git running; the restarted daemon's Committer must not commit
// the merged work tree while git is between writing it and moving HEAD.
// Before MergeLockFile it did: the merge then failed (HEAD had moved), the
// other host's lines entered history as a plain commit of this host's, and
// a later union merge wrote them twice (TestManyHostsOneMemory's "records
// twice in the journals").
func TestCommitWaitsForAMergeInAnotherProcess(t *testing.T) {
	_, h := remoteAndHosts(t, 2)
	a, b := h[0], h[1]
	appendLine(t, a, "a", "from host A", day)
	exchange(t, exchanger(t, a))
	appendLine(t, b, "a", "from host B", day.Add(time.Second))

	dir := t.TempDir()
	fake := filepath.Join(dir, "git")
	if err := os.WriteFile(fake, []byte(pausingGit), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DIR", dir)
	t.Setenv("ATTRS", filepath.Join(b, ".memsync", "gitattributes"))
	x, err := NewExchanger(ExchangerOptions{Root: b, Remote: "origin", Committer: committer(t, b), Git: fake})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := x.ExchangeNow(context.Background())
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "paused")); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the exchange ended before its merge paused: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the merge never paused")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := headOf(t, b)

	// Another process's Committer (the restarted daemon's): it holds no
	// turn of this process, so it calls commit directly.
	defer func(w time.Duration) { mergeLockWait = w }(mergeLockWait)
	mergeLockWait = 100 * time.Millisecond
	res, err := committer(t, b).commit(context.Background(), "", nil)
	if !errors.Is(err, ErrLocked) || res.Commit != "" {
		t.Errorf("commit during another process's merge = %+v, %v; want ErrLocked and no commit", res, err)
	}
	if now := headOf(t, b); now != before {
		t.Errorf("HEAD moved from %s to %s during the merge", before, now)
	}

	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the exchange: %v", err)
	}
	if parents := strings.Fields(git(t, b, "rev-list", "--parents", "-n", "1", "HEAD")); len(parents) != 3 {
		t.Errorf("HEAD %v is not the merge", parents)
	}
	lines := journalLines(t, b)
	if len(lines) != 2 {
		t.Errorf("journal lines after the merge: %q, want one from each host", lines)
	}
	if out := git(t, b, "status", "--porcelain", "--untracked-files=no"); out != "" {
		t.Errorf("not clean after the merge:\n%s", out)
	}
}
