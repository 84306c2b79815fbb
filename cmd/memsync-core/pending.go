package main

import (
	"fmt"

	"github.com/memsync/memsync/memsync"
)

// hintUnprojected says on stderr, in one line, how many journal records
// the graph a read (search, list, packet, show) just answered from has not
// been given yet, when there are any: without it a read before the daemon
// ever ran is silently empty. r is the graph read ("" identity: trust the
// cursors whatever graph they name). Cheap (memsync.Unprojected); a
// failure to count says nothing, as the read has answered already.
func hintUnprojected(env *Env, cmd, repo string, r any) {
	identity := ""
	if g, ok := r.(interface{ Identity() string }); ok {
		identity = g.Identity()
	}
	n, err := memsync.Unprojected(layout(repo), identity)
	if err != nil || n == 0 {
		return
	}
	records, are := "records", "are"
	if n == 1 {
		records, are = "record", "is"
	}
	fmt.Fprintf(env.Stderr, "memsync %s: %d %s in the journals %s not projected yet (is `memsync run` running? `memsync sync` projects them once)\n",
		cmd, n, records, are)
}
