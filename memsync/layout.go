package memsync

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/memsync/memsync/journal"
)

// Layout names the places of SPEC §2 inside a memory repository.
type Layout struct {
	Root string // the repository work tree
}

// AgentsDir holds one directory per agent.
func (l Layout) AgentsDir() string { return filepath.Join(l.Root, "agents") }

// MemoryDir is agent's memory directory.
func (l Layout) MemoryDir(agent string) string {
	return filepath.Join(l.Root, "agents", agent, "memory")
}

// JournalDir holds agent's daily journals.
func (l Layout) JournalDir(agent string) string { return filepath.Join(l.MemoryDir(agent), "journal") }

// ArchiveDir holds agent's compacted journals.
func (l Layout) ArchiveDir(agent string) string { return filepath.Join(l.JournalDir(agent), "archive") }

// SyncDir holds agent's host-local sync state.
func (l Layout) SyncDir(agent string) string { return filepath.Join(l.MemoryDir(agent), "sync") }

// CacheDir holds agent's generated snapshots.
func (l Layout) CacheDir(agent string) string { return filepath.Join(l.MemoryDir(agent), "cache") }

// StateFile is agent's cursor file.
func (l Layout) StateFile(agent string) string { return filepath.Join(l.SyncDir(agent), "state.json") }

// OutboxFile is agent's retry queue.
func (l Layout) OutboxFile(agent string) string {
	return filepath.Join(l.SyncDir(agent), "outbox.jsonl")
}

// RejectsFile lists agent's lines that can never be projected.
func (l Layout) RejectsFile(agent string) string {
	return filepath.Join(l.SyncDir(agent), "rejects.jsonl")
}

// LocalDir is the host-local .memsync directory (embedded store, locks).
func (l Layout) LocalDir() string { return filepath.Join(l.Root, ".memsync") }

// DaemonLockFile is the daemon lock (see LockRepo).
func (l Layout) DaemonLockFile() string { return filepath.Join(l.LocalDir(), "daemon.lock") }

// Rel is path relative to the root, slash-separated.
func (l Layout) Rel(path string) string {
	rel, err := filepath.Rel(l.Root, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

// Agents lists the agents of the repository: directories under agents/
// with a valid agent name, sorted.
func (l Layout) Agents() ([]string, error) {
	entries, err := os.ReadDir(l.AgentsDir())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && journal.ValidAgent(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// JournalFiles lists agent's archived then live journal files, each group
// in name (date) order.
func (l Layout) JournalFiles(agent string) ([]string, error) {
	var out []string
	for _, dir := range []string{l.ArchiveDir(agent), l.JournalDir(agent)} {
		entries, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}
