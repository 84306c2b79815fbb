package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync/consolidate"
)

// TestConsolidateCommand runs memsync consolidate through the built
// binaries on journals written by memsync append: --dry-run writes
// nothing, a run journals the theme, the follow-up and the review, a
// second run journals nothing and leaves every file as it was.
func TestConsolidateCommand(t *testing.T) {
	bin := binary(t)
	repo := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--repo", repo)...)
		cmd.Env = append(os.Environ(), "MEMSYNC_REPO=")
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("%q: %v %s", args, err, stderr)
		}
		return string(out)
	}
	run("init", "--agent", "ada")
	day := func(d int) string { return time.Now().UTC().AddDate(0, 0, -d).Format(time.RFC3339) }
	for i, text := range []string{"#postgres vacuum is slow", "replication lag on #postgres", "#postgres 16 fixed the planner"} {
		run("append", "--agent", "ada", "--kind", "observation", "--tier", "learning", "--ts", day(3-i), text)
	}
	run("append", "--agent", "ada", "--kind", "preference", "--tier", "core", "--ts", day(30), "Deploys happen on Tuesdays after the standup")
	run("append", "--agent", "ada", "--kind", "observation", "--ts", day(2), "Deploys never happen on Tuesdays after the standup")
	decision := strings.TrimSpace(run("append", "--agent", "ada", "--kind", "decision", "--ts", day(10), "Use blue-green deploys"))

	files := func() map[string]string {
		out := map[string]string{}
		filepath.Walk(filepath.Join(repo, "agents"), func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				data, _ := os.ReadFile(p)
				out[p] = string(data)
			}
			return nil
		})
		return out
	}
	before := files()
	var doc passJSON[consolidate.Report]
	if err := json.Unmarshal([]byte(run("consolidate", "--agent", "ada", "--dry-run", "--json")), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.DryRun || len(doc.Agents) != 1 || len(doc.Agents[0].Actions) != 3 {
		t.Fatalf("dry run: %+v", doc)
	}
	if after := files(); len(after) != len(before) {
		t.Fatalf("dry run wrote %d files", len(after)-len(before))
	}
	for p, data := range files() {
		if before[p] != data {
			t.Fatalf("dry run changed %s", p)
		}
	}
	if err := json.Unmarshal([]byte(run("consolidate", "--json")), &doc); err != nil {
		t.Fatal(err)
	}
	rep := doc.Agents[0]
	got := map[string]int{}
	for _, a := range rep.Actions {
		got[a.Action]++
	}
	if got["theme"] != 1 || got["verify"] != 1 || got["follow-up"] != 1 || len(rep.Actions) != 3 ||
		len(rep.FollowUps) != 1 || rep.FollowUps[0].Decision != decision || !rep.Page {
		t.Fatalf("run: %+v", rep)
	}
	written := files()
	if out := run("consolidate"); !strings.Contains(out, "ada: ") || !strings.Contains(out, "journaled 0 actions") ||
		!strings.Contains(out, "follow-up "+decision+": You decided Use blue-green deploys on ") {
		t.Fatalf("second run: %q", out)
	}
	for p, data := range files() {
		if written[p] != data {
			t.Errorf("second run changed %s", p)
		}
	}
}
