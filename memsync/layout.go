package memsync

import "github.com/memsync/memsync/journal"

// Layout names the places inside a memory repository (journal.Layout,
// which lives with the journals so that packages below the engine, such
// as compaction, need not import it).
type Layout = journal.Layout

// IgnoredPath is something under agents/ that memsync does not read, and
// why (journal.IgnoredPath).
type IgnoredPath = journal.IgnoredPath
