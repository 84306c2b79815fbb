package memsync

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// The daemon's summary (.memsync/summary.json) is what a read needs to
// say whether records wait for the graph, and what status needs to report
// the journals, without opening every journal: after each pass the engine
// writes, per agent it read, what its journals held as the pass left them
// (lines waiting past the cursors, outbox entries, valid records,
// future-dated ts, the oldest record waiting) and how to tell cheaply
// that nothing was written since: the mtimes of the journal and archive
// directories (a file created or removed), of the agent's sequence file
// (every uuid `memsync append` allocates bumps it) and where the newest
// live journal ended (records are filed under their day: new ones land
// there). A reader stats those three or four paths per agent; when they
// moved it reads that agent as before, from its cursors.

// summaryVersion is the format of the summary file.
const summaryVersion = 1

// Summary is the daemon's summary file: the journals as its last pass of
// each agent left them, for the graph named.
type Summary struct {
	Version int                     `json:"version"`
	Graph   string                  `json:"graph"`
	Written time.Time               `json:"written"`
	Agents  map[string]AgentSummary `json:"agents"`
}

// AgentSummary is one agent's entry of the summary.
type AgentSummary struct {
	Generation string `json:"generation,omitempty"` // of the cursors (State.Generation)
	Files      int    `json:"files"`
	// Waiting counts the complete journal lines past the cursors, Outbox
	// the outbox entries not yet in the graph.
	Waiting int `json:"waiting"`
	Outbox  int `json:"outbox"`
	// Records counts the valid records the agent owns in its journals;
	// Future the ts of those dated after the pass (at most maxFuture).
	Records int         `json:"records"`
	Future  []time.Time `json:"future,omitempty"`
	// Oldest is the ts of the oldest record waiting (past a cursor, or the
	// outbox's first entry's queue time).
	Oldest time.Time `json:"oldest,omitzero"`
	// What a reader stats to tell that nothing changed since.
	JournalDir time.Time `json:"journal_dir,omitzero"`
	ArchiveDir time.Time `json:"archive_dir,omitzero"`
	Sequence   time.Time `json:"sequence,omitzero"`
	// Last is the newest live journal (repo-relative), LastEnd the end of
	// its last complete line as the summary read it: lines past it are new.
	Last    string `json:"last,omitempty"`
	LastEnd int64  `json:"last_end,omitempty"`
}

// LoadSummary reads the summary file; ok is false when there is none, or
// it cannot be read or understood (the readers then count as before).
func LoadSummary(layout Layout) (s *Summary, ok bool) {
	data, err := os.ReadFile(layout.SummaryFile())
	if err != nil {
		return nil, false
	}
	s = &Summary{}
	if json.Unmarshal(data, s) != nil || s.Version != summaryVersion || s.Agents == nil {
		return nil, false
	}
	return s, true
}

// journalOpens counts the journal files the readers of this file and
// Unprojected open, for the tests (JournalOpens).
var journalOpens atomic.Int64

// agentScan is what scanAgent learns of one agent's journals.
type agentScan struct {
	files, waiting, records int
	future                  []time.Time
	oldest                  time.Time
	last                    string
	lastEnd                 int64
	// counted holds, for the files whose cursor did not count (read whole
	// here), what lies before the cursor: the engine stores it in the
	// cursor, so that the next look reads only past it.
	counted map[string]Cursor
	// before is what the last read found before its cursor.
	before Cursor
}

func (s *agentScan) older(t time.Time) {
	if !t.IsZero() && (s.oldest.IsZero() || t.Before(s.oldest)) {
		s.oldest = t
	}
}

// scanAgent reads what agent's journals hold past state's cursors: a stat
// of each file, and a read of only the bytes past a counted cursor (a
// file whose cursor does not count, Cursor.Counted, is read whole for its
// records). now dates the future.
func scanAgent(layout Layout, agent string, state *State, now time.Time) (agentScan, error) {
	var sc agentScan
	files, err := layout.JournalFiles(agent)
	if err != nil {
		return sc, err
	}
	sc.files = len(files)
	live := layout.JournalDir(agent) + string(filepath.Separator)
	for _, path := range files {
		rel := layout.Rel(path)
		cur := state.Files[rel]
		fi, err := os.Stat(path)
		if err != nil {
			continue // gone since the listing
		}
		from := cur.Offset
		if fi.Size() < cur.Offset {
			from, cur = 0, Cursor{} // truncated: read again from the start
		}
		if cur.Counted || cur.Offset == 0 {
			sc.records += cur.Records
			for _, t := range cur.Future {
				sc.future = addFuture(sc.future, t)
			}
		} else {
			from = 0 // records not counted: read the file for them
		}
		end := cur.Offset
		if fi.Size() > from {
			end, err = sc.read(path, agent, from, cur.Offset, now)
			if err != nil {
				return sc, err
			}
			if from < cur.Offset {
				if sc.counted == nil {
					sc.counted = map[string]Cursor{}
				}
				sc.counted[rel] = sc.before
			}
		}
		if len(path) > len(live) && path[:len(live)] == live {
			sc.last, sc.lastEnd = rel, end
		}
	}
	return sc, nil
}

