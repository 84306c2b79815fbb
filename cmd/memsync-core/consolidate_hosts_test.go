package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync"
)

// TestConsolidateOnTwoHosts is issue 25 §5: two clones of one memory
// consolidate the same agent independently, each at its own clock, and
// exchange through git (its union merge of the journals). Every action
// both derive is the same line on both hosts, so after the merge no uuid
// is claimed twice with different content: sync records no reject and
// verify is ok, on both hosts. Host a also consolidated once before host b
// appended, so a theme summary it wrote is unknown to b: their next
// summaries of that topic differ (other uuids, not a clash), and the
// round after the merge replaces both with one summary that both hosts
// derive alike.
func TestConsolidateOnTwoHosts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base := time.Date(2026, 11, 21, 9, 15, 0, 0, time.UTC)
	at := func(clock time.Time) invocation { return invocation{now: clock} }
	must := func(iv invocation, args ...string) string {
		t.Helper()
		r := iv.run(t, args...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	ts := func(d time.Duration) string { return base.Add(-d).Format(time.RFC3339) }
	day := 24 * time.Hour

	a := filepath.Join(t.TempDir(), "a")
	must(at(base), "init", "--repo", a, "--agent", "ada")
	appendAt := func(repo string, ago time.Duration, args ...string) {
		t.Helper()
		must(at(base), append([]string{"append", "--repo", repo, "--agent", "ada", "--ts", ts(ago)}, args...)...)
	}
	for i, text := range []string{"#postgres vacuum is slow", "replication lag on #postgres at night", "#postgres 16 fixed the planner"} {
		appendAt(a, time.Duration(5-i)*day, "--kind", "observation", "--tier", "learning", text)
	}
	appendAt(a, 4*day, "--kind", "observation", "--tier", "learning", "The CI cache expires after two days")
	appendAt(a, 2*day, "--kind", "observation", "--tier", "learning", "--force", "the ci cache expires after TWO days.")
	appendAt(a, 30*day, "--kind", "preference", "--tier", "core", "Deploys happen on Tuesdays after the standup")
	appendAt(a, 2*day, "--kind", "observation", "Deploys never happen on Tuesdays after the standup")
	appendAt(a, 10*day, "--kind", "decision", "Use blue-green deploys")
	proc := strings.TrimSpace(must(at(base), "append", "--repo", a, "--agent", "ada", "--ts", ts(9*day), "--kind", "procedure", "To rotate keys: drain, rotate, restart"))
	for i := 0; i < 3; i++ {
		appendAt(a, time.Duration(8-i)*day, "--kind", "task", "--link", proc, "rotated the keys again")
	}
	person(t, a, "add", "-A")
	person(t, a, "commit", "-q", "-m", "memory")
	b := filepath.Join(t.TempDir(), "b")
	person(t, filepath.Dir(b), "clone", "-q", a, b)
	must(at(base), "init", "--repo", b, "--agent", "ada")

	// Host a consolidates first (its clock), commits; b does not see it.
	must(at(base.Add(-3*time.Hour)), "consolidate", "--repo", a)
	person(t, a, "add", "-A")
	person(t, a, "commit", "-q", "-m", "a consolidates")
	// Host b appends a fourth #postgres record; a merges it.
	appendAt(b, time.Hour, "--kind", "observation", "--tier", "learning", "#postgres autovacuum settings need tuning")
	person(t, b, "add", "-A")
	person(t, b, "commit", "-q", "-m", "b appends")
	merge := func(into, from string) {
		t.Helper()
		person(t, into, "fetch", "-q", from, "HEAD")
		cmd := exec.Command("git", "-c", "user.name=Person", "-c", "user.email=person@example.com", "merge", "-q", "--no-edit", "FETCH_HEAD")
		cmd.Dir = into
		if out, err := cmd.CombinedOutput(); err != nil {
			// Only MEMORY.md's generated section may conflict (each host
			// wrote its own); a person keeps theirs, the next round
			// regenerates it. The journals merged as a union.
			conflicted := strings.Fields(gitOut(t, into, "diff", "--name-only", "--diff-filter=U"))
			for _, f := range conflicted {
				if !strings.HasSuffix(f, "MEMORY.md") {
					t.Fatalf("merge into %s: %v\n%s", into, err, out)
				}
				person(t, into, "checkout", "--ours", "--", f)
				person(t, into, "add", f)
			}
			person(t, into, "commit", "-q", "--no-edit")
		}
	}
	merge(a, b)

	// Both consolidate, at clocks hours apart, then exchange both ways.
	round := func(clockA, clockB time.Time) {
		t.Helper()
		must(at(clockA), "consolidate", "--repo", a)
		must(at(clockB), "consolidate", "--repo", b)
		for _, h := range []string{a, b} {
			person(t, h, "add", "-A")
			person(t, h, "commit", "-q", "--allow-empty", "-m", "consolidate")
		}
		merge(a, b)
		merge(b, a)
	}
	check := func(what string) {
		t.Helper()
		if ja, jb := hostJournal(t, a), hostJournal(t, b); strings.Join(uniq(ja), "\n") != strings.Join(uniq(jb), "\n") {
			t.Fatalf("%s: the hosts hold different journal lines:\n%s\n---\n%s", what, strings.Join(ja, "\n"), strings.Join(jb, "\n"))
		}
		for _, h := range []string{a, b} {
			must(at(base), "sync", "--once", "--repo", h)
			var rj struct {
				Rejects []memsync.Reject `json:"rejects"`
			}
			out := must(at(base), "rejects", "--repo", h, "--json")
			if err := json.Unmarshal([]byte(out), &rj); err != nil {
				t.Fatalf("rejects --json: %v\n%s", err, out)
			}
			if len(rj.Rejects) != 0 {
				t.Errorf("%s: host %s rejects %+v", what, filepath.Base(h), rj.Rejects)
			}
			var v memsync.VerifyReport
			out = must(at(base), "verify", "--repo", h, "--json")
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			if !v.OK || v.Conflicts != 0 || v.Rejected != 0 {
				t.Errorf("%s: host %s verify %+v", what, filepath.Base(h), v)
			}
		}
	}
	round(base.Add(-2*time.Hour), base.Add(3*time.Hour))
	check("first round")
	themes := func(repo string) []string {
		var out []string
		for _, l := range hostJournal(t, repo) {
			if strings.Contains(l, `"consolidation":"theme"`) && !strings.Contains(l, "#postgres in 3 ") {
				out = append(out, l)
			}
		}
		return uniq(out)
	}
	if n := len(themes(a)); n != 2 {
		t.Fatalf("after the first round: %d summaries of 4 records, want 2 (one per host)", n)
	}
	// The next round replaces both summaries with one, the same on both
	// hosts; the round after writes nothing.
	round(base.Add(5*time.Hour), base.Add(4*time.Hour))
	check("second round")
	if n := len(themes(a)); n != 3 {
		t.Fatalf("after the second round: %d summaries, want 3", n)
	}
	before := hostJournal(t, a)
	round(base.Add(6*time.Hour), base.Add(7*time.Hour))
	check("third round")
	if after := hostJournal(t, a); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("a third round wrote %d lines", len(after)-len(before))
	}
}

// uniq drops repeats from a sorted list.
func uniq(lines []string) []string {
	var out []string
	for i, l := range lines {
		if i == 0 || l != lines[i-1] {
			out = append(out, l)
		}
	}
	return out
}
