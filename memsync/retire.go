package memsync

import "github.com/memsync/memsync/journal"

// Retire applies src's supersession of n where it takes effect
// (journal.Retires: its writer sees n, and a private record retires only
// its own group's memories): n keeps the earliest record that retires it
// (journal.RetiresFirst), as a graph's InvalidAt and ReplacedBy do. It is how the stores without edges (the offline path, test oracles)
// retire memories exactly as the backends' Apply does.
func Retire(n *Node, src *journal.Record) {
	if !journal.Retires(src.Agent, src.GroupID(), n.Record.GroupID()) {
		return
	}
	if journal.RetiresFirst(src.TS, src.UUID, n.InvalidAt, n.ReplacedBy) {
		n.InvalidAt, n.ReplacedBy = src.TS, src.UUID
	}
}
