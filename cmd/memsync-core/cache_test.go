package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

func TestCacheCommand(t *testing.T) {
	repo := searchRepo(t,
		srec("mem_c1", "alice", 1, "shared fact about #infra", sShared),
		srec("mem_c2", "alice", 2, "ALICESECRET private decision", func(r *journal.Record) { r.Kind = journal.KindDecision }),
		srec("mem_c3", "bob", 3, "bob's procedure for #infra", sShared, func(r *journal.Record) { r.Kind = journal.KindProcedure }),
	)
	syncRepo(t, repo)

	r := cli(t, "cache", "--repo", repo)
	if r.code != 0 {
		t.Fatalf("cache: %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"wrote   agents/alice/memory/cache/GRAPHITI_FACTS.md\n",
		"wrote   agents/alice/memory/cache/GRAPHITI_ENTITIES/infra.md\n",
		"wrote   agents/bob/memory/cache/GRAPHITI_FACTS.md\n",
		"alice: 2 written, 0 removed, 0 unchanged\n",
		"bob: 2 written, 0 removed, 0 unchanged\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	alice, _ := os.ReadFile(filepath.Join(cacheDir(repo, "alice"), "GRAPHITI_FACTS.md"))
	bob, _ := os.ReadFile(filepath.Join(cacheDir(repo, "bob"), "GRAPHITI_FACTS.md"))
	if !strings.Contains(string(alice), "ALICESECRET") || strings.Contains(string(bob), "ALICESECRET") || !strings.Contains(string(bob), "bob's procedure") {
		t.Fatalf("snapshots:\n%s\n%s", alice, bob)
	}

	r = cli(t, "cache", "--agent", "bob", "--repo", repo)
	if r.code != 0 || r.stdout != "bob: 0 written, 0 removed, 2 unchanged\n" {
		t.Fatalf("second run: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestCacheCommandFailures(t *testing.T) {
	repo := searchRepo(t, srec("mem_c1", "alice", 1, "x", sShared))
	for _, tc := range []struct {
		iv   invocation
		args []string
		code int
		want string
	}{
		{invocation{}, []string{"cache", "--agent", "../x"}, exitUsage, "invalid agent name"},
		{invocation{}, []string{"cache", "extra"}, exitUsage, `unexpected argument "extra"`},
		{invocation{}, []string{"cache", "--agent", "carol"}, exitUsage, `--agent: unknown agent "carol"`},
		{unreachableNeo4j, []string{"cache"}, exitFail, "left as they are"},
	} {
		r := tc.iv.run(t, append(tc.args, "--repo", repo)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(cacheDir(repo, "alice")); !os.IsNotExist(err) {
		t.Fatal("a failed cache run wrote files")
	}
	if r := cli(t, "cache", "--repo", initRepo(t)); r.code != 0 || r.stdout != "no agents\n" {
		t.Fatalf("empty repo: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
