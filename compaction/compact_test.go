package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

func ts(dayOffset int, hour int) time.Time {
	return time.Date(2026, 11, 20+dayOffset, hour, 0, 0, 0, time.UTC)
}

type rec = journal.Record

// line is the canonical journal line of r (uuid given or derived).
func line(r rec) string {
	if r.Scope == "" {
		r.Scope = journal.ScopePrivate
	}
	if r.UUID == "" {
		r.UUID = journal.DerivedUUID(&r)
	}
	return string(r.Canonical()) + "\n"
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func jpath(day string) string { return "agents/a/memory/journal/" + day + ".jsonl" }
func apath(day string) string { return "agents/a/memory/journal/archive/" + day + ".jsonl" }

// fixtureJournal18 is the fixture's journal of 2026-11-18.
func fixtureJournal18() string {
	return line(rec{UUID: "d1", TS: ts(-2, 9), Agent: "a", Kind: "decision", Text: "Use MySQL for @storage", Why: "it is there"}) +
		line(rec{UUID: "d2", TS: ts(-2, 10), Agent: "a", Kind: "decision", Text: "Use Postgres for @storage", Supersedes: []string{"d1"}}) +
		line(rec{UUID: "p1", TS: ts(-2, 11), Agent: "a", Kind: "preference", Text: "Short answers please", Tags: []string{"style"}}) +
		"\n" + // a blank line
		line(rec{UUID: "o1", TS: ts(-2, 12), Agent: "a", Kind: "observation", Text: "Deploys are slow on Fridays"})
}

// fixture is a repository for agent a with two past days and today.
func fixture(t testing.TB) string {
	root := t.TempDir()
	pinHost(t, root)
	writeFile(t, root, jpath("2026-11-18"), fixtureJournal18())
	writeFile(t, root, jpath("2026-11-19"),
		line(rec{UUID: "p2", TS: ts(-1, 9), Agent: "a", Kind: "preference", Text: "Long answers now", Tags: []string{"style"}})+
			"{not json\n"+
			line(rec{UUID: "x1", TS: ts(-1, 10), Agent: "b", Kind: "fact", Text: "written as b in a's journal"})+
			line(rec{UUID: "c1", TS: ts(-1, 11), Agent: "a", Kind: "decision", Text: "Ship on Monday", ConflictsWith: []string{"c0"}})+
			line(rec{TS: ts(-1, 12), Agent: "a", Kind: "fact", Text: "A line without a uuid mentions [[Acme Corp]]"}))
	writeFile(t, root, jpath("2026-11-20"),
		line(rec{UUID: "t1", TS: ts(0, 9), Agent: "a", Kind: "task", Text: "Today's task"}))
	writeFile(t, root, "agents/a/memory/MEMORY.md", "# My memory\n\nWritten by a person.\n")
	return root
}

func opts(root string) Options {
	return Options{Root: root, Agent: "a", Now: clock}
}

// snapshot maps every file under root (but .memsync) to its content.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".memsync" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffSnapshots(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "only before: "+k)
		} else if v != w {
			out = append(out, fmt.Sprintf("differs: %s\n--- before\n%s--- after\n%s", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only after: "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// occurrences counts, across the agent's journals and archives, the lines
// of each uuid (valid records of the agent only).
func occurrences(t testing.TB, root string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, dir := range []string{"agents/a/memory/journal", "agents/a/memory/journal/archive"} {
		entries, _ := os.ReadDir(filepath.Join(root, dir))
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			err := eachLine(filepath.Join(root, dir, e.Name()), func(l journal.Line) error {
				if l.Err == nil && l.Record.Agent == "a" {
					counts[l.Record.UUID]++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return counts
}

func readRecords(t testing.TB, path string) []journal.Record {
	t.Helper()
	var out []journal.Record
	if err := eachLine(path, func(l journal.Line) error {
		if l.Err == nil {
			out = append(out, l.Record)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompact(t *testing.T) {
	root := fixture(t)
	before := occurrences(t, root)
	rep, err := Compact(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Absorbed != 7 || rep.Archived != 7 || rep.Resumed != 0 || len(rep.Records) != 1 || len(rep.Files) != 2 {
		t.Fatalf("report %+v", rep)
	}
	snap := snapshot(t, root)
	// Absorbed lines are blanked in place: the journal keeps its inode,
	// size and line numbers, so a direct writer never writes into a file
	// that is gone.
	if got, orig := snap[jpath("2026-11-18")], fixtureJournal18(); len(got) != len(orig) || strings.TrimSpace(got) != "" ||
		strings.Count(got, "\n") != strings.Count(orig, "\n") {
		t.Fatalf("a fully absorbed journal should be blank lines of the same size: %q", got)
	}
	// What is not a record of a stays where a person can fix it.
	if got := strings.Join(strings.Fields(snap[jpath("2026-11-19")]), " "); got != "{not json "+strings.TrimSpace(line(rec{UUID: "x1", TS: ts(-1, 10), Agent: "b", Kind: "fact", Text: "written as b in a's journal"})) {
		t.Fatalf("2026-11-19 kept %q", got)
	}
	// Absorbed lines moved byte for byte, in order.
	if got := snap[apath("2026-11-18")]; strings.Count(got, "\n") != 4 || !strings.HasPrefix(got, `{"uuid":"d1"`) {
		t.Fatalf("archive 18: %q", got)
	}
	// Every record is still there exactly once, plus the compaction record.
	after := occurrences(t, root)
	for id, n := range before {
		if after[id] != n {
			t.Errorf("%s: %d lines before, %d after", id, n, after[id])
		}
	}
	today := readRecords(t, filepath.Join(root, jpath("2026-11-20")))
	if len(today) != 2 || today[1].Kind != journal.KindCompaction || today[1].UUID != rep.Records[0] {
		t.Fatalf("today's journal: %+v", today)
	}
	ids, err := absorbedList(&today[1])
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	var want []string
	for id := range before {
		if id != "t1" {
			want = append(want, id)
		}
	}
	sort.Strings(want)
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("absorbed %v, want %v", ids, want)
	}
	if !strings.Contains(today[1].Text, "Compacted 7 records from 2026-11-18 to 2026-11-19") {
		t.Fatalf("text %q", today[1].Text)
	}

	mem := snap["agents/a/memory/MEMORY.md"]
	for _, want := range []string{
		"# My memory\n\nWritten by a person.\n\n" + BeginMarker + "\n",
		"- **@storage**: Use Postgres for @storage (2026-11-18, `d2`)",
		"- **ship on monday**: Ship on Monday",
		"- **#style**: Long answers now (2026-11-19, `p2`)",
		"### Conflicts\n\n- Ship on Monday (2026-11-19, `c1`); conflicts with `c0`",
		"Folded from 7 archived records, 2026-11-18 to 2026-11-19",
		EndMarker + "\n",
	} {
		if !strings.Contains(mem, want) {
			t.Errorf("MEMORY.md lacks %q:\n%s", want, mem)
		}
	}
	for _, gone := range []string{"MySQL", "Short answers"} {
		if strings.Contains(mem, gone) {
			t.Errorf("MEMORY.md keeps the superseded/older %q:\n%s", gone, mem)
		}
	}
	storage := snap["agents/a/memory/entities/storage.md"]
	if !strings.HasPrefix(storage, "# @storage\n\n"+BeginMarker) || !strings.Contains(storage, "Mentioned (as @storage) by 2 archived records") ||
		!strings.Contains(storage, "2026-11-18 decision: Use Postgres for @storage (`d2`)") || strings.Contains(storage, "MySQL") {
		t.Fatalf("entities/storage.md:\n%s", storage)
	}
	if _, ok := snap["agents/a/memory/entities/acme-corp.md"]; !ok {
		t.Fatalf("no page for [[Acme Corp]]: %v", keys(snap))
	}

	// A second run changes nothing at all.
	rep2, err := Compact(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Absorbed != 0 || len(rep2.Records) != 0 || len(rep2.Pages) != 0 {
		t.Fatalf("second run %+v", rep2)
	}
	if d := diffSnapshots(snap, snapshot(t, root)); d != "" {
		t.Fatalf("second run changed files:\n%s", d)
	}
	// Nor does one the next day: yesterday's journal holds only a
	// compaction record, which does not start a compaction by itself.
	o := opts(root)
	o.Now = func() time.Time { return now.Add(24 * time.Hour) }
	snap = snapshot(t, root)
	o.MaxDayLines = 1
	rep3, err := Compact(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep3.Absorbed != 2 { // t1 is now in the past, and so is the compaction record
		t.Fatalf("next day %+v", rep3)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestCompactDryRunWritesNothing(t *testing.T) {
	root := fixture(t)
	if err := os.RemoveAll(filepath.Join(root, ".memsync")); err != nil { // the pinned host id
		t.Fatal(err)
	}
	snap := snapshot(t, root)
	o := opts(root)
	o.DryRun = true
	rep, err := Compact(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Absorbed != 7 || len(rep.Items) != 7 || rep.Items[0].UUID != "d1" || rep.Items[0].File != "2026-11-18.jsonl" {
		t.Fatalf("%+v", rep)
	}
	if d := diffSnapshots(snap, snapshot(t, root)); d != "" {
		t.Fatalf("dry run changed files:\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(root, ".memsync")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("dry run created .memsync")
	}
}

// crashSteps are every point a compaction of the fixture can stop at.
var crashSteps = []string{
	StepRecord, StepArchive, "archive:2026-11-18.jsonl", "archive:2026-11-19.jsonl", StepMemory,
	StepJournal, "journal:2026-11-18.jsonl", "blank:2026-11-18.jsonl", "journal:2026-11-19.jsonl", "blank:2026-11-19.jsonl", StepCommit,
}

var errCrash = errors.New("injected crash")

// A compaction that crashes (fails or panics) before any step, then runs
// again, ends exactly where one uninterrupted run ends: every record once
// across journal and archive, one compaction record, the same pages.
func TestCompactCrashAtEveryStep(t *testing.T) {
	clean := fixture(t)
	cleanRep, err := Compact(context.Background(), opts(clean))
	if err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, clean)
	wantCounts := occurrences(t, clean)
	for _, step := range crashSteps {
		for _, mode := range []string{"error", "panic"} {
			t.Run(step+"/"+mode, func(t *testing.T) {
				root := fixture(t)
				original := occurrences(t, root)
				o := opts(root)
				commits := 0
				o.Commit = func(context.Context, string) error { commits++; return nil }
				o.Hook = func(s string) error {
					if s != step {
						return nil
					}
					if mode == "panic" {
						panic(errCrash)
					}
					return errCrash
				}
				func() {
					defer func() {
						if r := recover(); r != nil && r != errCrash {
							panic(r)
						}
					}()
					if _, err := Compact(context.Background(), o); !errors.Is(err, errCrash) {
						t.Fatalf("crash at %s: err %v", step, err)
					}
				}()
				// Nothing lost at the crash: every record in journal or archive.
				mid := occurrences(t, root)
				for id := range original {
					if mid[id] == 0 {
						t.Fatalf("after a crash at %s, %s is in neither journal nor archive", step, id)
					}
				}
				o.Hook = nil
				rep, err := Compact(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				if d := diffSnapshots(want, snapshot(t, root)); d != "" {
					t.Fatalf("crash at %s then rerun differs from a clean run:\n%s", step, d)
				}
				got := occurrences(t, root)
				for id, n := range got {
					if n != 1 || wantCounts[id] != 1 {
						t.Fatalf("%s appears %d times", id, n)
					}
				}
				if step != StepRecord && step != StepCommit && rep.Resumed == 0 {
					t.Errorf("the rerun after a crash at %s resumed nothing: %+v", step, rep)
				}
				if step == StepRecord && rep.Records[0] != cleanRep.Records[0] {
					t.Errorf("records %v, clean run %v", rep.Records, cleanRep.Records)
				}
				if commits != 1 && step != StepCommit {
					t.Errorf("%d commits", commits)
				}
			})
		}
	}
}

// Lines appended while a compaction runs — to a journal being rewritten,
// from other goroutines, at every step — are all kept.
func TestCompactKeepsConcurrentAppends(t *testing.T) {
	root := fixture(t)
	dir := filepath.Join(root, "agents/a/memory/journal")
	var mu sync.Mutex
	var appended []string
	add := func(ts time.Time, text string) {
		r := &journal.Record{TS: ts, Agent: "a", Kind: journal.KindObservation, Text: text}
		if _, err := journal.Append(dir, r, journal.AppendOptions{NoSync: true}); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		appended = append(appended, r.UUID)
		mu.Unlock()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				add(ts(-2+i%3, 13), fmt.Sprintf("goroutine %d line %d", g, i))
			}
		}(g)
	}
	o := opts(root)
	o.Hook = func(step string) error {
		if strings.HasPrefix(step, StepBlank+":") {
			return nil // called under the journal's lock: an append would wait for it forever
		}
		// And one deterministic append into each journal at each step.
		add(ts(-2, 14), "at "+step+" into 18")
		add(ts(-1, 14), "at "+step+" into 19")
		return nil
	}
	if _, err := Compact(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	got := occurrences(t, root)
	for _, id := range appended {
		if got[id] != 1 {
			t.Fatalf("%s appended during compaction: %d lines after it", id, got[id])
		}
	}
	if len(appended) < 20 {
		t.Fatalf("only %d concurrent appends", len(appended))
	}
	// A later run absorbs them too and still loses nothing.
	if _, err := Compact(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	got = occurrences(t, root)
	for _, id := range appended {
		if got[id] != 1 {
			t.Fatalf("%s: %d lines after the second run", id, got[id])
		}
	}
}

func TestCompactOverfullToday(t *testing.T) {
	root := t.TempDir()
	pinHost(t, root)
	var b strings.Builder
	for i := 0; i < 8; i++ {
		b.WriteString(line(rec{UUID: fmt.Sprintf("r%d", i), TS: ts(0, 1), Agent: "a", Kind: "fact", Text: fmt.Sprintf("fact %d", i)}))
	}
	b.WriteString(`{"ts":"2026-11-20T02:00:00Z","agent":"a","kind":"fa`) // being written
	writeFile(t, root, jpath("2026-11-20"), b.String())
	o := opts(root)
	o.MaxDayLines = 10
	if rep, err := Compact(context.Background(), o); err != nil || rep.Absorbed != 0 {
		t.Fatalf("under the threshold: %+v %v", rep, err)
	}
	o.MaxDayLines = 5
	rep, err := Compact(context.Background(), o)
	if err != nil || rep.Absorbed != 8 {
		t.Fatalf("over the threshold: %+v %v", rep, err)
	}
	data, _ := os.ReadFile(filepath.Join(root, jpath("2026-11-20")))
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"kind":"compaction"`) || lines[1] != `{"ts":"2026-11-20T02:00:00Z","agent":"a","kind":"fa` {
		// The compaction record was appended after the partial line by
		// journal.Append, which starts it on a new line; the partial
		// line stays, whole, for its writer to finish.
		if !strings.Contains(string(data), `"kind":"fa`+"\n") {
			t.Fatalf("journal after compaction: %q", data)
		}
	}
	snap := snapshot(t, root)
	rep, err = Compact(context.Background(), o)
	if err != nil || rep.Absorbed != 0 {
		t.Fatalf("second run %+v %v", rep, err)
	}
	if d := diffSnapshots(snap, snapshot(t, root)); d != "" {
		t.Fatal(d)
	}
}

func TestCompactManyRecordsSplitsTheCompactionRecord(t *testing.T) {
	root := t.TempDir()
	pinHost(t, root)
	var b strings.Builder
	n := 20000
	for i := 0; i < n; i++ {
		b.WriteString(line(rec{UUID: fmt.Sprintf("mem_20261118T000000Z_a_%05d", i), TS: ts(-2, 0), Agent: "a", Kind: "fact", Text: "f"}))
	}
	writeFile(t, root, jpath("2026-11-18"), b.String())
	rep, err := Compact(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Records) < 2 || rep.Absorbed != n {
		t.Fatalf("%d records for %d absorbed", len(rep.Records), rep.Absorbed)
	}
	total := 0
	for _, r := range readRecords(t, filepath.Join(root, jpath("2026-11-20"))) {
		ids, err := absorbedList(&r)
		if err != nil {
			t.Fatal(err)
		}
		total += len(ids)
		if len(r.Canonical()) > maxAbsorbedBytes+4096 {
			t.Fatalf("compaction record of %d bytes", len(r.Canonical()))
		}
	}
	if total != n {
		t.Fatalf("absorbed lists name %d uuids, want %d", total, n)
	}
}

func TestCompactSummarizer(t *testing.T) {
	root := fixture(t)
	o := opts(root)
	input := filepath.Join(t.TempDir(), "input")
	o.Summarizer = []string{"/bin/sh", "-c", "cat > " + input + "; echo '- the team prefers long answers'"}
	rep, err := Compact(context.Background(), o)
	if err != nil || rep.Summary != "summarizer" {
		t.Fatalf("%+v %v", rep, err)
	}
	mem, _ := os.ReadFile(filepath.Join(root, "agents/a/memory/MEMORY.md"))
	if !strings.Contains(string(mem), "- the team prefers long answers\n") || strings.Contains(string(mem), "### Decisions") {
		t.Fatalf("MEMORY.md:\n%s", mem)
	}
	data, _ := os.ReadFile(input)
	var n int
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("summarizer input line %q: %v", l, err)
		}
		if m["uuid"] == "d1" {
			t.Fatal("the summarizer was given a superseded record")
		}
		n++
	}
	if n != 6 {
		t.Fatalf("summarizer got %d records, want 6", n)
	}
}

func TestCompactSummarizerFailureFallsBack(t *testing.T) {
	for name, argv := range map[string][]string{
		"exit 1":    {"/bin/sh", "-c", "cat >/dev/null; echo oops >&2; exit 1"},
		"no output": {"/bin/sh", "-c", "cat >/dev/null"},
		"marker":    {"/bin/sh", "-c", "cat >/dev/null; echo '" + EndMarker + "'"},
		"missing":   {"/nonexistent/summarizer"},
		"timeout":   {"/bin/sh", "-c", "sleep 10"},
	} {
		t.Run(name, func(t *testing.T) {
			root := fixture(t)
			o := opts(root)
			o.Summarizer = argv
			o.SummarizerTimeout = 300 * time.Millisecond
			rep, err := Compact(context.Background(), o)
			if err != nil || rep.Summary != "deterministic" || rep.Absorbed != 7 {
				t.Fatalf("%+v %v", rep, err)
			}
			mem, _ := os.ReadFile(filepath.Join(root, "agents/a/memory/MEMORY.md"))
			if !strings.Contains(string(mem), "Use Postgres for @storage") {
				t.Fatalf("MEMORY.md:\n%s", mem)
			}
		})
	}
}

func TestCompactKeepsHumanTextAroundTheSection(t *testing.T) {
	root := fixture(t)
	page := "# Mine\n\nintro\n\n  " + BeginMarker + "\nold generated text\n" + EndMarker + "\n\n## Notes by hand\n\nkeep me"
	writeFile(t, root, "agents/a/memory/MEMORY.md", page)
	if _, err := Compact(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	mem, _ := os.ReadFile(filepath.Join(root, "agents/a/memory/MEMORY.md"))
	s := string(mem)
	if !strings.HasPrefix(s, "# Mine\n\nintro\n\n"+BeginMarker+"\n") || !strings.HasSuffix(s, EndMarker+"\n\n## Notes by hand\n\nkeep me") ||
		strings.Contains(s, "old generated text") || strings.Count(s, BeginMarker) != 1 {
		t.Fatalf("MEMORY.md:\n%s", s)
	}
}

func TestCompactRefusesBrokenMarkersAndLosesNothing(t *testing.T) {
	root := fixture(t)
	before := occurrences(t, root)
	writeFile(t, root, "agents/a/memory/MEMORY.md", "# Mine\n"+BeginMarker+"\nno end\n")
	_, err := Compact(context.Background(), opts(root))
	var me *MarkerError
	if !errors.As(err, &me) || me.Line != 2 {
		t.Fatalf("err %v", err)
	}
	got := occurrences(t, root)
	for id := range before {
		if got[id] == 0 {
			t.Fatalf("%s lost", id)
		}
	}
	writeFile(t, root, "agents/a/memory/MEMORY.md", "# Mine\n")
	rep, err := Compact(context.Background(), opts(root))
	if err != nil || rep.Resumed != 7 {
		t.Fatalf("after the fix: %+v %v", rep, err)
	}
	for id, n := range occurrences(t, root) {
		if n != 1 {
			t.Fatalf("%s: %d", id, n)
		}
	}
}

func TestCompactRepairsATornArchive(t *testing.T) {
	root := fixture(t)
	writeFile(t, root, apath("2026-11-18"), line(rec{UUID: "d1", TS: ts(-2, 9), Agent: "a", Kind: "decision", Text: "Use MySQL for @storage", Why: "it is there"})+`{"uuid":"d2","ts":`)
	if _, err := Compact(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	for id, n := range occurrences(t, root) {
		if n != 1 {
			t.Fatalf("%s: %d", id, n)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(root, apath("2026-11-18")+".torn-*"))
	if len(matches) != 1 {
		t.Fatalf("torn tail not kept aside: %v", matches)
	}
	if data, _ := os.ReadFile(matches[0]); string(data) != `{"uuid":"d2","ts":` {
		t.Fatalf("kept %q", data)
	}
}

func TestCompactBusy(t *testing.T) {
	root := fixture(t)
	o := opts(root)
	o.Hook = func(step string) error {
		if step == StepRecord {
			if _, err := Compact(context.Background(), opts(root)); !errors.Is(err, ErrBusy) {
				t.Errorf("concurrent compaction: %v", err)
			}
		}
		return nil
	}
	if _, err := Compact(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

func TestSubjectAndSlug(t *testing.T) {
	for _, c := range []struct {
		r          rec
		key, shown string
	}{
		{rec{Text: "Talk to @Shaun about it", Entities: []string{"Acme Corp"}}, "entity:acme corp", "Acme Corp"},
		{rec{Text: "Talk to @Shaun about it"}, "entity:shaun", "@Shaun"},
		{rec{Text: "Use tabs", Tags: []string{"Style"}}, "tag:style", "#Style"},
		{rec{Text: "  Use, tabs! For all the code."}, "words:use tabs for all", "use tabs for all"},
		{rec{Text: "!!!"}, "words:(untitled)", "(untitled)"},
	} {
		if k, s := Subject(&c.r); k != c.key || s != c.shown {
			t.Errorf("Subject(%q) = %q, %q", c.r.Text, k, s)
		}
	}
	for in, want := range map[string]string{"@Shaun": "shaun", "Acme Corp": "acme-corp", "#moon_shot": "moon-shot", "Zoë": "zo-", "!!!": "entity-"} {
		if got := Slug(in); !strings.HasPrefix(got, want) {
			t.Errorf("Slug(%q) = %q", in, got)
		}
	}
}

func TestScheduler(t *testing.T) {
	root := fixture(t)
	var b strings.Builder
	for i := 0; i < 6; i++ {
		b.WriteString(line(rec{UUID: fmt.Sprintf("b%d", i), TS: ts(0, 1), Agent: "b", Kind: "fact", Text: "b"}))
	}
	writeFile(t, root, "agents/b/memory/journal/2026-11-20.jsonl", b.String())
	clockAt := now // a Friday
	s := &Scheduler{Root: root, Weekday: time.Monday, Options: Options{MaxDayLines: 5, Now: func() time.Time { return clockAt }}}
	reps := s.RunOnce(context.Background())
	if len(reps) != 1 || reps[0].Agent != "b" || reps[0].Absorbed != 6 {
		t.Fatalf("not the weekday: only b's overfull day: %+v", reps)
	}
	if reps := s.RunOnce(context.Background()); len(reps) != 0 {
		t.Fatalf("again: %+v", reps)
	}
	clockAt = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC) // Monday
	reps = s.RunOnce(context.Background())
	// b's past day holds only its compaction record: no compaction for that alone.
	if len(reps) != 1 || reps[0].Agent != "a" || reps[0].Absorbed != 8 {
		t.Fatalf("weekday: %+v", reps)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// pinHost gives root a fixed host id (journal.HostFile), so that runs in
// different directories write the same compaction uuids.
func pinHost(t testing.TB, root string) {
	t.Helper()
	writeFile(t, root, journal.HostFile, "testhost\n")
}
