package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAppendResultAndSupports: --result records an outcome judging the
// decisions it links to, --supports the memories a record corroborates
// (repeatable or comma-separated); a combination that cannot mean
// anything is bad usage (exit 2) that says why and writes nothing.
func TestAppendResultAndSupports(t *testing.T) {
	const d1, d2 = "mem_20261120T080000Z_alice_0001", "mem_20261120T080000Z_alice_0002"
	for _, tc := range []struct {
		name     string
		args     []string
		kind     string
		result   string
		supports []string
		links    []string
	}{
		{"result implies outcome", []string{"--result", "success", "--link", d1}, "outcome", "success", nil, []string{d1}},
		{"outcome judging two", []string{"--kind", "outcome", "--result", "failure", "--link", d1, "--link", d2}, "outcome", "failure", nil, []string{d1, d2}},
		{"mixed", []string{"--result", "mixed", "--link", d1, "--supports", d2}, "outcome", "mixed", []string{d2}, []string{d1}},
		{"supports repeated and comma-separated", []string{"--kind", "fact", "--supports", d1 + ", " + d2, "--supports", "mem_x"}, "fact", "", []string{d1, d2, "mem_x"}, nil},
		{"an outcome without a result stays valid", []string{"--kind", "outcome", "--link", d1}, "outcome", "", nil, []string{d1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := initRepo(t, "alice")
			r := invocation{now: now}.run(t, append([]string{"append", "--repo", repo, "--agent", "alice"}, append(tc.args, "it went so")...)...)
			if r.code != exitOK {
				t.Fatalf("append: %d %q", r.code, r.stderr)
			}
			recs := journalLines(t, repo, "alice", "2026-11-21")
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			rec := recs[0]
			if string(rec.Kind) != tc.kind || rec.Result() != tc.result || !slices.Equal(rec.Supports(), tc.supports) || !slices.Equal(rec.Links, tc.links) {
				t.Fatalf("record %s", rec.Canonical())
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown result", []string{"--result", "great", "--link", d1}, `--result: "great" is not one of success, failure, mixed`},
		{"result on a decision", []string{"--kind", "decision", "--result", "success", "--link", d1}, "only an outcome has a result"},
		{"result judging nothing", []string{"--result", "success"}, "name it with --link UUID"},
		{"supports a non-uuid", []string{"--kind", "fact", "--supports", "not a uuid!"}, `--supports: "not a uuid!" is not a valid uuid`},
		{"supports an empty one", []string{"--kind", "fact", "--supports", d1 + ",,"}, "--supports: invalid value"},
		{"supports what it contradicts", []string{"--kind", "fact", "--supports", d1, "--conflicts-with", d1}, "cannot corroborate what it contradicts"},
		{"supports what it replaces", []string{"--kind", "fact", "--supports", d1, "--supersedes", d1}, "cannot corroborate what it replaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := initRepo(t, "alice")
			r := invocation{now: now}.run(t, append([]string{"append", "--repo", repo, "--agent", "alice"}, append(tc.args, "text")...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
				t.Fatalf("append %v: %d %q, want exit 2 saying %q", tc.args, r.code, r.stderr, tc.want)
			}
			if got := journalsOf(t, repo, "alice"); got != "" {
				t.Fatalf("a refused append wrote %s", got)
			}
		})
	}
}

// TestAppendSignalsCrossNoPrivacyLine: through the command, an outcome and
// a support that planner aims at its own decision move it; the same aimed
// at critic's private decision are written (append cannot tell, and must
// not tell, whether it exists) and move nothing (SPEC §7).
func TestAppendSignalsCrossNoPrivacyLine(t *testing.T) {
	repo := initRepo(t, "planner", "critic")
	at := func(h int) string { return now.Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
	appendAs := func(args ...string) string {
		t.Helper()
		r := invocation{now: now}.run(t, append([]string{"append", "--repo", repo, "--no-fsync"}, args...)...)
		if r.code != exitOK {
			t.Fatalf("append %v: %d %q", args, r.code, r.stderr)
		}
		return strings.TrimSpace(r.stdout)
	}
	own := appendAs("--agent", "planner", "--kind", "decision", "--ts", at(-3), "Ship the billing export on Fridays")
	hidden := appendAs("--agent", "critic", "--kind", "decision", "--ts", at(-3), "critic-private: rotate the signing keys weekly")
	for _, target := range []string{own, hidden} {
		appendAs("--agent", "planner", "--result", "success", "--link", target, "--ts", at(-2), "it paid off")
		appendAs("--agent", "planner", "--kind", "observation", "--supports", target, "--ts", at(-1), "seen again")
	}
	syncRepo(t, repo)
	explain := func(agent, uuid string) explainResult {
		t.Helper()
		r := invocation{now: now}.run(t, "explain", "--repo", repo, "--agent", agent, "--json", uuid)
		var res explainResult
		if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &res) != nil {
			t.Fatalf("explain %s as %s: %d %q %q", uuid, agent, r.code, r.stdout, r.stderr)
		}
		return res
	}
	if got := explain("planner", own); got.Importance < 0.5+0.2+0.1 || len(got.Events) < 2 {
		t.Fatalf("planner's own decision, judged a success and supported: importance %.2f, events %+v", got.Importance, got.Events)
	}
	if got := explain("critic", hidden); got.Importance != 0.5 || len(got.Events) != 0 {
		t.Fatalf("critic's private decision moved through planner's outcome and support: importance %.2f, events %+v", got.Importance, got.Events)
	}
}
