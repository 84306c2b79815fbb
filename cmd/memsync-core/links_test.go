package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// runBin runs the built front binary on repo with the embedded store (or
// extra environment) and returns its exit code and output.
func runInRepo(t *testing.T, repo string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO="+repo, "MEMSYNC_GRAPH=embedded"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}

// mustBin is runBin that fails the test unless the command exits 0.
func mustBin(t *testing.T, repo string, args ...string) string {
	t.Helper()
	code, out, errOut := runInRepo(t, repo, nil, args...)
	if code != 0 {
		t.Fatalf("memsync %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// treeSnapshot is every path under dir with its content (directories "/").
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "/"
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeRecords writes n valid records of agent, dated day, to path.
func writeRecords(t *testing.T, path, agent string, day time.Time, n int, text string) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		r := journal.Record{UUID: fmt.Sprintf("mem_%s_%s_%04d", journal.UUIDTime(day), agent, i+1), TS: day,
			Agent: agent, Kind: journal.KindFact, Scope: journal.ScopeShared, Text: fmt.Sprintf("%s %d", text, i)}
		b.Write(r.Canonical())
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func statusJSON(t *testing.T, repo string) memsync.StatusReport {
	t.Helper()
	var st memsync.StatusReport
	if err := json.Unmarshal([]byte(mustBin(t, repo, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func hasIgnored(st memsync.StatusReport, path, reason string) bool {
	for _, ig := range st.Ignored {
		if ig.Path == path && ig.Reason == reason {
			return true
		}
	}
	return false
}

// TestSymlinkedDirectoriesAreNotFollowed is issue 13 item 5: a directory
// of the layout that is a symbolic link out of the repository is never
// followed. Records behind it are not projected (sync, rebuild), not found
// (online and offline search), not counted by verify or status, which
// lists the link as ignored; compact leaves the outside files as they were
// and creates nothing there. On the old code a linked journal directory
// projected its 30 records and compact rewrote the outside file.
func TestSymlinkedDirectoriesAreNotFollowed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary many times")
	}
	day := time.Now().UTC().AddDate(0, 0, -30).Truncate(time.Hour) // old enough to compact
	file := journal.FileName(day)
	cases := []struct {
		link    string // repo-relative directory made a link
		journal string // where the outside journal sits below the link's target
	}{
		{"agents/bob", "memory/journal/" + file},
		{"agents/bob/memory", "journal/" + file},
		{"agents/bob/memory/journal", file},
		{"agents/bob/memory/journal/archive", file},
		{"agents/bob/memory/sync", "../journal-elsewhere/" + file},
		{"agents/bob/memory/cache", "../journal-elsewhere/" + file},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.link, "/", "_"), func(t *testing.T) {
			repo := newRepo(t, "alice", "bob")
			mustBin(t, repo, "append", "--agent", "alice", "--kind", "fact", "--scope", "shared", "alice knows the inside")
			outside := filepath.Join(t.TempDir(), "target")
			writeRecords(t, filepath.Join(outside, tc.journal), "bob", day, 30, "outsider secret")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(repo, filepath.FromSlash(tc.link))
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			before := treeSnapshot(t, filepath.Dir(outside))

			mustBin(t, repo, "sync", "--once")
			mustBin(t, repo, "compact", "--agent", "bob")
			mustBin(t, repo, "compact")
			mustBin(t, repo, "cache")
			runInRepo(t, repo, nil, "cache", "--agent", "bob") // bob may be no agent at all now
			if after := treeSnapshot(t, filepath.Dir(outside)); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("sync, compact or cache changed the outside of the repository:\nbefore %v\nafter  %v", keysOf(before), keysOf(after))
			}
			var found struct {
				Offline bool              `json:"offline"`
				Results []json.RawMessage `json:"results"`
			}
			for _, env := range [][]string{nil, {"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=bolt://127.0.0.1:1"}} {
				code, out, errOut := runInRepo(t, repo, env, "search", "outsider", "--agent", "bob", "--json")
				if code != 0 {
					t.Fatalf("search: %d %s", code, errOut)
				}
				if err := json.Unmarshal([]byte(out), &found); err != nil {
					t.Fatal(err)
				}
				if len(found.Results) != 0 {
					t.Fatalf("search (offline %v) found records from outside: %s", found.Offline, out)
				}
			}
			if !found.Offline {
				t.Fatal("the search with the graph unreachable was not offline")
			}
			var v memsync.VerifyReport
			if err := json.Unmarshal([]byte(mustBin(t, repo, "verify", "--json")), &v); err != nil {
				t.Fatal(err)
			}
			if !v.OK || v.JournalRecords != 1 || v.GraphRecords != 1 {
				t.Fatalf("verify: %+v, want ok with alice's one record", v)
			}
			st := statusJSON(t, repo)
			for _, a := range st.Agents {
				if a.Agent == "bob" && (a.Projected != 0 || a.JournalRecords != 0) {
					t.Fatalf("bob: %+v, want nothing read", a)
				}
			}
			if !hasIgnored(st, tc.link, journal.ReasonLink) {
				t.Fatalf("status ignored %+v, want %s", st.Ignored, tc.link)
			}
			mustBin(t, repo, "rebuild", "--yes")
			if n := len(graphNodes(t, repo)); n == 0 {
				t.Fatal("rebuild: empty graph")
			}
			if after := treeSnapshot(t, filepath.Dir(outside)); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("outside the repository changed:\nbefore %v\nafter  %v", keysOf(before), keysOf(after))
			}
			code, out, _ := runInRepo(t, repo, nil, "search", "outsider", "--agent", "bob", "--json")
			if code != 0 || strings.Contains(out, "outsider") {
				t.Fatalf("after rebuild, search: %d %s", code, out)
			}
		})
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s(%d)", k, len(v)))
	}
	return out
}

// TestAppendRefusesSymlinks: memsync append through a journal file or a
// journal directory that is a symbolic link fails (exit 1, says why) and
// writes nothing outside the repository. The old code wrote into the
// outside file and exited 0.
func TestAppendRefusesSymlinks(t *testing.T) {
	ts := "2026-11-21T09:15:00Z"
	cases := []struct {
		name string
		link string // repo-relative path made a link to the outside target
		file bool   // the target is a file (else a directory)
	}{
		{"journal file", "agents/alice/memory/journal/2026-11-21.jsonl", true},
		{"journal directory", "agents/alice/memory/journal", false},
		{"memory directory", "agents/alice/memory", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t, "alice")
			outside := filepath.Join(t.TempDir(), "target")
			if tc.file {
				if err := os.WriteFile(outside, []byte("outside line\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(repo, filepath.FromSlash(tc.link))
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			before := treeSnapshot(t, filepath.Dir(outside))
			code, out, errOut := runInRepo(t, repo, nil, "append", "--agent", "alice", "--kind", "fact", "--ts", ts, "hello")
			if code != 1 || !strings.Contains(errOut, "symbolic link") || out != "" {
				t.Fatalf("append: exit %d, stdout %q, stderr %q; want exit 1 naming the symbolic link", code, out, errOut)
			}
			if after := treeSnapshot(t, filepath.Dir(outside)); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("outside the repository changed: %v -> %v", before, after)
			}
		})
	}
}

// TestIgnoredFilesAndAgents: a .jsonl file not named YYYY-MM-DD.jsonl and a
// directory under agents/ with an invalid name are not projected, and both
// are reported: in status (text and --json) and as a warning in the log of
// sync and of the daemon. The old code projected notes.jsonl and said
// nothing about either.
func TestIgnoredFilesAndAgents(t *testing.T) {
	repo := newRepo(t, "alice")
	day := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	jdir := filepath.Join(repo, "agents", "alice", "memory", "journal")
	writeRecords(t, filepath.Join(jdir, "2026-11-20.jsonl"), "alice", day, 3, "kept")
	writeRecords(t, filepath.Join(jdir, "notes.jsonl"), "alice", day.Add(time.Hour), 4, "notes")
	writeRecords(t, filepath.Join(jdir, "2026-13-01.jsonl"), "alice", day.Add(2*time.Hour), 2, "no such day")
	writeRecords(t, filepath.Join(repo, "agents", "bad.name", "memory", "journal", "2026-11-20.jsonl"), "bad.name", day, 1, "bad")
	want := []memsync.IgnoredPath{
		{Path: "agents/alice/memory/journal/2026-13-01.jsonl", Reason: journal.ReasonFileName},
		{Path: "agents/alice/memory/journal/notes.jsonl", Reason: journal.ReasonFileName},
		{Path: "agents/bad.name", Reason: journal.ReasonAgentName},
	}

	code, _, errOut := runInRepo(t, repo, nil, "sync", "--once")
	if code != 0 {
		t.Fatalf("sync: %d %s", code, errOut)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w.Path) {
			t.Errorf("sync log does not name %s:\n%s", w.Path, errOut)
		}
	}
	st := statusJSON(t, repo)
	if fmt.Sprint(st.Ignored) != fmt.Sprint(want) {
		t.Fatalf("status ignored %+v, want %+v", st.Ignored, want)
	}
	if len(st.Agents) != 1 || st.Agents[0].Projected != 3 || st.Agents[0].JournalRecords != 3 {
		t.Fatalf("status agents %+v, want alice with 3 projected of 3", st.Agents)
	}
	text := mustBin(t, repo, "status")
	for _, w := range want {
		if !strings.Contains(text, "ignored: "+w.Path+": "+w.Reason) {
			t.Errorf("status text does not list %s:\n%s", w.Path, text)
		}
	}

	d := startDaemon(t, repo, []string{"MEMSYNC_GRAPH=embedded"})
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(d.stderr.String(), "agents/bad.name") || !strings.Contains(d.stderr.String(), "notes.jsonl") {
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not warn about the ignored paths:\n%s", d.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := d.stop(t); err != nil {
		t.Fatalf("daemon: %v\n%s", err, d.stderr)
	}
}
