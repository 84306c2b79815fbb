package main

import (
	"errors"

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
