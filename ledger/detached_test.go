package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Someone checks out an older commit while agents keep appending: memsync
// must not commit onto the detached HEAD (git checkout main would then
// leave that commit, and the records, behind). The round is skipped with
// one warning however many ticks pass, the reason is exposed, and
// committing resumes once HEAD is on a branch again.
func TestCommitPausesOnADetachedHEAD(t *testing.T) {
	dir := newRepo(t)
	appendLine(t, dir, "a", "first", day)
	core, logs := observer.New(zapcore.DebugLevel)
	c, err := NewCommitter(CommitterOptions{Root: dir, Logger: zap.New(core), Now: func() time.Time { return time.Unix(1800000000, 0).UTC() }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	old := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	appendLine(t, dir, "a", "second", day)
	if _, err := c.CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	main := strings.TrimSpace(git(t, dir, "rev-parse", "main"))

	for i, detach := range [][]string{{"checkout", "-q", old}, {"checkout", "-q", "--detach", "main"}} {
		git(t, dir, detach...)
		if got := HeadNotOnBranch(dir); got != "HEAD is detached" {
			t.Fatalf("after git %v: HeadNotOnBranch %q", detach, got)
		}
		appendLine(t, dir, "a", "written while detached", day)
		head := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
		_, err := c.CommitNow(ctx, "")
		if !errors.Is(err, ErrDetached) || !errors.Is(err, ErrLocked) {
			t.Fatalf("commit on a detached HEAD: %v", err)
		}
		for range 3 {
			c.tick(ctx, nil)
		}
		if got := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")); got != head {
			t.Fatalf("HEAD moved from %s to %s while detached", head, got)
		}
		if got := strings.TrimSpace(git(t, dir, "rev-parse", "main")); got != main {
			t.Fatalf("main moved from %s to %s", main, got)
		}
		if got := c.Paused(); got != "HEAD is detached" {
			t.Fatalf("Paused %q", got)
		}
		if n := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("auto-commit paused").Len(); n != 1 {
			t.Fatalf("%d warnings for 3 ticks on a detached HEAD:\n%v", n, logs.All())
		}
		// git refuses to leave the detached HEAD with the records unsaved
		// (they are in no commit), as it would without memsync.
		if detach[2] == old {
			if out, err := gitErr(dir, "checkout", "-q", "main"); err == nil {
				t.Fatalf("git checkout main left the appended records behind: %s", out)
			}
		}
		// On a branch again, the next tick commits and says so.
		git(t, dir, "switch", "-q", "-c", fmt.Sprint("rescue-", i))
		if got := HeadNotOnBranch(dir); got != "" {
			t.Fatalf("on a branch: HeadNotOnBranch %q", got)
		}
		c.tick(ctx, nil)
		if c.Paused() != "" {
			t.Fatalf("still paused: %q", c.Paused())
		}
		if logs.FilterMessageSnippet("auto-commit resumed").Len() == 0 {
			t.Fatalf("no resume logged:\n%v", logs.All())
		}
		if s := git(t, dir, "status", "--porcelain"); s != "" {
			t.Fatalf("not committed after resuming: %s", s)
		}
		if log := git(t, dir, "log", "-1", "--format=%an"); log != "memsync\n" {
			t.Fatalf("last commit by %q", log)
		}
		logs.TakeAll()
		git(t, dir, "checkout", "-q", "main")
	}
}

// A HEAD naming something that is not a branch is not committed on
// either; an unborn branch is (the first commit), and a rebase in
// progress is already skipped as busy.
func TestHeadNotOnBranch(t *testing.T) {
	dir := newRepo(t)
	if got := HeadNotOnBranch(dir); got != "" {
		t.Fatalf("on main: %q", got)
	}
	git(t, dir, "symbolic-ref", "HEAD", "refs/remotes/origin/main")
	if got := HeadNotOnBranch(dir); got != "HEAD is not on a branch (refs/remotes/origin/main)" {
		t.Fatalf("HEAD on a remote ref: %q", got)
	}
	appendLine(t, dir, "a", "first", day)
	if _, err := committer(t, dir).CommitNow(context.Background(), ""); !errors.Is(err, ErrDetached) {
		t.Fatalf("commit with HEAD on a remote ref: %v", err)
	}
	git(t, dir, "symbolic-ref", "HEAD", "refs/heads/unborn")
	if got := HeadNotOnBranch(dir); got != "" {
		t.Fatalf("unborn branch: %q", got)
	}
	if _, err := committer(t, dir).CommitNow(context.Background(), ""); err != nil {
		t.Fatalf("first commit on an unborn branch: %v", err)
	}
}
