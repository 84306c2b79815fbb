package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// DefaultExchangeInterval is how often the daemon exchanges with the remote
// when sync.interval does not say.
const DefaultExchangeInterval = time.Minute

// maxPushRounds bounds how many times one exchange fetches and merges again
// after its push was rejected because the remote moved meanwhile.
const maxPushRounds = 5

// ExchangeFile is where the last exchange's outcome is kept, host-local,
// for memsync status (relative to the repository).
const ExchangeFile = ".memsync/exchange.json"

// ErrConflict means a merge stopped on a conflict outside the journals (a
// person's file changed differently on two hosts). The merge is left in
// progress for the person to resolve and commit; exchanges resume then.
var ErrConflict = errors.New("merge conflict left for a person")

// ExchangerOptions configure an Exchanger.
type ExchangerOptions struct {
	Root      string     // the work tree; required
	Remote    string     // the git remote's name, e.g. origin; required
	Committer *Committer // commits the owned files before each exchange; required
	// Interval is how often Run exchanges; DefaultExchangeInterval when zero.
	Interval time.Duration
	Git      string           // the git executable; "git" on $PATH when empty
	Logger   *zap.Logger      // zap.NewNop() when nil
	Now      func() time.Time // time.Now when nil
}

// Exchanger keeps a memory repository in step with a git remote (SPEC §12):
// commit, fetch, merge, push, and never force. It uses the git executable,
// because go-git cannot merge: git does the three-way merge, applies the
// union driver that .gitattributes (and memsync's own attributes file under
// .memsync/) give the journals, and leaves any other conflict in the work
// tree the way a person expects to find it.
type Exchanger struct {
	opts ExchangerOptions
	lg   *zap.Logger
	git  string

	beforePush func() // tests: runs before each push
}

