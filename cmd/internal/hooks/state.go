package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// State is what the hooks remember of one session of an agent: when
// it began, whether its SessionStart was answered, which memories it was
// given, whether it was reminded to journal. One small JSON file per
// session in the agent's host-local sync/hooks/ directory, replaced
// atomically: hooks of two sessions never write the same file, and a hook
// killed mid-write leaves the previous state whole.
type State struct {
	Session  string    `json:"session"`
	Host     string    `json:"host,omitempty"`
	Started  time.Time `json:"started"`            // the first event memsync saw of the session
	Answered bool      `json:"answered,omitempty"` // a SessionStart was answered with context
	Reminded bool      `json:"reminded,omitempty"` // the journaling reminder reached the model
	Injected []string  `json:"injected,omitempty"` // uuids of the memories given, oldest first
	Updated  time.Time `json:"updated"`
}

// Bounds of the hooks' per-session state.
const (
	maxInjectedPerSession = 2000                // uuids remembered per session (the oldest drop first)
	maxStates             = 200                 // session files kept per agent
	stateMaxAge           = 30 * 24 * time.Hour // files not touched for this long are pruned
	maxStateBytes         = 1 << 20             // a larger state file is not read (it is not ours)
)

// StateDir is the directory of agent's per-session hook state: one State
// file per session, in the agent's host-local sync/.
func StateDir(l memsync.Layout, agent string) string {
	return filepath.Join(l.SyncDir(agent), "hooks")
}

// stateFile is session's state file: a hash of the session id, so
// that any id a host sends is a safe file name.
func stateFile(l memsync.Layout, agent, session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(StateDir(l, agent), "session-"+hex.EncodeToString(sum[:12])+".json")
}

// stateLockFile is beside session's state: its flock orders the hooks
// of one session (lockState).
func stateLockFile(l memsync.Layout, agent, session string) string {
	return strings.TrimSuffix(stateFile(l, agent, session), ".json") + ".lock"
}

// lockState holds session's lock until the returned function is
// called: two events of one session at once (two Stop hooks) load, change
// and save its state one after the other, so the second sees what the
// first saved and the reminder is given once. Hooks of other sessions do
// not wait. The lock is journal.LockDir's flock, on a file of its own.
func lockState(l memsync.Layout, agent, session string) (func(), error) {
	path := stateLockFile(l, agent, session)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock the session's hook state: %w", err)
	}
	f, err := journal.OpenNoFollow(path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the session's hook state: %w", err)
	}
	f.Close()
	held, err := journal.LockDir(path, true)
	if err != nil {
		return nil, fmt.Errorf("lock the session's hook state: %w", err)
	}
	return func() { held.Close() }, nil
}

// LoadState reads agent's state of session; known is false for a session
// memsync never saw (or a file it did not write), whose state is fresh:
// that is not an error.
func LoadState(l memsync.Layout, agent, session string) (st State, known bool, err error) {
	st = State{Session: session}
	f, err := os.Open(stateFile(l, agent, session))
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("read the session's hook state: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return st, false, fmt.Errorf("read the session's hook state: %w", err)
	}
	if len(data) > maxStateBytes || json.Unmarshal(data, &st) != nil || st.Session != session {
		// Not a state memsync wrote for this session: start afresh (it is
		// replaced on the next save).
		return State{Session: session}, false, nil
	}
	return st, true, nil
}

// saveState replaces session's state atomically.
func saveState(l memsync.Layout, agent string, st *State, now time.Time) error {
	if len(st.Injected) > maxInjectedPerSession {
		st.Injected = slices.Clone(st.Injected[len(st.Injected)-maxInjectedPerSession:])
	}
	st.Updated = now.UTC()
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	path := stateFile(l, agent, st.Session)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save the session's hook state: %w", err)
	}
	if err := journal.WriteAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("save the session's hook state: %w", err)
	}
	return nil
}

// injected reports whether the session was given uuid.
func (st *State) injected(uuid string) bool { return slices.Contains(st.Injected, uuid) }

// addInjected remembers that the session was given uuids.
func (st *State) addInjected(uuids []string) {
	for _, u := range uuids {
		if u != "" && !st.injected(u) {
			st.Injected = append(st.Injected, u)
		}
	}
}

