package memsync_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/memsync"
)

// TestUnprojected counts the lines past each journal's cursor and the
// outbox's waiting entries, trusts cursors only for the graph they were
// made for, and leaves a partial last line (still being written) out.
func TestUnprojected(t *testing.T) {
	l := memsync.Layout{Root: t.TempDir()}
	line := `{"x":1}` + "\n"
	journal := filepath.Join(l.JournalDir("alice"), "2026-11-20.jsonl")
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(journal, line+line+line+`{"partial`)
	write(filepath.Join(l.ArchiveDir("alice"), "2026-11-01.jsonl"), line)
	if err := os.MkdirAll(l.MemoryDir("bob"), 0o755); err != nil {
		t.Fatal(err)
	}
	count := func(identity string) int {
		t.Helper()
		n, err := memsync.Unprojected(l, identity)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("g1"); n != 4 {
		t.Fatalf("no cursors: %d, want 4 (3 journal lines and the archive's)", n)
	}
	state, _ := json.Marshal(map[string]any{"version": 1, "graph": "g1", "outbox_done": len(line), "files": map[string]any{
		"agents/alice/memory/journal/2026-11-20.jsonl":         map[string]any{"offset": 2 * len(line), "line": 2},
		"agents/alice/memory/journal/archive/2026-11-01.jsonl": map[string]any{"offset": len(line), "line": 1},
	}})
	write(l.StateFile("alice"), string(state))
	write(l.OutboxFile("alice"), line+line)
	for _, tc := range []struct {
		identity string
		want     int
	}{
		{"g1", 2}, // one journal line past its cursor, one outbox entry
		{"", 2},   // trust the cursors whatever graph
		{"g2", 6}, // another graph: every line, and the whole outbox
	} {
		if n := count(tc.identity); n != tc.want {
			t.Errorf("identity %q: %d, want %d", tc.identity, n, tc.want)
		}
	}
}
