package memsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
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

// TestUnprojectedReadsTheSummary: once a pass wrote the summary, the hint
// opens no journal while nothing was written; a line appended to the
// newest journal is counted from that file alone, a new day file or a
// `memsync append` (its sequence file) sends that agent back to its
// cursors, and the count stays right throughout.
func TestUnprojectedReadsTheSummary(t *testing.T) {
	r := newRig(t, memsynctest.NewGraph())
	l := memsync.Layout{Root: r.root}
	for _, a := range []string{"alice", "bob", "carol"} {
		for d := 1; d <= 5; d++ {
			ts := fmt.Sprintf("2026-11-%02dT10:00:00Z", d)
			r.write(a, fmt.Sprintf("2026-11-%02d.jsonl", d), lineAt(fmt.Sprintf("mem_202611%02dT100000Z_%s_0001", d, a), a, "x", ts))
		}
	}
	count := func(want int, wantOpens int64) {
		t.Helper()
		before := memsync.JournalOpens()
		n, err := memsync.Unprojected(l, r.g.Identity())
		if err != nil {
			t.Fatal(err)
		}
		if opens := memsync.JournalOpens() - before; n != want || opens != wantOpens {
			t.Errorf("Unprojected = %d with %d journal opens, want %d with %d", n, opens, want, wantOpens)
		}
	}
	count(15, 15) // no summary yet: every journal past its (absent) cursor
	r.syncOnce(r.engine())
	if _, ok := memsync.LoadSummary(l); !ok {
		t.Fatal("no summary after a pass")
	}
	count(0, 0)
	r.write("bob", "2026-11-05.jsonl", lineAt("mem_20261105T100001Z_bob_0001", "bob", "y", "2026-11-05T10:00:01Z"))
	count(1, 1) // the newest file grew: read from where the summary left it
	r.write("carol", "2026-11-06.jsonl", lineAt("mem_20261106T100000Z_carol_0001", "carol", "z", "2026-11-06T10:00:00Z"))
	count(2, 2) // a new file: carol from her cursors (one file past its cursor)
	rec := journal.Record{Agent: "alice", Kind: journal.KindFact, TS: time.Date(2026, 11, 2, 11, 0, 0, 0, time.UTC), Text: "backfilled"}
	if _, err := journal.Append(l.JournalDir("alice"), &rec, journal.AppendOptions{NoSync: true, SequenceFile: l.SequenceFile("alice")}); err != nil {
		t.Fatal(err)
	}
	count(3, 3) // an append into an older day: its sequence file moved
	r.syncOnce(r.engine())
	count(0, 0)
	// A rebuild removes the summary while it runs and writes it once its
	// cursors are durable.
	r.write("bob", "2026-11-05.jsonl", lineAt("mem_20261105T100002Z_bob_0001", "bob", "w", "2026-11-05T10:00:02Z"))
	if _, err := r.engine().Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	count(0, 0)
}