// pruneStates removes the state of agent's sessions untouched for
// stateMaxAge, and of all but the maxStates newest; keep is
// never removed. Errors are ignored: pruning is housekeeping, and a file
// another hook removed meanwhile is already gone.
func pruneStates(l memsync.Layout, agent, keep string, now time.Time) {
	dir := StateDir(l, agent)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), "session-") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, file{e.Name(), info.ModTime()})
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) }) // newest first
	keepName := filepath.Base(stateFile(l, agent, keep))
	for i, f := range files {
		if f.name == keepName {
			continue
		}
		if i >= maxStates || now.Sub(f.mod) > stateMaxAge {
			os.Remove(filepath.Join(dir, f.name))
			os.Remove(filepath.Join(dir, strings.TrimSuffix(f.name, ".json")+".lock"))
		}
	}
}

// sessionStartedAt is when session began as sync/sessions.jsonl records
// it (its first event there), and whether a SessionStart of it is there;
// a zero time when the session is not in the file. Only lines that name
// the session are decoded.
func sessionStartedAt(l memsync.Layout, agent, session string) (start time.Time, answered bool) {
	data, err := os.ReadFile(SessionsFile(l, agent))
	if err != nil {
		return time.Time{}, false
	}
	id, _ := json.Marshal(session)
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, id) {
			continue
		}
		var ev SessionEvent
		if json.Unmarshal(line, &ev) != nil || ev.Session != session {
			continue
		}
		if start.IsZero() || ev.Time.Before(start) {
			start = ev.Time
		}
		if ev.Event == "SessionStart" {
			answered = true
		}
	}
	return start, answered
}

// maxJournaledFiles is how many of the agent's newest journal files
// sessionJournaled reads.
const maxJournaledFiles = 2

// olderRun is how many lines in a row stamped at or before a session's
// start end sessionJournaled's newest-first scan of a file: lines are
// appended in time order, but a few may carry an earlier, explicit stamp.
const olderRun = 64

// sessionJournaled reports whether agent journaled during session: a
// record of the agent whose session field is the session id (rememberHint
// puts it there), or any record of the agent stamped after the session's
// start (append stamps to the microsecond). It reads only the agent's
// newest journal files (a session's records are in its day's file, or the
// next day's), never the graph: the id is searched in the whole file at
// once, and the stamps newest first until a run of olderRun lines older
// than the start; only a line that may qualify is decoded.
func sessionJournaled(l memsync.Layout, agent, session string, start time.Time) (bool, error) {
	files, err := l.JournalFiles(agent)
	if err != nil {
		return false, fmt.Errorf("list %s's journals: %w", agent, err)
	}
	slices.SortStableFunc(files, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	if len(files) > maxJournaledFiles {
		files = files[len(files)-maxJournaledFiles:]
	}
	id, _ := json.Marshal(session)
	qualifies := func(line []byte) bool {
		var r struct {
			Agent   string    `json:"agent"`
			TS      time.Time `json:"ts"`
			Session string    `json:"session"`
		}
		if json.Unmarshal(line, &r) != nil || r.Agent != agent {
			return false
		}
		return session != "" && r.Session == session || !start.IsZero() && r.TS.After(start)
	}
	for i := len(files) - 1; i >= 0; i-- {
		data, err := os.ReadFile(files[i])
		if errors.Is(err, os.ErrNotExist) {
			continue // compacted away meanwhile
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", files[i], err)
		}
		if session != "" {
			for rest := data; ; {
				k := bytes.Index(rest, id)
				if k < 0 {
					break
				}
				from := bytes.LastIndexByte(rest[:k], '\n') + 1
				to := bytes.IndexByte(rest[k:], '\n')
				if to < 0 {
					break // a last line without its newline is not written yet
				}
				if qualifies(rest[from : k+to]) {
					return true, nil
				}
				rest = rest[k+to:]
			}
		}
		if start.IsZero() {
			continue
		}
		older := 0
		for end := bytes.LastIndexByte(data, '\n'); end > 0 && older < olderRun; {
			from := bytes.LastIndexByte(data[:end], '\n') + 1
			line := data[from:end]
			end = from - 1
			if ts, ok := lineTS(line); ok && !ts.After(start) {
				older++
				continue
			}
			older = 0
			if len(line) > 0 && qualifies(line) {
				return true, nil
			}
		}
	}
	return false, nil
}

// lineTS reads a journal line's "ts" without decoding the line; ok is
// false when it cannot (the line is then decoded).
func lineTS(line []byte) (time.Time, bool) {
	i := bytes.Index(line, []byte(`"ts":"`))
	if i < 0 {
		return time.Time{}, false
	}
	rest := line[i+len(`"ts":"`):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(rest[:j]))
	return ts, err == nil
}