// read reads the complete lines of path from offset from: every valid
// record agent owns counts, and those at or past cursor wait. It returns
// the end of the last complete line.
func (s *agentScan) read(path, agent string, from, cursor int64, now time.Time) (int64, error) {
	journalOpens.Add(1)
	f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return from, nil // unreadable now: nothing known past from
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return from, err
	}
	r := journal.NewReader(f, from, 0)
	first := true
	s.before = Cursor{Counted: true}
	for {
		l, err := r.Next()
		if err == io.EOF {
			return r.Offset(), nil
		}
		if err != nil {
			return r.Offset(), err
		}
		waits := l.Offset >= cursor
		if waits {
			s.waiting++
		}
		if l.Err != nil || journal.CheckOwner(&l.Record, agent) != nil {
			continue
		}
		s.records++
		if l.Record.TS.After(now) {
			s.future = addFuture(s.future, l.Record.TS)
		}
		if !waits {
			s.before.Records++
			if l.Record.TS.After(now) {
				s.before.Future = addFuture(s.before.Future, l.Record.TS)
			}
		}
		if waits && first {
			s.older(l.Record.TS)
			first = false
		}
	}
}

// summarize is the entry of agent a as the engine left it.
func (e *Engine) summarize(a *agentSync) (AgentSummary, error) {
	now := e.opts.Now()
	sc, err := scanAgent(e.layout, a.name, a.state, now)
	if err != nil {
		return AgentSummary{}, err
	}
	s := AgentSummary{
		Generation: a.state.Generation, Files: sc.files, Waiting: sc.waiting, Records: sc.records,
		Future: sc.future, Oldest: sc.oldest, Last: sc.last, LastEnd: sc.lastEnd,
	}
	if a.outboxPending() {
		n, _ := countLines(e.layout.OutboxFile(a.name), a.state.OutboxDone)
		s.Outbox = n
		if _, _, queued, err := readOutbox(e.layout.OutboxFile(a.name), a.state.OutboxDone, 1); err == nil && !queued.IsZero() {
			if s.Oldest.IsZero() || queued.Before(s.Oldest) {
				s.Oldest = queued
			}
		}
	}
	s.JournalDir, s.ArchiveDir, s.Sequence = marks(e.layout, a.name)
	if len(sc.counted) > 0 && !a.stalled {
		// Cursors made before cursors counted now count what they cover:
		// the next summary reads only past them.
		st := a.state.clone()
		for rel, c := range sc.counted {
			if cur, ok := st.Files[rel]; ok && !cur.Counted {
				cur.Counted, cur.Records, cur.Future = true, c.Records, c.Future
				st.Files[rel] = cur
			}
		}
		if err := saveState(e.opts.Disk, e.layout.StateFile(a.name), st); err != nil {
			e.lg.Debug("count the cursors", zap.String("agent", a.name), zap.Error(err))
		} else {
			a.state = st
		}
	}
	return s, nil
}

// marks are the mtimes a reader compares with a summary entry's.
func marks(l Layout, agent string) (journalDir, archiveDir, sequence time.Time) {
	mtime := func(p string) time.Time {
		if fi, err := os.Stat(p); err == nil {
			return fi.ModTime().UTC()
		}
		return time.Time{}
	}
	return mtime(l.JournalDir(agent)), mtime(l.ArchiveDir(agent)), mtime(l.SequenceFile(agent))
}

// writeSummary brings the summary's entries of the agents named up to
// date and writes the file when one changed. A failure is logged: the
// readers then count from the cursors.
func (e *Engine) writeSummary(names []string) {
	if e.holdCursors {
		return // a rebuild's cursors are not durable yet
	}
	identity := e.opts.Graph.Identity()
	if e.summary == nil || e.summary.Graph != identity {
		e.summary = &Summary{Version: summaryVersion, Graph: identity, Agents: map[string]AgentSummary{}}
		if s, ok := LoadSummary(e.layout); ok && s.Graph == identity {
			e.summary = s
		}
	}
	changed := false
	for _, name := range names {
		e.mu.Lock()
		a := e.agents[name]
		e.mu.Unlock()
		if a == nil {
			if _, ok := e.summary.Agents[name]; ok {
				delete(e.summary.Agents, name)
				changed = true
			}
			continue
		}
		s, err := e.summarize(a)
		if err != nil {
			e.lg.Debug("summary", zap.String("agent", name), zap.Error(err))
			delete(e.summary.Agents, name)
			changed = true
			continue
		}
		if old, ok := e.summary.Agents[name]; !ok || !sameSummary(old, s) {
			e.summary.Agents[name] = s
			changed = true
		}
	}
	if !changed {
		return
	}
	e.summary.Written = e.opts.Now().UTC()
	data, err := json.Marshal(e.summary)
	if err == nil {
		err = writeCache(e.layout.SummaryFile(), append(data, '\n'))
	}
	if err != nil {
		e.lg.Warn("write the summary for reads (they count from the cursors meanwhile)", zap.Error(err))
		e.summary = nil
	}
}

func sameSummary(a, b AgentSummary) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// fresh says whether s still describes agent's journals: the directories
// and the sequence file are as it saw them and the newest journal did not
// shrink. It returns the bytes past s.LastEnd to read (the newest journal
// grew) as a path, "" when none.
func (s AgentSummary) fresh(layout Layout, agent string) (ok bool, grown string) {
	j, a, q := marks(layout, agent)
	if !j.Equal(s.JournalDir) || !a.Equal(s.ArchiveDir) || !q.Equal(s.Sequence) {
		return false, ""
	}
	if s.Last == "" {
		return true, ""
	}
	path := filepath.Join(layout.Root, filepath.FromSlash(s.Last))
	fi, err := os.Lstat(path)
	switch {
	case err != nil || !fi.Mode().IsRegular() || fi.Size() < s.LastEnd:
		return false, ""
	case fi.Size() > s.LastEnd:
		return true, path
	}
	return true, ""
}

// writeCache replaces path with data atomically (a temporary file renamed
// over it) but without fsync: the summary is a cache that a reader checks
// (a torn or empty one after a crash is not understood, and the readers
// count from the cursors), and the daemon writes it after every pass.
func writeCache(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
