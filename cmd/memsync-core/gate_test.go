package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

// TestAppendSurpriseGate is SPEC §9 through the front binary: a learning
// record is scored and the score journaled; a duplicate is skipped (exit
// 0, said on stdout and in --json, nothing written); --force, --remember,
// corrections and other tiers are written; a half-new record gets
// confidence low.
func TestAppendSurpriseGate(t *testing.T) {
	bin := binary(t)
	repo := initRepo(t, "ada")
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"append", "--repo", repo, "--agent", "ada", "--kind", "observation",
			"--ts", "2026-11-21T10:00:00Z"}, args...)...)
		cmd.Env = append(os.Environ(), "MEMSYNC_REPO=")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if stderr.Len() > 0 {
			t.Errorf("%q: stderr %q", args, stderr.String())
		}
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	const text = "Deploys happen on Tuesdays after the standup"
	lines := func() []journal.Record { return journalLines(t, repo, "ada", "2026-11-21") }

	if out, code := run("--tier", "learning", "--json", text); code != 0 || !strings.Contains(out, `"surprise":1`) {
		t.Fatalf("first: exit %d %q", code, out)
	}
	out, code := run("--tier", "learning", "--json", "deploys happen on Tuesdays, after the standup")
	var doc struct {
		UUID     string   `json:"uuid"`
		Skipped  bool     `json:"skipped"`
		Surprise *float64 `json:"surprise"`
		Reason   string   `json:"reason"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || !doc.Skipped || doc.Surprise == nil ||
		*doc.Surprise >= 0.4 || !strings.Contains(doc.Reason, "near-duplicate of mem_20261121T100000Z_ada_testhost-0001-") || doc.UUID != "" {
		t.Fatalf("duplicate --json: exit %d %q", code, out)
	}
	if out, code := run("--tier", "learning", text); code != 0 || !strings.HasPrefix(out, "skipped: surprise 0") || !strings.Contains(out, "--force") {
		t.Fatalf("duplicate: exit %d %q", code, out)
	}
	if n := len(lines()); n != 1 {
		t.Fatalf("%d lines after two skips, want 1", n)
	}
	for _, args := range [][]string{
		{"--tier", "learning", "--force", text},
		{"--tier", "learning", "--remember", text},
		{"--tier", "learning", "No, actually " + text},
		{"--tier", "learning", "--kind", "outcome", text},
		{"--tier", "working", text},
		{"--tier", "core", text},
		{text},
	} {
		if out, code := run(args...); code != 0 || !strings.HasPrefix(out, "mem_") {
			t.Errorf("%q: exit %d %q, want it written", args, code, out)
		}
	}
	if _, code := run("--tier", "learning", "Deploys happen on Tuesdays, rollbacks need approval from ops"); code != 0 {
		t.Fatal("half-new")
	}
	recs := lines()
	if len(recs) != 9 {
		t.Fatalf("%d lines, want 9", len(recs))
	}
	surprise := func(r journal.Record) string { return string(r.Extra["surprise"]) }
	if surprise(recs[0]) != "1" || surprise(recs[1]) != "0" || string(recs[2].Extra["remember"]) != "true" {
		t.Errorf("first %s, forced %s, remembered %s", recs[0].Canonical(), recs[1].Canonical(), recs[2].Canonical())
	}
	for _, r := range recs[5:8] {
		if _, ok := r.Extra["surprise"]; ok {
			t.Errorf("not gated, but scored: %s", r.Canonical())
		}
	}
	if last := recs[8]; last.Confidence != "low" || surprise(last) < "0.4" || surprise(last) >= "0.7" {
		t.Errorf("half-new: %s", last.Canonical())
	}
}
