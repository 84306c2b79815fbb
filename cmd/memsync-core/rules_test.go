package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
)

// TestOneRuleForAgentNames: every command that takes an agent refuses a
// name that is not one of the repository's the same way: exit 2, one
// line, the agents named, the closest suggested. search --agent critc
// used to answer with shared memories.
func TestOneRuleForAgentNames(t *testing.T) {
	repo := searchRepo(t,
		srec("mem_r1", "critic", 1, "review the deploy", sShared),
		srec("mem_r2", "planner", 2, "plan the deploy", sShared),
	)
	syncRepo(t, repo)
	commands := [][]string{
		{"search", "deploy"},
		{"list"},
		{"show", "mem_r1"},
		{"explain", "mem_r1"},
		{"flag", "mem_r1", "--wrong"},
		{"packet", "--role", "critic", "--goal", "deploy"},
		{"append", "--kind", "fact", "x"},
		{"rejects"},
		{"cache"},
		{"compact"},
		{"consolidate", "--dry-run"},
		{"mcp"},
	}
	for _, args := range commands {
		for _, tc := range []struct {
			agent, want string
		}{
			{"critc", `--agent: unknown agent "critc" in ` + repo + "; did you mean critic? (agents: critic, planner)"},
			{"zed", `--agent: unknown agent "zed" in ` + repo + ` (agents: critic, planner): create it with "memsync init --repo ` + repo + ` --agent zed"`},
		} {
			full := append(append([]string{}, args...), "--agent", tc.agent, "--repo", repo)
			before := snapshot(t, filepath.Join(repo, "agents"))
			r := cli(t, full...)
			if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, "memsync "+args[0]+": "+tc.want) ||
				strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%q: exit %d stdout %q stderr %q\nwant 2 and %q", full, r.code, r.stdout, r.stderr, tc.want)
			}
			if after := snapshot(t, filepath.Join(repo, "agents")); fmt.Sprint(before) != fmt.Sprint(after) {
				t.Errorf("%q: a refused command wrote under agents/", full)
			}
		}
	}
}

// TestNotFoundExitCode: show, explain and flag answer a uuid no memory has
// and another agent's private memory alike: exit 3, the same line but for
// the uuid, whether the graph answers or the journals do.
func TestNotFoundExitCode(t *testing.T) {
	repo := searchRepo(t,
		srec("mem_pub", "alice", 1, "a shared fact", sShared),
		srec("mem_bobs", "bob", 2, "bob private BOBSECRET"),
	)
	syncRepo(t, repo)
	for _, cmd := range [][]string{{"show"}, {"explain"}, {"flag", "--wrong"}} {
		for _, iv := range []invocation{{}, unreachableNeo4j} {
			lines := map[string]string{}
			for _, uuid := range []string{"mem_bobs", "mem_nope"} {
				args := append([]string{cmd[0], uuid}, cmd[1:]...)
				args = append(args, "--agent", "alice", "--repo", repo)
				r := iv.run(t, args...)
				last := r.stderr[strings.LastIndex(strings.TrimSuffix(r.stderr, "\n"), "\n")+1:]
				want := fmt.Sprintf("memsync %s: no memory %s visible to agent alice\n", cmd[0], uuid)
				if r.code != exitNotFound || r.stdout != "" || last != want || strings.Contains(r.stderr, "BOBSECRET") {
					t.Errorf("%q: exit %d stdout %q stderr %q; want 3 and %q", args, r.code, r.stdout, r.stderr, want)
				}
				lines[uuid] = strings.ReplaceAll(r.stderr, uuid, "UUID")
			}
			if lines["mem_bobs"] != lines["mem_nope"] {
				t.Errorf("%s: another's private memory and an unknown uuid differ:\n%q\n%q", cmd[0], lines["mem_bobs"], lines["mem_nope"])
			}
		}
	}
	// The owner finds it.
	if r := cli(t, "show", "mem_bobs", "--agent", "bob", "--repo", repo); r.code != exitOK {
		t.Errorf("bob's own: %d %s", r.code, r.stderr)
	}
}

