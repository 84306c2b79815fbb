package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Layout names the places of SPEC §2 inside a memory repository: the
// journals and what memsync keeps beside them.
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

// SummaryFile is the daemon's summary of the journals (memsync.Summary):
// what its last pass of each agent left, so that a read can tell whether
// records wait without opening every journal.
func (l Layout) SummaryFile() string { return filepath.Join(l.LocalDir(), "summary.json") }

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

// SequenceFile is agent's host-local high-water file for the uuids
// Append allocates (AppendOptions.SequenceFile).
func (l Layout) SequenceFile(agent string) string {
	return filepath.Join(l.LocalDir(), "sequence", agent)
}

// IgnoredPath is something under agents/ that looks like memory but that
// memsync does not read, and why: a directory with an invalid agent name,
// a symbolic link (never followed: it may lead out of the repository), a
// .jsonl file not named for a day.
type IgnoredPath struct {
	Path   string `json:"path"` // relative to the root, slash-separated
	Reason string `json:"reason"`
}

// Reasons of IgnoredPath.
const (
	ReasonLink      = "symbolic link: not followed"
	ReasonAgentName = "not a valid agent name ([A-Za-z0-9][A-Za-z0-9_-]{0,63})"
	ReasonFileName  = "journal file not named YYYY-MM-DD.jsonl"
	ReasonNotDir    = "not a directory"
)

// Agents lists the agents of the repository: real directories (not
// symbolic links) under agents/ with a valid agent name, sorted. An agent
// whose memory/, sync/ or cache/ directory is a symbolic link is left out
// too: memsync writes there, and would write outside the repository.
func (l Layout) Agents() ([]string, error) {
	agents, _, err := l.AgentsIgnored()
	return agents, err
}

// AgentDirs lists the names under agents/ that may be agents: real
// directories with valid names. Unlike AgentsIgnored it checks nothing
// below them (AgentsIgnored checks each one's sync/ and cache/ for
// links): the daemon's watcher, which checks each directory it watches
// itself, lists with it, and the pass after it lists with AgentsIgnored.
func (l Layout) AgentDirs() ([]string, error) {
	agents, _, err := l.scanAgents(false)
	return agents, err
}

// AgentsIgnored is Agents with what it left out, and why.
func (l Layout) AgentsIgnored() ([]string, []IgnoredPath, error) { return l.scanAgents(true) }

// scanAgents lists the agents under agents/ and what it left out, each
// agent's sync/ and cache/ checked for links too when below is set.
func (l Layout) scanAgents(below bool) ([]string, []IgnoredPath, error) {
	if err := RealDir(l.Root, l.AgentsDir()); err != nil {
		if ig, ok := l.ignoredDir(err); ok {
			return nil, []IgnoredPath{ig}, nil
		}
		return nil, nil, err
	}
	entries, err := os.ReadDir(l.AgentsDir())
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []string
	var ignored []IgnoredPath
	rel := func(e os.DirEntry) string { return l.Rel(filepath.Join(l.AgentsDir(), e.Name())) }
	for _, e := range entries {
		switch {
		case e.Type()&os.ModeSymlink != 0:
			ignored = append(ignored, IgnoredPath{rel(e), ReasonLink})
		case !e.IsDir():
		case !ValidAgent(e.Name()):
			ignored = append(ignored, IgnoredPath{rel(e), ReasonAgentName})
		default:
			if below {
				ig, err := l.writableDirs(e.Name())
				if err != nil {
					return nil, nil, err
				}
				if ig != nil {
					ignored = append(ignored, *ig)
					continue
				}
			}
			out = append(out, e.Name())
		}
	}
	return out, ignored, nil
}

