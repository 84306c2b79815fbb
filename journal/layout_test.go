package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// BenchmarkAgents lists the agents of a repository of 2,000 as the
// daemon does at each full rescan (every 30 s while file events flow):
// checked (Agents: each agent's directories are checked for links on the
// way; the pass) and plain (AgentDirs: the watcher's listing).
func BenchmarkAgents(b *testing.B) {
	l := Layout{Root: b.TempDir()}
	for i := range 2000 {
		a := fmt.Sprintf("agent-%04d", i)
		for _, d := range []string{l.JournalDir(a), l.SyncDir(a), l.CacheDir(a)} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, list := range []struct {
		name string
		fn   func() ([]string, error)
	}{{"checked", l.Agents}, {"plain", l.AgentDirs}} {
		b.Run(list.name, func(b *testing.B) {
			for range b.N {
				agents, err := list.fn()
				if err != nil || len(agents) != 2000 {
					b.Fatalf("%d agents, %v", len(agents), err)
				}
			}
		})
	}
}

// TestAgentDirs: the watcher's plain listing keeps real directories with
// valid names, whatever lies below them (Agents also checks that), and
// lists nothing through an agents directory that is a link.
func TestAgentDirs(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	for _, d := range []string{l.JournalDir("ann"), l.MemoryDir("ben"), filepath.Join(l.AgentsDir(), "bad name"), filepath.Join(l.Root, "elsewhere")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// cy's sync directory is a link: Agents leaves cy out, the plain listing does not.
	if err := os.MkdirAll(l.MemoryDir("cy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(l.Root, "elsewhere"), l.SyncDir("cy")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(l.Root, "elsewhere"), filepath.Join(l.AgentsDir(), "dee")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.AgentsDir(), "eve"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := l.AgentDirs()
	if err != nil || !slices.Equal(got, []string{"ann", "ben", "cy"}) {
		t.Errorf("AgentDirs = %v, %v; want [ann ben cy]", got, err)
	}
	if got, err := l.Agents(); err != nil || !slices.Equal(got, []string{"ann", "ben"}) {
		t.Errorf("Agents = %v, %v; want [ann ben]", got, err)
	}
	// The agents directory itself a link: nothing is listed through it.
	linked := Layout{Root: t.TempDir()}
	if err := os.Symlink(l.AgentsDir(), linked.AgentsDir()); err != nil {
		t.Fatal(err)
	}
	if got, err := linked.AgentDirs(); err != nil || len(got) != 0 {
		t.Errorf("AgentDirs through a linked agents directory = %v, %v; want none", got, err)
	}
}