// TestSearchTypos: --agnet is a mistyped flag, not a query that begins
// with -; a query word that begins with - still gets the advice.
func TestSearchTypos(t *testing.T) {
	repo := searchRepo(t, srec("mem_t", "alice", 1, "the deploy", sShared))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "deploy", "--agnet", "alice"}, "memsync search: unknown flag --agnet; did you mean --agent? (see memsync search --help)\n"},
		{[]string{"search", "deploy", "--agent", "alice", "--limt", "3"}, "memsync search: unknown flag --limt; did you mean --limit? (see memsync search --help)\n"},
		{[]string{"search", "-deploy", "--agent", "alice"}, "memsync search: -deploy is not a flag: a query that begins with - goes after -- (memsync search --agent A -- -deploy) or in --query\n"},
	} {
		r := cli(t, append(tc.args, "--repo", repo)...)
		if r.code != exitUsage || r.stderr != tc.want || r.stdout != "" {
			t.Errorf("%q: exit %d stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestUnprojectedHint: a read of the graph (explain too: issue 49 item 4)
// says on stderr how many journal
// records it cannot see yet, and how to project them; once projected it
// says nothing. Offline reads read the journals themselves: no hint.
func TestUnprojectedHint(t *testing.T) {
	repo := searchRepo(t,
		srec("mem_h1", "alice", 1, "deploy one", sShared),
		srec("mem_h2", "alice", 2, "deploy two", sShared),
		srec("mem_h3", "bob", 3, "deploy three"),
	)
	reads := [][]string{
		{"search", "deploy", "--agent", "alice"},
		{"list", "--agent", "alice"},
		{"packet", "--role", "executor", "--goal", "deploy", "--agent", "alice"},
		{"show", "mem_h1", "--agent", "alice"},
		{"explain", "mem_h1", "--agent", "alice"},
	}
	hint := func(cmd string, n int) string {
		return fmt.Sprintf("memsync %s: %d records in the journals are not projected yet "+
			"(is `memsync run` running? `memsync sync` projects them once)\n", cmd, n)
	}
	for _, args := range reads {
		r := cli(t, append(args, "--repo", repo)...)
		if r.code != 0 || !strings.Contains(r.stderr, hint(args[0], 3)) {
			t.Errorf("before any sync, %q: exit %d stderr %q; want %q", args, r.code, r.stderr, hint(args[0], 3))
		}
		if r := unreachableNeo4j.run(t, append(args, "--repo", repo)...); strings.Contains(r.stderr, "not projected yet") {
			t.Errorf("offline %q hints: %q", args, r.stderr)
		}
	}
	syncRepo(t, repo)
	for _, args := range reads {
		if r := cli(t, append(args, "--repo", repo)...); r.code != 0 || r.stderr != "" {
			t.Errorf("after sync, %q: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	// One more line: one record waits.
	f, err := os.OpenFile(filepath.Join(journalDir(repo, "alice"), "2026-11-20.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := srec("mem_h4", "alice", 4, "deploy four", sShared)
	f.Write(append(rec.Canonical(), '\n'))
	f.Close()
	want := "memsync search: 1 record in the journals is not projected yet (is `memsync run` running? `memsync sync` projects them once)\n"
	if r := cli(t, "search", "deploy", "--agent", "alice", "--repo", repo); r.code != 0 || r.stderr != want {
		t.Errorf("one waiting: exit %d stderr %q; want %q", r.code, r.stderr, want)
	}
}

// TestExplainHintsWaitingEvents (issue 49 item 4): a memory is projected,
// then flagged important and judged by an outcome that wait in the
// journals; explain, answering from the graph, says "no events" (the graph
// has none yet) and, on stderr, that 2 records wait to be projected; once
// they are, the events are there and the hint is gone. A memory not
// projected at all is explained from the journals, "not projected yet"
// rather than "offline".
func TestExplainHintsWaitingEvents(t *testing.T) {
	repo := searchRepo(t, srec("mem_x1", "alice", 1, "use postgres for billing", sShared, ofKind(journal.KindDecision)))
	syncRepo(t, repo)
	if r := cli(t, "flag", "mem_x1", "--important", "--by", "Shaun", "--agent", "alice", "--repo", repo); r.code != 0 {
		t.Fatalf("flag: %d %s", r.code, r.stderr)
	}
	if r := cli(t, "append", "--agent", "alice", "--result", "success", "--link", "mem_x1", "postgres held", "--repo", repo); r.code != 0 {
		t.Fatalf("append: %d %s", r.code, r.stderr)
	}
	want := "memsync explain: 2 records in the journals are not projected yet (is `memsync run` running? `memsync sync` projects them once)\n"
	r := cli(t, "explain", "mem_x1", "--agent", "alice", "--repo", repo)
	if r.code != 0 || !strings.Contains(r.stdout, "no events") || r.stderr != want {
		t.Fatalf("waiting: exit %d\n%s\nstderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	// A memory not projected at all is read from the journals, and says
	// so: not "offline", the graph answered.
	if r := cli(t, "append", "--agent", "alice", "--kind", "fact", "--scope", "shared", "billing runs on postgres", "--repo", repo); r.code != 0 {
		t.Fatalf("append: %d %s", r.code, r.stderr)
	} else if r := cli(t, "explain", strings.TrimSpace(r.stdout), "--agent", "alice", "--repo", repo); r.code != 0 ||
		!strings.Contains(r.stdout, " (not projected yet: from the journals)\n") || strings.Contains(r.stdout, "offline") {
		t.Fatalf("unprojected: exit %d\n%s", r.code, r.stdout)
	}
	if r := cli(t, "append", "--agent", "alice", "--kind", "observation", "--supports", "mem_x1", "postgres fine at month end", "--repo", repo); r.code != 0 {
		t.Fatalf("append: %d %s", r.code, r.stderr)
	}
	syncRepo(t, repo)
	r = cli(t, "explain", "mem_x1", "--agent", "alice", "--repo", repo)
	if r.code != 0 || strings.Contains(r.stdout, "no events") || !strings.Contains(r.stdout, "flag") || r.stderr != "" {
		t.Fatalf("projected: exit %d\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}
	// The effects line up, an observation's as a feedback's.
	var at []int
	for _, line := range strings.Split(r.stdout, "\n") {
		if loc := regexp.MustCompile(` [+=-]\d\.\d\d `).FindStringIndex(line); strings.HasPrefix(line, "   2") && loc != nil {
			at = append(at, utf8.RuneCountInString(line[:loc[0]]))
		}
	}
	if len(at) != 3 || at[0] != at[1] || at[1] != at[2] {
		t.Fatalf("effects at columns %v:\n%s", at, r.stdout)
	}
}
