package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync"
)

// TestPruneHookSessions: the state of old sessions and of all but the
// newest maxStates goes; the current session's stays.
func TestPruneHookSessions(t *testing.T) {
	l := memsync.Layout{Root: t.TempDir()}
	now := time.Now()
	save := func(session string, age time.Duration) {
		st := State{Session: session, Started: now}
		if err := saveState(l, "planner", &st, now); err != nil {
			t.Fatal(err)
		}
		mod := now.Add(-age)
		if err := os.Chtimes(stateFile(l, "planner", session), mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	save("old", stateMaxAge+time.Hour)
	save("current", stateMaxAge+2*time.Hour) // old too, but the hook's own
	for i := range maxStates + 5 {
		save("s"+strings.Repeat("x", i), time.Duration(i)*time.Minute)
	}
	pruneStates(l, "planner", "current", now)
	files, _ := filepath.Glob(filepath.Join(StateDir(l, "planner"), "session-*.json"))
	if len(files) != maxStates+1 {
		t.Fatalf("%d state files left, want %d", len(files), maxStates+1)
	}
	for session, want := range map[string]bool{"old": false, "current": true, "s": true, "s" + strings.Repeat("x", maxStates+4): false} {
		if _, err := os.Stat(stateFile(l, "planner", session)); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", session, err == nil, want)
		}
	}
}

// TestSessionJournaled: what counts as the session having journaled, read
// from the agent's newest journal files only.
func TestSessionJournaled(t *testing.T) {
	start := time.Date(2026, 11, 24, 9, 0, 0, 500, time.UTC)
	line := func(agent, ts, session string) string {
		s := `{"uuid":"u","ts":"` + ts + `","agent":"` + agent + `","kind":"fact","scope":"private","text":"x"`
		if session != "" {
			s += `,"session":"` + session + `"`
		}
		return s + "}\n"
	}
	for _, tc := range []struct {
		name  string
		files map[string]string // journal file name → lines
		start time.Time
		want  bool
	}{
		{"nothing journaled", nil, start, false},
		{"only records before the start", map[string]string{"2026-11-24.jsonl": line("planner", "2026-11-24T08:59:59.999Z", "")}, start, false},
		{"a record since the start", map[string]string{"2026-11-24.jsonl": line("planner", "2026-11-24T09:00:01Z", "")}, start, true},
		{"a record of the session from before its recorded start", map[string]string{"2026-11-24.jsonl": line("planner", "2026-11-24T08:00:00Z", "sess")}, start, true},
		{"another agent's record since the start", map[string]string{"2026-11-24.jsonl": line("critic", "2026-11-24T09:30:00Z", "sess")}, start, false},
		{"the next day's file", map[string]string{"2026-11-24.jsonl": line("planner", "2026-11-24T08:00:00Z", ""), "2026-11-25.jsonl": line("planner", "2026-11-25T00:10:00Z", "")}, start, true},
		{"only the newest files are read", map[string]string{"2026-11-20.jsonl": line("planner", "2026-11-20T08:00:00Z", "sess"),
			"2026-11-21.jsonl": line("planner", "2026-11-21T08:00:00Z", ""), "2026-11-22.jsonl": line("planner", "2026-11-22T08:00:00Z", "")}, start, false},
		{"a record since the start, then a few with earlier explicit stamps", map[string]string{"2026-11-24.jsonl": line("planner", "2026-11-24T09:10:00Z", "") +
			strings.Repeat(line("planner", "2026-01-01T00:00:00Z", ""), 3)}, start, true},
		{"the session's record before many older lines", map[string]string{"2026-11-24.jsonl": line("planner", "2026-11-24T08:00:00Z", "sess") +
			strings.Repeat(line("planner", "2026-11-24T08:30:00Z", ""), 3*olderRun)}, start, true},
		{"an unfinished last line", map[string]string{"2026-11-24.jsonl": `{"ts":"2026-11-24T09:30:00Z","agent":"planner","session":"se`}, start, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := memsync.Layout{Root: t.TempDir()}
			dir := l.JournalDir("planner")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := sessionJournaled(l, "planner", "sess", tc.start)
			if err != nil || got != tc.want {
				t.Fatalf("journaled %v %v, want %v", got, err, tc.want)
			}
		})
	}
}
