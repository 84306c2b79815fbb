package memsync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/compaction"
	"github.com/memsync/memsync/memsync"
)

// TestClashRejectNamesTheLineWhereItIsNow is issue 25 §7: a memory
// projected from a journal line that compaction has since moved to the
// archive (the journal keeps the line's place, blanked) loses its uuid to
// a back-dated version; or a later version, written after compaction,
// loses to it. The reject names the losing line where it is now, with its
// offset and digest there (not the blanked place the graph remembers the
// memory by); `memsync rejects` (LiveRejects) lists it once.
func TestClashRejectNamesTheLineWhereItIsNow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rewrite string // the clashing line, written after compaction
		loser   string // the file whose line loses, repo-relative
	}{
		{"back-dated version displaces the archived one", lineAt("mem_x", "ada", "back-dated rewrite", "2026-11-09T10:00:00Z"),
			"agents/ada/memory/journal/archive/2026-11-10.jsonl"},
		{"later version loses to the archived one", lineAt("mem_x", "ada", "later rewrite", "2026-11-12T10:00:00Z"),
			"agents/ada/memory/journal/2026-11-12.jsonl"},
	} {
		eachBackend(t, func(t *testing.T, r *rig) {
			t.Run(tc.name, func(t *testing.T) {
				var day strings.Builder
				for i := 0; i < 40; i++ {
					day.WriteString(lineAt(fmt.Sprintf("mem_f%02d", i), "ada", fmt.Sprintf("filler record %d, long enough to move offsets along", i),
						fmt.Sprintf("2026-11-10T09:%02d:00Z", i)))
				}
				day.WriteString(lineAt("mem_x", "ada", "the original", "2026-11-10T10:00:00Z"))
				r.write("ada", "2026-11-10.jsonl", day.String())
				r.syncOnce(r.engine())
				// The day moves to the archive; its journal keeps blanks.
				if _, err := compaction.Compact(context.Background(), compaction.Options{Root: r.root, Agent: "ada", KeepDays: 0,
					Now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }}); err != nil {
					t.Fatal(err)
				}
				r.syncOnce(r.engine())
				name := strings.TrimSuffix(filepath.Base(tc.loser), ".jsonl")
				if !strings.Contains(tc.loser, "archive") {
					r.write("ada", name+".jsonl", tc.rewrite)
				} else {
					r.write("ada", "2026-11-09.jsonl", tc.rewrite)
				}
				r.syncOnce(r.engine())
				live, err := memsync.LiveRejects(memsync.Layout{Root: r.root}, "ada")
				if err != nil {
					t.Fatal(err)
				}
				if len(live) != 1 {
					t.Fatalf("live rejects %+v, want 1", live)
				}
				rj := live[0]
				data, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rj.File)))
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.SplitAfter(string(data), "\n")
				var at int64
				for i := 0; i < rj.Line-1 && i < len(lines); i++ {
					at += int64(len(lines[i]))
				}
				if rj.File != tc.loser || rj.UUID != "mem_x" || rj.Offset != at || rj.Line > len(lines) ||
					!strings.Contains(lines[rj.Line-1], `"uuid":"mem_x"`) || !strings.Contains(string(data[rj.Offset:]), `"uuid":"mem_x"`) ||
					!strings.HasPrefix(string(data[rj.Offset:]), `{"uuid":"mem_x"`) {
					t.Fatalf("reject %+v does not name mem_x's losing line where it is now (%s)", rj, tc.loser)
				}
			})
		})
	}
}

// TestClashRejectFollowsCompaction is issue 51 §13: a uuid clash already
// rejected (two versions in one day's journal) whose day compaction then
// moves to the archive: the reject names the losing line where it is now,
// in the archive, at its offset there, once, and its reason names the
// winning line where it is now (the archive), not the blank it left.
func TestClashRejectFollowsCompaction(t *testing.T) {
	eachBackend(t, func(t *testing.T, r *rig) {
		var day strings.Builder
		day.WriteString(lineAt("mem_x", "ada", "the original", "2026-11-10T08:00:00Z"))
		for i := 0; i < 40; i++ {
			day.WriteString(lineAt(fmt.Sprintf("mem_f%02d", i), "ada", fmt.Sprintf("filler record %d, long enough to move offsets along", i),
				fmt.Sprintf("2026-11-10T09:%02d:00Z", i)))
		}
		day.WriteString(lineAt("mem_x", "ada", "a later rewrite that loses", "2026-11-10T11:00:00Z"))
		r.write("ada", "2026-11-10.jsonl", day.String())
		r.syncOnce(r.engine())
		before, err := memsync.LiveRejects(memsync.Layout{Root: r.root}, "ada")
		if err != nil || len(before) != 1 {
			t.Fatalf("before compaction: rejects %+v %v, want 1", before, err)
		}
		// Lines move within the day: compaction drops the blank lines a
		// tool left (none here) and moves the day to the archive.
		if _, err := compaction.Compact(context.Background(), compaction.Options{Root: r.root, Agent: "ada", KeepDays: 0,
			Now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }}); err != nil {
			t.Fatal(err)
		}
		r.syncOnce(r.engine())
		live, err := memsync.LiveRejects(memsync.Layout{Root: r.root}, "ada")
		if err != nil {
			t.Fatal(err)
		}
		all, _ := memsync.ReadRejects(memsync.Layout{Root: r.root}.RejectsFile("ada"))
		if len(live) != 1 {
			t.Fatalf("live rejects after compaction %+v (recorded %+v), want 1", live, all)
		}
		rj := live[0]
		data, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rj.File)))
		if err != nil {
			t.Fatal(err)
		}
		if rj.UUID != "mem_x" || !strings.HasPrefix(string(data[rj.Offset:]), `{"uuid":"mem_x"`) || !strings.Contains(strings.SplitN(string(data[rj.Offset:]), "\n", 2)[0], "loses") {
			t.Fatalf("reject %+v does not name the losing line where it is now; the file holds at its offset:\n%.200s", rj, data[min(int(rj.Offset), len(data)):])
		}
		if want := "(agents/ada/memory/journal/archive/2026-11-10.jsonl:1)"; rj.File != "agents/ada/memory/journal/archive/2026-11-10.jsonl" || !strings.Contains(rj.Reason, want) {
			t.Fatalf("reject %+v: want it in the archive, its reason naming the winner at %s", rj, want)
		}
	})
}
