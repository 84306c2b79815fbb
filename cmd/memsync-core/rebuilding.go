package main

import (
	"fmt"

	"github.com/memsync/memsync/memsync"
)

// embeddedRebuilding returns an error naming the rebuild when the graph is
// the embedded store and `memsync rebuild` holds the repository's lock: the
// store is then dropped and half built, and a read answers from the
// journals instead (offline, with this as its reason). Neo4j needs no such
// check: its rebuild builds the new generation in the other slot and every
// read is served by the current one until the switch. nil when no rebuild
// runs (or the lock cannot be read: not proof of one).
func embeddedRebuilding(cfg *Config, repo string) error {
	if cfg.graph() == graphNeo4j {
		return nil
	}
	h, held, err := memsync.RepoLockHolder(layout(repo))
	if err != nil || !held || h.Command != "rebuild" {
		return nil
	}
	return fmt.Errorf("%s is rebuilding the embedded store, which answers again when it is done: %w", h, memsync.ErrUnavailable)
}
