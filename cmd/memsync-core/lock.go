package main

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

// lockRepo takes the repository's daemon lock (.memsync/daemon.lock) for
// command, so that no daemon runs beside it and it runs beside no daemon.
// When another process holds it, the command reports that process and
// advice (what to do instead) as bad usage and must return code.
func lockRepo(fs *cmdFlags, repo, command, advice string) (lock *memsync.RepoLock, code int, done bool) {
	lock, err := memsync.LockRepo(layout(repo), command, fs.Env.Now())
	var le *memsync.LockedError
	if errors.As(err, &le) {
		if le.Holder.Command != "" && le.Holder.Command != "run" {
			advice = "wait for it to finish"
		}
		return nil, fs.usageErr("%v; %s", le, advice), true
	}
	if err != nil {
		return nil, fs.fail("%v", err), true
	}
	return lock, 0, false
}

// waitRepoLock is lockRepo for the daemon: while a command that ends
// (compact, rebuild, sync) holds the lock it waits, and its log says for
// whom; another daemon holding it is reported at once, as lockRepo does.
// ctx ending while it waits is a clean exit.
func waitRepoLock(ctx context.Context, fs *cmdFlags, repo, command, advice string) (lock *memsync.RepoLock, code int, done bool) {
	lg, err := newLogger(&Config{}, fs.Env.Stderr)
	if err != nil {
		lg = zap.NewNop()
	}
	defer lg.Sync() //nolint:errcheck // stderr
	lock, err = memsync.WaitRepoLock(ctx, layout(repo), command, fs.Env.Now, func(h memsync.LockHolder) {
		lg.Info("the repository is locked: waiting for it to finish before starting",
			zap.String("holder", h.String()), zap.String("command", h.Command), zap.Int("pid", h.PID))
	})
	var le *memsync.LockedError
	switch {
	case errors.As(err, &le):
		return nil, fs.usageErr("%v; %s", le, advice), true
	case err != nil && ctx.Err() != nil:
		return nil, exitOK, true
	case err != nil:
		return nil, fs.fail("%v", err), true
	}
	return lock, 0, false
}