// ExchangeStatus is the outcome of the last exchange, as ExchangeFile keeps
// it, plus the live distance to the remote that RemoteStatus adds.
type ExchangeStatus struct {
	Remote      string    `json:"remote"`
	Branch      string    `json:"branch,omitempty"`   // the local branch
	Upstream    string    `json:"upstream,omitempty"` // the remote's branch it exchanges with (see RemoteBranch)
	LastAttempt time.Time `json:"last_attempt,omitzero"`
	LastSuccess time.Time `json:"last_exchange,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	// Conflicts are the paths a merge left unresolved for a person.
	Conflicts []string `json:"conflicts,omitempty"`
	Ahead     int      `json:"ahead"`  // local commits the remote lacks
	Behind    int      `json:"behind"` // remote commits this host lacks (as of the last fetch)
	Merged    int      `json:"-"`      // merges the exchange made
	Pushed    bool     `json:"-"`      // whether the exchange pushed
}

// RemoteBranch is the branch of the remote the exchange follows: the
// local branch's upstream, or the branch of the same name (a status
// written by an older memsync names no upstream).
func (st *ExchangeStatus) RemoteBranch() string {
	if st.Upstream != "" {
		return st.Upstream
	}
	return st.Branch
}

// NewExchanger makes an Exchanger; it touches nothing until asked to.
func NewExchanger(opts ExchangerOptions) (*Exchanger, error) {
	if opts.Root == "" || opts.Remote == "" || opts.Committer == nil {
		return nil, errors.New("ledger: ExchangerOptions needs Root, Remote and Committer")
	}
	if strings.HasPrefix(opts.Remote, "-") || strings.ContainsAny(opts.Remote, " \t\n:/\\") {
		return nil, fmt.Errorf("ledger: %q is not a git remote name", opts.Remote)
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultExchangeInterval
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	git := opts.Git
	if git == "" {
		git = "git"
	}
	path, err := exec.LookPath(git)
	if err != nil {
		return nil, fmt.Errorf("ledger: exchanging with a remote needs the git executable: %w", err)
	}
	return &Exchanger{opts: opts, lg: opts.Logger, git: path}, nil
}

// Run exchanges at once and then every Interval until ctx is cancelled.
// Failures are logged, kept for status, and retried at the next tick.
func (x *Exchanger) Run(ctx context.Context) error {
	t := time.NewTicker(x.opts.Interval)
	defer t.Stop()
	for {
		st, err := x.ExchangeNow(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrConflict):
			x.lg.Warn("exchange: a merge conflict outside the journals waits for a person (memsync status names the files)",
				zap.Strings("conflicts", st.Conflicts))
		case errors.Is(err, ErrLocked):
			x.lg.Info("exchange: git is busy; trying again at the next interval", zap.Error(err))
		case err != nil:
			x.lg.Error("exchange failed: will retry at the next interval", zap.String("remote", x.opts.Remote), zap.Error(err))
		case st.Merged > 0 || st.Pushed:
			x.lg.Info("exchange", zap.String("remote", x.opts.Remote), zap.Int("merges", st.Merged), zap.Bool("pushed", st.Pushed))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// ExchangeNow makes one exchange: commit the owned files, fetch the remote
// branch of the same name, merge it (under the locks of the journals the
// merge may rewrite, after committing them again, so that no line appended
// meanwhile can be overwritten), and push; a push the remote rejects as not
// a fast-forward fetches and merges again. Nothing is ever force-pushed,
// reset or rebased. The outcome is recorded in ExchangeFile.
//
// Within a process, one commit or exchange of a repository runs at a time.
// An exchange waits for one under way, up to its Interval (a commit takes
// milliseconds; a commit round the exchange turns away loses nothing, since
// the exchange commits first, but an exchange that never waited would
// starve behind an auto-commit ticking at the same moment), and then gives
// up with ErrLocked, recording nothing: the round is skipped.
func (x *Exchanger) ExchangeNow(ctx context.Context) (ExchangeStatus, error) {
	wait, cancel := context.WithTimeout(ctx, x.opts.Interval)
	done, err := waitTurn(wait, x.opts.Root)
	cancel()
	if err != nil {
		st := ExchangeStatus{Remote: x.opts.Remote}
		if errors.Is(err, ErrLocked) {
			return st, err
		}
		return st, fmt.Errorf("exchange: %w", err)
	}
	defer done()
	st := ExchangeStatus{Remote: x.opts.Remote, LastAttempt: x.opts.Now().UTC()}
	if prev, err := readExchangeFile(x.opts.Root); err == nil {
		st.LastSuccess = prev.LastSuccess
	}
	err = x.exchange(ctx, &st)
	if err != nil {
		st.LastError = err.Error()
	} else {
		st.LastSuccess = st.LastAttempt
	}
	if ctx.Err() == nil {
		if werr := x.writeStatus(&st); werr != nil {
			x.lg.Warn("exchange: cannot record its status", zap.Error(werr))
		}
	}
	return st, err
}

func (x *Exchanger) exchange(ctx context.Context, st *ExchangeStatus) error {
	branch, err := x.branch(ctx)
	if err != nil {
		return err
	}
	st.Branch = branch
	up, err := upstream(ctx, x.opts.Root, x.git, x.opts.Remote, branch)
	if err != nil {
		return err
	}
	st.Upstream = up
	if conflicts, inMerge := x.mergeInProgress(ctx); inMerge {
		st.Conflicts = conflicts
		if len(conflicts) > 0 {
			return fmt.Errorf("%w: %s", ErrConflict, strings.Join(conflicts, ", "))
		}
		return fmt.Errorf("%w: a merge is in progress (resolved but not committed yet)", ErrLocked)
	}
	if _, err := x.opts.Committer.commit(ctx, "", nil); err != nil {
		return fmt.Errorf("exchange: %w", err)
	}
	tracking := "refs/remotes/" + x.opts.Remote + "/" + up
	for round := 0; ; round++ {
		if err := x.fetch(ctx, up); err != nil {
			return err
		}
		st.Ahead, st.Behind = x.distance(ctx, tracking)
		if x.remoteHasBranch(ctx, tracking) && st.Behind > 0 {
			if err := x.merge(ctx, tracking, st); err != nil {
				return err
			}
			st.Merged++
			st.Ahead, st.Behind = x.distance(ctx, tracking)
		}
		if st.Ahead == 0 && x.remoteHasBranch(ctx, tracking) {
			return nil
		}
		if x.beforePush != nil {
			x.beforePush()
		}
		rejected, err := x.push(ctx, branch, up)
		if err == nil {
			st.Pushed = true
			st.Ahead, st.Behind = x.distance(ctx, tracking)
			return nil
		}
		if !rejected || round+1 >= maxPushRounds {
			return err
		}
		x.lg.Info("exchange: the remote moved while we pushed; fetching and merging again")
	}
}

// branch is the branch HEAD names; a detached HEAD is not exchanged.
func (x *Exchanger) branch(ctx context.Context) (string, error) {
	out, err := x.run(ctx, nil, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return "", fmt.Errorf("exchange: HEAD is detached or unreadable; not exchanging: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// ErrUpstream means the branch's configured upstream is not a branch of
// the remote memsync exchanges with (another remote, or a local branch):
// exchanging with a branch of the same name instead would leave this host
// and the others on different branches without anyone noticing, so
// nothing is exchanged until a person points the upstream at the remote
// (or unsets it).
var ErrUpstream = errors.New("the branch's upstream is not on the exchange's remote")

// upstream is the branch of remote that the local branch exchanges with,
// as git follows it: the branch's configured upstream (branch.<name>.merge,
// on branch.<name>.remote, "origin" when unset, as git has it) or, with
// none configured, the branch of the same name. An upstream elsewhere is
// refused with ErrUpstream.
func upstream(ctx context.Context, root, git, remote, branch string) (string, error) {
	get := func(key string) (string, error) {
		out, err := runGit(ctx, root, git, nil, "config", "--get", key)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return "", nil // not set
		}
		if err != nil {
			return "", fmt.Errorf("exchange: read the upstream of %s: %w", branch, err)
		}
		return strings.TrimSpace(out), nil
	}
	merge, err := get("branch." + branch + ".merge")
	if err != nil || merge == "" {
		return branch, err
	}
	on, err := get("branch." + branch + ".remote")
	if err != nil {
		return "", err
	}
	if on == "" {
		on = "origin"
	}
	up, ok := strings.CutPrefix(merge, "refs/heads/")
	if on != remote || !ok || up == "" {
		where := "remote " + strconv.Quote(on)
		if on == "." {
			where = "this repository (a local branch)"
		}
		return "", fmt.Errorf("%w: branch %s tracks %s on %s, and memsync exchanges with %q: not exchanging; "+
			"point it at %s (git branch --set-upstream-to=%s/<branch> %s) or unset it (git branch --unset-upstream %s)",
			ErrUpstream, branch, merge, where, remote, remote, remote, branch, branch)
	}
	return up, nil
}

// mergeInProgress reports whether a merge is under way in the work tree,
// and the paths it left unmerged.
func (x *Exchanger) mergeInProgress(ctx context.Context) ([]string, bool) {
	r, err := openRepo(x.opts.Root)
	if err != nil {
		return nil, false
	}
	gitDir := r.gitDir
	r.Close()
	if _, err := os.Stat(filepath.Join(gitDir, "MERGE_HEAD")); err != nil {
		return nil, false
	}
	return x.unmerged(ctx), true
}

func (x *Exchanger) unmerged(ctx context.Context) []string {
	out, err := x.run(ctx, nil, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return nil
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

func (x *Exchanger) fetch(ctx context.Context, branch string) error {
	refspec := "+refs/heads/" + branch + ":refs/remotes/" + x.opts.Remote + "/" + branch
	if _, err := x.run(ctx, nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", x.opts.Remote, refspec); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && strings.Contains(err.Error(), "couldn't find remote ref") {
			return nil // the remote has no such branch yet: the push creates it
		}
		return fmt.Errorf("exchange: fetch from %s: %w", x.opts.Remote, err)
	}
	return nil
}

func (x *Exchanger) remoteHasBranch(ctx context.Context, tracking string) bool {
	_, err := x.run(ctx, nil, "rev-parse", "--verify", "--quiet", tracking+"^{commit}")
	return err == nil
}

// distance counts the commits HEAD has that tracking lacks, and the reverse.
func (x *Exchanger) distance(ctx context.Context, tracking string) (ahead, behind int) {
	return distance(ctx, x.opts.Root, x.git, tracking)
}

func distance(ctx context.Context, root, git, tracking string) (ahead, behind int) {
	out, err := runGit(ctx, root, git, nil, "rev-list", "--left-right", "--count", "HEAD..."+tracking)
	if err != nil {
		// No tracking branch yet: everything is ahead.
		if out, err := runGit(ctx, root, git, nil, "rev-list", "--count", "HEAD"); err == nil {
			ahead, _ = strconv.Atoi(strings.TrimSpace(out))
		}
		return ahead, 0
	}
	f := strings.Fields(out)
	if len(f) == 2 {
		ahead, _ = strconv.Atoi(f[0])
		behind, _ = strconv.Atoi(f[1])
	}
	return ahead, behind
}

// merge merges tracking into HEAD. The journals the remote changed since
// the merge base are locked (the lock memsync append takes) for the whole
// merge, committed once more under those locks so the work tree holds no
// line git could overwrite, and the locks pass to git itself, so that even
// if this process dies mid-merge no append lands in a file git replaces.
func (x *Exchanger) merge(ctx context.Context, tracking string, st *ExchangeStatus) error {
	base, err := x.run(ctx, nil, "merge-base", "HEAD", tracking)
	changed := []string{}
	if err == nil {
		out, err := x.run(ctx, nil, "diff", "--name-only", "-z", "--no-renames", strings.TrimSpace(base), tracking, "--", "agents")
		if err != nil {
			return fmt.Errorf("exchange: list what the remote changed: %w", err)
		}
		for _, p := range strings.Split(out, "\x00") {
			if p != "" && isJournal(p) && Owned(p) {
				changed = append(changed, p)
			}
		}
	}
	// git writes each merged journal as a new file: the journal
	// directories are held exclusively too (journal.Append holds them
	// shared), so that no append lands in a new file git is still writing.
	// Directories first, then files, in journal.Append's order.
	var dirLocks []*os.File
	dirs := map[string]bool{}
	for _, rel := range changed {
		dir := filepath.Join(x.opts.Root, filepath.FromSlash(path.Dir(rel)))
		if dirs[dir] {
			continue
		}
		dirs[dir] = true
		d, err := journal.LockDir(dir, true)
		if errors.Is(err, os.ErrNotExist) {
			continue // git creates it; an append that creates it first makes git refuse the merge
		}
		if err != nil {
			for _, f := range dirLocks {
				f.Close()
			}
			return fmt.Errorf("exchange: %w", err)
		}
		dirLocks = append(dirLocks, d)
	}
	locks, held, err := x.lockJournals(changed)
	if err != nil {
		for _, f := range dirLocks {
			f.Close()
		}
		return err
	}
	locks = append(locks, dirLocks...)
	defer func() {
		for _, f := range locks {
			f.Close()
		}
	}()
	if _, err := x.opts.Committer.commit(ctx, "", held); err != nil {
		return fmt.Errorf("exchange: commit before merging: %w", err)
	}
	attrs, err := x.attributesFile()
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("memsync: merge %s from %s", strings.TrimPrefix(tracking, "refs/remotes/"), x.opts.Remote)
	// Not bound to ctx: a merge stopped half-way would leave the index
	// locked; it is short, and SIGTERM waits for it.
	_, mergeErr := x.run(context.WithoutCancel(ctx), locks,
		"-c", "core.attributesFile="+attrs, "-c", "merge.conflictStyle=merge",
		"merge", "--no-edit", "--no-verify", "--no-stat", "-m", msg, tracking)
	if mergeErr == nil {
		return nil
	}
	if conflicts, inMerge := x.mergeInProgress(ctx); inMerge {
		st.Conflicts = conflicts
		return fmt.Errorf("%w: %s", ErrConflict, strings.Join(conflicts, ", "))
	}
	return fmt.Errorf("exchange: merge %s: %w", tracking, mergeErr)
}

// lockJournals takes the exclusive lock memsync append takes on each
// journal that exists (git creates the others; an append that creates one
// first makes git refuse the merge untouched, and it is retried).
func (x *Exchanger) lockJournals(paths []string) ([]*os.File, map[string]bool, error) {
	var locks []*os.File
	held := map[string]bool{}
	for _, rel := range paths {
		path := filepath.Join(x.opts.Root, filepath.FromSlash(rel))
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			for _, l := range locks {
				l.Close()
			}
			return nil, nil, fmt.Errorf("exchange: lock %s: %w", rel, err)
		}
		if err := flockWithin(f, lockWait); err != nil {
			f.Close()
			for _, l := range locks {
				l.Close()
			}
			return nil, nil, fmt.Errorf("exchange: lock %s: %w", rel, err)
		}
		locks = append(locks, f)
		held[rel] = true
	}
	return locks, held, nil
}

// lockWait bounds how long the exchange waits for a journal's lock (an
// append holds it for one write; anything longer is skipped this round).
const lockWait = 10 * time.Second

// flockWithin takes f's exclusive lock, giving up with ErrLocked after d.
func flockWithin(f *os.File, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err != syscall.EWOULDBLOCK && err != syscall.EINTR:
			return err
		case time.Now().After(deadline):
			return fmt.Errorf("%w: the journal stayed locked for %v", ErrLocked, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// attributesFile writes the attributes that make every journal merge as a
// union of lines, host-local, so that a repository whose .gitattributes
// lacks them (older, or edited) still merges its journals without conflict.
func (x *Exchanger) attributesFile() (string, error) {
	dir := filepath.Join(x.opts.Root, ".memsync")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("exchange: %w", err)
	}
	path := filepath.Join(dir, "gitattributes")
	if data, err := os.ReadFile(path); err == nil && string(data) == JournalAttributes {
		return path, nil
	}
	if err := journal.WriteAtomic(path, []byte(JournalAttributes)); err != nil {
		return "", fmt.Errorf("exchange: %w", err)
	}
	return path, nil
}

// JournalAttributes is the .gitattributes line that merges journals as a
// union of both sides' lines; memsync init writes it.
const JournalAttributes = "*.jsonl merge=union\n"

// push pushes branch to the remote's branch up without force; rejected
// says the remote refused it because it moved (not a fast-forward).
func (x *Exchanger) push(ctx context.Context, branch, up string) (rejected bool, err error) {
	_, err = x.run(ctx, nil, "push", "--quiet", "--no-verify", "--porcelain", x.opts.Remote, "refs/heads/"+branch+":refs/heads/"+up)
	if err == nil {
		return false, nil
	}
	msg := err.Error()
	// [remote rejected] covers two pushes racing for the remote's ref
	// lock: fetching and merging again is the answer to both.
	rejected = strings.Contains(msg, "[rejected]") || strings.Contains(msg, "[remote rejected]") ||
		strings.Contains(msg, "non-fast-forward") || strings.Contains(msg, "fetch first")
	return rejected, fmt.Errorf("exchange: push to %s: %w", x.opts.Remote, err)
}

func (x *Exchanger) run(ctx context.Context, extra []*os.File, args ...string) (string, error) {
	return runGit(ctx, x.opts.Root, x.git, extra, args...)
}

// runGit runs git in root with a fixed identity, no prompts and no pager;
// extra files are passed to it (to hold their locks while it runs).
func runGit(ctx context.Context, root, git string, extra []*os.File, args ...string) (string, error) {
	verb := args[0] // for messages: the command after any -c options
	for i := 0; i+2 < len(args) && args[i] == "-c"; i += 2 {
		verb = args[i+2]
	}
	// No automatic gc or maintenance and no hooks from memsync's git (the
	// Committer runs none either): they may detach or linger, outlive the
	// command and (inheriting the journal locks of a merge) hold appends
	// off for as long as they run. A person's git still does both.
	args = append([]string{"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.hooksPath=" + os.DevNull}, args...)
	cmd := exec.CommandContext(ctx, git, args...)
	cmd.Dir = root
	// Stopped (the daemon's SIGTERM), git gets SIGTERM, on which it removes
	// its lock files; SIGKILL would leave them and block later fetches.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(),
		"GIT_TERMINAL_PROMPT=0", "GIT_MERGE_AUTOEDIT=no", "LC_ALL=C", "GIT_PAGER=cat",
		"GIT_AUTHOR_NAME="+AuthorName, "GIT_AUTHOR_EMAIL="+AuthorEmail,
		"GIT_COMMITTER_NAME="+AuthorName, "GIT_COMMITTER_EMAIL="+AuthorEmail)
	cmd.ExtraFiles = extra
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		detail := strings.TrimSpace(stderr.String() + "\n" + stdout.String())
		return stdout.String(), fmt.Errorf("git %s: %w: %s", verb, err, detail)
	}
	return stdout.String(), nil
}

func (x *Exchanger) writeStatus(st *ExchangeStatus) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(x.opts.Root, filepath.FromSlash(ExchangeFile))
	return journal.WriteAtomic(path, append(data, '\n'))
}

func readExchangeFile(root string) (*ExchangeStatus, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(ExchangeFile)))
	if err != nil {
		return nil, err
	}
	var st ExchangeStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", ExchangeFile, err)
	}
	return &st, nil
}

// RemoteStatus is what memsync status shows of the exchange: the last
// exchange's outcome, with ahead/behind and any merge conflict read live
// from git. It returns nil, nil when this host never exchanged.
func RemoteStatus(ctx context.Context, root string) (*ExchangeStatus, error) {
	st, err := readExchangeFile(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	git, err := exec.LookPath("git")
	if err != nil || st.Branch == "" {
		return st, nil
	}
	// Where the branch's upstream points now, not at the last exchange: a
	// person may have changed it since.
	up, err := upstream(ctx, root, git, st.Remote, st.Branch)
	if err != nil {
		st.Ahead, st.Behind, st.Upstream = 0, 0, ""
		st.LastError = err.Error()
		return st, nil
	}
	st.Upstream = up
	st.Ahead, st.Behind = distance(ctx, root, git, "refs/remotes/"+st.Remote+"/"+st.RemoteBranch())
	x := &Exchanger{opts: ExchangerOptions{Root: root}, git: git}
	if conflicts, inMerge := x.mergeInProgress(ctx); inMerge {
		st.Conflicts = conflicts
	} else {
		st.Conflicts = nil
	}
	return st, nil
}
