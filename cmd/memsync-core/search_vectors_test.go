package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// withTestEmbedder is an invocation whose --embedder test resolves to the
// test embedder of package memsynctest.
var withTestEmbedder = invocation{embedder: func(spec string) (cmdline.Embedder, error) {
	if spec != "test" {
		return nil, fmt.Errorf("unknown embedder %q", spec)
	}
	return memsynctest.NewEmbedder(256), nil
}}

// TestSearchHybridThroughTheCommand: with --embedder, sync projects
// vectors and search finds a memory that shares no term with the query,
// --explain printing the lexical and vector parts; offline (graph down)
// the journals are embedded and the note says so; without an embedder
// nothing changes (no vector part, the memory not found).
func TestSearchHybridThroughTheCommand(t *testing.T) {
	repo := searchRepo(t,
		srec("mem_photo", "alice", 1, "the photographer is booked for friday", sShared),
		srec("mem_deploy", "alice", 2, "the deploy finished", sShared),
		srec("mem_bob_photo", "bob", 3, "photography photographs photographer", nil...),
	)
	if r := withTestEmbedder.run(t, "sync", "--once", "--repo", repo, "--embedder", "test"); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		found   bool
		offline bool
	}{
		{"lexical only", nil, false, false},
		{"hybrid", []string{"--embedder", "test"}, true, false},
		{"hybrid offline", []string{"--embedder", "test", "--graph", "neo4j", "--neo4j-uri", "bolt://127.0.0.1:1"}, true, true},
	} {
		args := append([]string{"search", "photography", "--agent", "alice", "--json", "--repo", repo}, tc.args...)
		res := decodeSearch(t, withTestEmbedder.run(t, args...))
		found := false
		for _, h := range res.Results {
			if h.Agent == "bob" {
				t.Errorf("%s: bob's private memory returned: %s", tc.name, h.UUID)
			}
			if h.UUID == "mem_photo" {
				found = true
				if h.Retrieval == nil || h.Retrieval.VectorRank != 1 || h.Retrieval.LexicalRank != 0 {
					t.Errorf("%s: retrieval %+v, want found by its vector alone, first", tc.name, h.Retrieval)
				}
			}
			if tc.args == nil && h.Retrieval != nil {
				t.Errorf("%s: a vector part without an embedder: %+v", tc.name, h.Retrieval)
			}
		}
		if found != tc.found || res.Offline != tc.offline {
			t.Errorf("%s: found %v offline %v (%s), want %v %v: %+v", tc.name, found, res.Offline, res.Reason, tc.found, tc.offline, res.Results)
		}
		if tc.offline && !strings.Contains(res.Reason, "hybrid recall") {
			t.Errorf("%s: offline reason %q does not say recall is hybrid", tc.name, res.Reason)
		}
	}
	r := withTestEmbedder.run(t, "search", "photographer", "--agent", "alice", "--explain", "--repo", repo, "--embedder", "test")
	if r.code != 0 || !strings.Contains(r.stdout, "relevance parts: lexical rank 1 (score") || !strings.Contains(r.stdout, "+ vector rank 1 (cosine") {
		t.Errorf("search --explain: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, "search", "photography", "--agent", "alice", "--repo", repo, "--embedder", "default"); r.code != 0 {
		t.Errorf("--embedder default (the built-in model): exit %d\n%s", r.code, r.stderr)
	}
	if r := cli(t, "search", "photography", "--agent", "alice", "--repo", repo, "--embedder", t.TempDir()); r.code == 0 || !strings.Contains(r.stderr, "--embedder") {
		t.Errorf("--embedder DIR holding no model: exit %d\n%s", r.code, r.stderr)
	}
}