// writableDirs checks the directories memsync writes in for agent: an
// IgnoredPath when one is reached through a symbolic link.
//
// The memory directory is checked from the root once, then each of the
// two below it alone (RealDir from a directory just found real checks
// only what lies below it): 5 lstats an agent instead of 8, and the
// daemon lists every agent at each full rescan.
func (l Layout) writableDirs(agent string) (*IgnoredPath, error) {
	mem := l.MemoryDir(agent)
	for _, c := range [][2]string{{l.Root, mem}, {mem, l.SyncDir(agent)}, {mem, l.CacheDir(agent)}} {
		if err := RealDir(c[0], c[1]); err != nil {
			ig, ok := l.ignoredDir(err)
			if !ok {
				return nil, err
			}
			return &ig, nil
		}
	}
	return nil, nil
}

// ignoredDir turns RealDir's refusal into an IgnoredPath.
func (l Layout) ignoredDir(err error) (IgnoredPath, bool) {
	var le *LinkError
	if errors.As(err, &le) {
		return IgnoredPath{l.Rel(le.Path), ReasonLink}, true
	}
	var nd *NotDirError
	if errors.As(err, &nd) {
		return IgnoredPath{l.Rel(nd.Path), ReasonNotDir}, true
	}
	return IgnoredPath{}, false
}

// JournalFiles lists agent's archived then live journal files, each group
// in name (date) order: DayFiles of the archive, then of the journal.
func (l Layout) JournalFiles(agent string) ([]string, error) {
	files, _, err := l.JournalFilesIgnored(agent)
	return files, err
}

// JournalFilesIgnored is JournalFiles with what it left out, and why.
func (l Layout) JournalFilesIgnored(agent string) ([]string, []IgnoredPath, error) {
	var out []string
	var ignored []IgnoredPath
	for _, dir := range []string{l.ArchiveDir(agent), l.JournalDir(agent)} {
		files, ig, err := l.DayFiles(dir)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, files...)
		for _, i := range ig {
			if !slices.Contains(ignored, i) { // a link above both is found twice
				ignored = append(ignored, i)
			}
		}
	}
	return out, ignored, nil
}

// DayFiles lists the journal files of dir, a journal or archive directory
// of this repository, in name (date) order: regular files named
// YYYY-MM-DD.jsonl. It is the one place that decides which files memsync
// reads (the engine, offline search, verify, rebuild, compaction): nothing
// is read through a symbolic link, whether dir or one of the directories
// above it (up to the root) or the file itself is one. What it leaves out
// that looks like a journal (a link, a .jsonl file with another name) is
// returned as ignored. A missing dir has no files.
func (l Layout) DayFiles(dir string) (files []string, ignored []IgnoredPath, err error) {
	if err := RealDir(l.Root, dir); err != nil {
		if ig, ok := l.ignoredDir(err); ok {
			return nil, []IgnoredPath{ig}, nil
		}
		return nil, nil, err
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		path := filepath.Join(dir, name)
		switch {
		case e.Type()&os.ModeSymlink != 0:
			ignored = append(ignored, IgnoredPath{l.Rel(path), ReasonLink})
		case !e.Type().IsRegular():
		case !IsDayFile(name):
			ignored = append(ignored, IgnoredPath{l.Rel(path), ReasonFileName})
		default:
			files = append(files, path)
		}
	}
	sort.Strings(files)
	return files, ignored, nil
}

// IsDayFile reports whether name is a journal file's name: YYYY-MM-DD.jsonl
// of a real date.
func IsDayFile(name string) bool {
	day, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || len(day) != len("2006-01-02") {
		return false
	}
	_, err := time.Parse("2006-01-02", day)
	return err == nil
}

// Ignored lists what memsync leaves alone under agents/ (see IgnoredPath),
// sorted by path.
func (l Layout) Ignored() ([]IgnoredPath, error) {
	agents, ignored, err := l.AgentsIgnored()
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		_, ig, err := l.JournalFilesIgnored(a)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", a, err)
		}
		ignored = append(ignored, ig...)
	}
	sort.Slice(ignored, func(i, j int) bool { return ignored[i].Path < ignored[j].Path })
	return ignored, nil
}
