package importer

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync/realtools"
)

// OpenClaw's release needs Node >= 24.16; Debian's is 20, so the test
// installs Node from the npm registry's node package (a Node binary
// release) beside it.
const (
	openClawVersion = "2026.9.6"
	nodeVersion     = "24.21.0"
)

// npmInstall installs pkg@version with npm into the cache (once), with
// extra PATH entries first; it returns the install's node_modules.
func npmInstall(t *testing.T, pkg, version string, path ...string) string {
	t.Helper()
	dir := realtools.NPM(t, filepath.Join(sourcesCache(t), "npm-"+pkg+"-"+version), withPath(path...), pkg+"@"+version)
	return filepath.Join(dir, "node_modules")
}

// withPath is the environment with dirs put first on PATH.
func withPath(dirs ...string) []string {
	env := os.Environ()
	if len(dirs) == 0 {
		return env
	}
	p := strings.Join(dirs, string(os.PathListSeparator)) + string(os.PathListSeparator) + os.Getenv("PATH")
	return append(env, "PATH="+p)
}

// TestOpenClawRealToolFollowed: a workspace whose MEMORY.md is written by
// OpenClaw itself (memory index, three memory searches and memory promote
// --apply promote a daily-log entry into it, with OpenClaw's markup)
// imports with every entry and none of the markup or its importance; an
// edit of a daily entry supersedes, and its removal retires. OpenClaw has
// no command that edits or deletes an entry (its agent does that with file
// tools), so the edit and the removal are file edits.
func TestOpenClawRealToolFollowed(t *testing.T) {
	gateSources(t)
	nodeBin := filepath.Join(npmInstall(t, "node", nodeVersion), "node", "bin")
	if out, err := exec.Command(filepath.Join(nodeBin, "node"), "--version").Output(); err != nil || !strings.HasPrefix(string(out), "v24.") {
		t.Fatalf("node from the npm package: %v %s", err, out)
	}
	openclaw := filepath.Join(npmInstall(t, "openclaw", openClawVersion, nodeBin), ".bin", "openclaw")
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(openclaw, args...)
		cmd.Env = append(withPath(nodeBin), "HOME="+home, "NO_COLOR=1")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("openclaw %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("openclaw %s: %s", args[0]+" "+args[1], time.Since(start).Round(100*time.Millisecond))
		return string(out)
	}
	run("setup", "--baseline")
	ws := filepath.Join(home, ".openclaw", "workspace")
	daily := filepath.Join(ws, "memory", "2026-12-01.md")
	must(t, os.MkdirAll(filepath.Dir(daily), 0o755))
	log := "# 2026-12-01\n\n- 09:10 The deploy pipeline uses blue-green releases on the staging cluster.\n- 10:30 Shaun prefers short commit messages in the imperative.\n"
	must(t, os.WriteFile(daily, []byte(log), 0o644))
	run("memory", "index")
	for _, q := range []string{"deploy pipeline", "blue-green releases", "staging cluster"} {
		run("memory", "search", q)
	}
	run("memory", "promote", "--apply", "--min-recall-count", "1", "--min-unique-queries", "1", "--min-score", "0")
	memory, err := os.ReadFile(filepath.Join(ws, "MEMORY.md"))
	must(t, err)
	if !strings.Contains(string(memory), "openclaw-memory-promotion") {
		t.Fatalf("OpenClaw did not promote into MEMORY.md:\n%s", memory)
	}

	opts := repoFor(t, "openclaw", ws)
	rep, err := importNow(context.Background(), opts)
	must(t, err)
	recs := activeRecords(t, opts)
	var promoted string
	for k, r := range recs {
		if strings.HasPrefix(k, "MEMORY.md#") {
			if promoted != "" {
				t.Fatalf("two MEMORY.md entries: %q and %q", promoted, r.Text)
			}
			promoted = r.Text
		}
	}
	if rep.Imported != 3 || !strings.Contains(promoted, "blue-green releases") ||
		strings.Contains(promoted, "<!--") || strings.Contains(promoted, "importance") || strings.Contains(promoted, "score=") {
		t.Fatalf("first import: %+v; MEMORY.md entry %q (want the promoted text, no markup)\n%s", rep, promoted, memory)
	}
	first, second := "memory/2026-12-01.md#2026-12-01#1", "memory/2026-12-01.md#2026-12-01#2"
	if !strings.Contains(recs[first].Text, "blue-green") || !strings.Contains(recs[second].Text, "imperative") {
		t.Fatalf("daily entries: %q", texts(recs))
	}

	must(t, os.WriteFile(daily, []byte(strings.Replace(log, "short commit messages", "long commit messages", 1)), 0o644))
	rep, err = importNow(context.Background(), opts)
	must(t, err)
	wantReport(t, "after an edit", rep, 1, 1, 0)
	must(t, os.WriteFile(daily, []byte("# 2026-12-01\n\n- 09:10 The deploy pipeline uses blue-green releases on the staging cluster.\n"), 0o644))
	rep, err = importNow(context.Background(), opts)
	must(t, err)
	wantReport(t, "after a removal", rep, 0, 0, 1)
	if _, still := activeRecords(t, opts)[second]; still {
		t.Fatal("the removed entry is still active")
	}
}
