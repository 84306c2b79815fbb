package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// flagCorpus: a shared fact, a private note of each of alice and bob.
func flagCorpus(t *testing.T) string {
	return searchRepo(t,
		srec("mem_fact", "alice", 1, "the billing cron runs at midnight", sShared),
		srec("mem_alice_priv", "alice", 2, "alice private billing note"),
		srec("mem_bob_priv", "bob", 3, "bob private billing note BOBSECRET"),
	)
}

func TestFlagRefusesBadInput(t *testing.T) {
	repo := flagCorpus(t)
	before := snapshot(t, repo)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"flag", "mem_fact"}, exitUsage, "one of --important"},
		{[]string{"flag", "mem_fact", "--wrong", "--important"}, exitUsage, "got 2 (--important --wrong)"},
		{[]string{"flag", "--wrong"}, exitUsage, "UUID: exactly one"},
		{[]string{"flag", "a b", "--wrong"}, exitUsage, "not a valid uuid"},
		{[]string{"flag", "mem_fact", "--wrong", "--agent", "../x"}, exitUsage, "invalid agent name"},
		{[]string{"flag", "mem_fact", "--wrong", "--agent", "carol"}, exitUsage, `--agent: unknown agent "carol" in ` + repo + " (agents: alice, bob)"},
		{[]string{"flag", "mem_fact", "--wrong", "--agent", "alcie"}, exitUsage, `--agent: unknown agent "alcie" in ` + repo + "; did you mean alice?"},
		{[]string{"flag", "mem_fact", "--wrnog"}, exitUsage, "unknown flag --wrnog; did you mean --wrong?"},
		// Not found (exit 3): another agent's private memory exactly as an unknown uuid.
		{[]string{"flag", "mem_nope", "--wrong"}, exitNotFound, "memsync flag: no memory mem_nope\n"},
		{[]string{"flag", "mem_nope", "--wrong", "--agent", "alice"}, exitNotFound, "memsync flag: no memory mem_nope visible to agent alice\n"},
		{[]string{"flag", "mem_bob_priv", "--wrong", "--agent", "alice"}, exitNotFound, "memsync flag: no memory mem_bob_priv visible to agent alice\n"},
	} {
		for _, iv := range []invocation{{}, unreachableNeo4j} {
			r := iv.run(t, append(tc.args, "--repo", repo)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || r.stdout != "" ||
				strings.Count(r.stderr, "\n")-strings.Count(r.stderr, "answering offline") != 1 {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, r.code, r.stdout, r.stderr, tc.code, tc.want)
			}
			if strings.Contains(r.stderr, "BOBSECRET") {
				t.Errorf("%q: leaked bob's text: %q", tc.args, r.stderr)
			}
		}
	}
	after := snapshot(t, repo)
	for k := range after {
		if k == ".memsync" || strings.HasPrefix(k, ".memsync/") {
			delete(after, k) // the store a refused flag opened to look is not the memory
		}
	}
	if !maps.Equal(before, after) {
		t.Fatalf("a refused flag wrote something:\nbefore %v\nafter  %v", before, after)
	}
}

func TestFlagJournalsFeedback(t *testing.T) {
	repo := flagCorpus(t)
	iv := invocation{now: searchClock.Add(time.Hour), env: map[string]string{"USER": "shaun"}}
	r := iv.run(t, "flag", "mem_fact", "--wrong", "--note", "it runs at 2am", "--agent", "bob", "--json", "--repo", repo)
	if r.code != 0 {
		t.Fatalf("flag: %d %s", r.code, r.stderr)
	}
	var res flagResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Target != "mem_fact" || res.Feedback != "wrong" || res.Path != "agents/bob/memory/journal/2026-11-20.jsonl" || !strings.HasPrefix(res.UUID, "mem_20261120T100000Z_bob_") {
		t.Fatalf("flag --json: %+v", res)
	}
	data, err := os.ReadFile(filepath.Join(repo, res.Path))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	rec, err := journal.Parse([]byte(lines[len(lines)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Kind != journal.KindFeedback || rec.Feedback() != "wrong" || rec.Scope != journal.ScopeShared ||
		rec.Source == nil || rec.Source.Type != "told" || rec.Source.Actor != "shaun" ||
		len(rec.Links) != 1 || rec.Links[0] != "mem_fact" || !strings.Contains(rec.Text, "it runs at 2am") {
		t.Fatalf("feedback record: %+v", rec)
	}
	// Without --agent the author's journal holds it, private stays private.
	r = iv.run(t, "flag", "mem_alice_priv", "--important", "--by", "Mira", "--repo", repo)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mem_20261120T100000Z_alice_") {
		t.Fatalf("flag: %d %q %s", r.code, r.stdout, r.stderr)
	}
	// The person who typed it reads what was flagged, and when it counts.
	if !strings.HasPrefix(r.stderr, "flagged mem_alice_priv important (by Mira): \"") || !strings.Contains(r.stderr, "next projection") {
		t.Errorf("flag stderr %q: want what was flagged", r.stderr)
	}
}
