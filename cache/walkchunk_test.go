package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// A fleet's snapshots come from one walk per walkAgents agents, so that a
// walk holds the capped lists of that many agents' private groups, not of
// the whole fleet's (issue 50); each agent's snapshot still shows its own
// private memories and the shared ones, and no other agent's.
func TestGenerateWalksAFleetInParts(t *testing.T) {
	n := 2*walkAgents + 50
	agents := make([]string, n)
	var batch []memsync.Memory
	for i := range agents {
		agents[i] = fmt.Sprintf("agent-%04d", i)
		batch = append(batch, mem(fmt.Sprintf("mem_p%04d", i), agents[i], i, journal.KindFact, fmt.Sprintf("SECRET-%04d of its own", i)))
	}
	batch = append(batch, mem("mem_s0001", agents[0], n, journal.KindFact, "Billing runs nightly #billing", shared))
	layout := repo(t, agents...)
	g := &countingGraph{Graph: openGraph(t, batch)}
	w := NewWriter(g, layout, nil)
	res := generate(t, w)
	if len(res) != n {
		t.Fatalf("%d results, want one per agent (%d)", len(res), n)
	}
	if got := g.walks.Load(); got != 3 {
		t.Fatalf("%d walks for %d agents, want 3 (at most %d agents a walk)", got, n, walkAgents)
	}
	for _, i := range []int{0, walkAgents - 1, walkAgents, n - 1} {
		var all strings.Builder
		filepath.WalkDir(layout.CacheDir(agents[i]), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				all.Write(b)
			}
			return nil
		})
		s := all.String()
		if !strings.Contains(s, fmt.Sprintf("SECRET-%04d", i)) || !strings.Contains(s, "Billing runs nightly") {
			t.Fatalf("%s's snapshot lacks its own memory or the shared one:\n%s", agents[i], s)
		}
		if strings.Count(s, "SECRET-") != 1 {
			t.Fatalf("%s's snapshot shows another agent's private memory:\n%s", agents[i], s)
		}
	}
}
