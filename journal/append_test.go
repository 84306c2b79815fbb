package journal_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

var t0 = time.Date(2026, 11, 21, 9, 15, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func newRec(agent, text string) *journal.Record {
	return &journal.Record{Agent: agent, Kind: journal.KindFact, Text: text}
}

// readJournal reads every complete line of path; it fails on rejects.
func readJournal(t *testing.T, path string) []journal.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, r := readAll(t, data, 0, 0)
	if r.Offset() != int64(len(data)) {
		t.Fatalf("%s ends in a partial line", path)
	}
	var out []journal.Record
	for _, l := range lines {
		if l.Err != nil {
			t.Fatalf("%s:%d: %v", path, l.Number, l.Err)
		}
		out = append(out, l.Record)
	}
	return out
}

func TestAppendAllocatesUUIDs(t *testing.T) {
	dir := t.TempDir()
	opts := journal.AppendOptions{Now: fixedClock(t0.Add(300 * time.Millisecond))}
	var ids []string
	for i := 0; i < 3; i++ {
		r := newRec("alice", fmt.Sprint("same second ", i))
		path, err := journal.Append(dir, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		if path != filepath.Join(dir, "2026-11-21.jsonl") {
			t.Fatalf("path %s", path)
		}
		ids = append(ids, r.UUID)
	}
	want := []string{"mem_20261121T091500Z_alice_0001", "mem_20261121T091500Z_alice_0002", "mem_20261121T091500Z_alice_0003"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("uuids %v, want %v", ids, want)
	}
	// A new second starts again at 0001; so does another agent in the same second.
	next := newRec("alice", "next second")
	if _, err := journal.Append(dir, next, journal.AppendOptions{Now: fixedClock(t0.Add(time.Second))}); err != nil {
		t.Fatal(err)
	}
	bob := newRec("bob", "bob writes here too")
	if _, err := journal.Append(dir, bob, opts); err != nil {
		t.Fatal(err)
	}
	if next.UUID != "mem_20261121T091501Z_alice_0001" || bob.UUID != "mem_20261121T091500Z_bob_0001" {
		t.Fatalf("uuids %s %s", next.UUID, bob.UUID)
	}
	// An explicit ts of an earlier second continues that second's sequence,
	// however far back in the file it is.
	old := newRec("alice", "imported")
	old.TS = t0.Add(700 * time.Millisecond)
	if _, err := journal.Append(dir, old, opts); err != nil {
		t.Fatal(err)
	}
	if old.UUID != "mem_20261121T091500Z_alice_0004" {
		t.Fatalf("explicit ts uuid %s", old.UUID)
	}
	recs := readJournal(t, filepath.Join(dir, "2026-11-21.jsonl"))
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	if !recs[0].TS.Equal(t0.Add(300*time.Millisecond)) || recs[0].Scope != journal.ScopePrivate {
		t.Errorf("first record: ts %v scope %q", recs[0].TS, recs[0].Scope)
	}
}

func TestAppendKeepsGivenUUIDAndUTC(t *testing.T) {
	dir := t.TempDir()
	r := newRec("alice", "given")
	r.UUID = "custom-id"
	r.TS = time.Date(2026, 11, 21, 23, 30, 0, 0, time.FixedZone("EST", -5*3600))
	path, err := journal.Append(dir, r, journal.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "2026-11-22.jsonl" {
		t.Errorf("a record of 04:30Z on the 22nd went to %s", path)
	}
	got := readJournal(t, path)
	if len(got) != 1 || got[0].UUID != "custom-id" || got[0].TS.Location() != time.UTC {
		t.Errorf("got %+v", got)
	}
}

// TestAppendSequenceBeyondWindow: the sequence scan reads the file's tail
// and widens it while the same second continues; >64 KiB of one second must
// still never repeat a uuid.
func TestAppendSequenceBeyondWindow(t *testing.T) {
	dir := t.TempDir()
	opts := journal.AppendOptions{NoSync: true, Now: fixedClock(t0)}
	pad := strings.Repeat("p", 700)
	const n = 200 // ~170 KiB: the window doubles twice
	for i := 0; i < n; i++ {
		if _, err := journal.Append(dir, newRec("alice", pad), opts); err != nil {
			t.Fatal(err)
		}
	}
	recs := readJournal(t, filepath.Join(dir, journal.FileName(t0)))
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.UUID] {
			t.Fatalf("uuid %s handed out twice", r.UUID)
		}
		seen[r.UUID] = true
	}
	if last := recs[len(recs)-1].UUID; last != fmt.Sprintf("mem_20261121T091500Z_alice_%04d", n) {
		t.Fatalf("last uuid %s", last)
	}
}

// TestAppendSequenceSeesOtherWriters: a mem_ uuid written by another tool,
// with spaces in its JSON, is not handed out again.
func TestAppendSequenceSeesOtherWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, journal.FileName(t0))
	other := `{ "uuid" : "mem_20261121T091500Z_alice_0007", "ts": "2026-11-21T09:15:00Z", "agent": "alice", "kind": "fact", "text": "by hand" }` + "\n"
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRec("alice", "next")
	if _, err := journal.Append(dir, r, journal.AppendOptions{Now: fixedClock(t0)}); err != nil {
		t.Fatal(err)
	}
	if r.UUID != "mem_20261121T091500Z_alice_0008" {
		t.Fatalf("uuid %s, want _0008", r.UUID)
	}
}

func TestAppendConcurrent(t *testing.T) {
	dir := t.TempDir()
	const workers, each = 8, 50
	opts := journal.AppendOptions{Now: fixedClock(t0), NoSync: true}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := journal.Append(dir, newRec("alice", fmt.Sprintf("worker %d record %d", w, i)), opts); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	recs := readJournal(t, filepath.Join(dir, journal.FileName(t0)))
	if len(recs) != workers*each {
		t.Fatalf("%d records, want %d", len(recs), workers*each)
	}
	ids, texts := map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		ids[r.UUID], texts[r.Text] = true, true
	}
	if len(ids) != workers*each || len(texts) != workers*each {
		t.Fatalf("%d distinct uuids, %d distinct texts, want %d", len(ids), len(texts), workers*each)
	}
	// All in one second: the sequence is exactly 0001..0400.
	for i := 1; i <= workers*each; i++ {
		if id := fmt.Sprintf("mem_20261121T091500Z_alice_%04d", i); !ids[id] {
			t.Fatalf("missing %s", id)
		}
	}
}

func TestAppendTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, journal.FileName(t0))
	good := `{"uuid":"before","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"before"}` + "\n"
	torn := `{"uuid":"torn","ts":"2026-11-21T09:15:00Z","agent":"al`
	if err := os.WriteFile(path, []byte(good+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRec("alice", "after the tear")
	if _, err := journal.Append(dir, r, journal.AppendOptions{Now: fixedClock(t0)}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := good + torn + "\n" + string(r.Canonical()) + "\n"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	lines, _ := readAll(t, data, 0, 0)
	if len(lines) != 3 || lines[0].Err != nil || lines[1].Err == nil || lines[2].Err != nil || lines[2].Record.UUID != r.UUID {
		t.Fatalf("lines: %+v", lines)
	}
	if lines[1].Number != 2 || lines[2].Number != 3 {
		t.Errorf("torn fragment is line %d, record line %d", lines[1].Number, lines[2].Number)
	}
}

func TestAppendValidatesBeforeWriting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rec   journal.Record
		field string
	}{
		{"no agent", journal.Record{Kind: journal.KindFact, Text: "x"}, "agent"},
		{"bad agent", journal.Record{Agent: "a/b", Kind: journal.KindFact, Text: "x"}, "agent"},
		{"bad kind", journal.Record{Agent: "alice", Kind: "bogus", Text: "x"}, "kind"},
		{"bad scope", journal.Record{Agent: "alice", Kind: journal.KindFact, Scope: "public", Text: "x"}, "scope"},
		{"blank text", journal.Record{Agent: "alice", Kind: journal.KindFact, Text: "  "}, "text"},
		{"bad tier", journal.Record{Agent: "alice", Kind: journal.KindFact, Text: "x", Tier: "gold"}, "tier"},
		{"bad link", journal.Record{Agent: "alice", Kind: journal.KindFact, Text: "x", Links: []string{"not a uuid"}}, "links"},
		{"over 1 MiB", journal.Record{Agent: "alice", Kind: journal.KindFact, Text: strings.Repeat("x", journal.MaxLineBytes)}, "text"},
		{"just over 1 MiB", journal.Record{Agent: "alice", Kind: journal.KindFact,
			Text: strings.Repeat("x", journal.MaxLineBytes-len(`{"uuid":"mem_20261121T091500Z_alice_0001","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","scope":"private","text":""}`)+1)}, "text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "journal")
			rec := tc.rec
			_, err := journal.Append(dir, &rec, journal.AppendOptions{Now: fixedClock(t0)})
			var fe *journal.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Append = %v, want a FieldError on %q", err, tc.field)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the journal directory was created for a record that was refused")
			}
		})
	}
	// At exactly the limit the record is written and reads back.
	dir := t.TempDir()
	skeleton := `{"uuid":"mem_20261121T091500Z_alice_0001","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","scope":"private","text":""}`
	rec := journal.Record{Agent: "alice", Kind: journal.KindFact, Text: strings.Repeat("x", journal.MaxLineBytes-len(skeleton))}
	path, err := journal.Append(dir, &rec, journal.AppendOptions{Now: fixedClock(t0), NoSync: true})
	if err != nil {
		t.Fatalf("a record of exactly 1 MiB: %v", err)
	}
	if got := readJournal(t, path); len(got) != 1 || len(got[0].Canonical()) != journal.MaxLineBytes {
		t.Fatalf("read back %d records", len(got))
	}
}

func TestAppendNoSync(t *testing.T) {
	dir := t.TempDir()
	for _, noSync := range []bool{false, true} {
		if _, err := journal.Append(dir, newRec("alice", fmt.Sprint("nosync=", noSync)), journal.AppendOptions{NoSync: noSync, Now: fixedClock(t0)}); err != nil {
			t.Fatal(err)
		}
	}
	recs := readJournal(t, filepath.Join(dir, journal.FileName(t0)))
	if len(recs) != 2 || recs[1].Text != "nosync=true" || recs[1].UUID != "mem_20261121T091500Z_alice_0002" {
		t.Fatalf("records %+v", recs)
	}
}

// TestAppendFollowsReplacedFile: a journal renamed over (compaction, git
// checkout) while an Append waits for its lock gets the record in the new
// file, not in the unlinked old one.
func TestAppendFollowsReplacedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, journal.FileName(t0))
	if err := os.WriteFile(path, []byte(`{"uuid":"old","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"old"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	held, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := journal.Append(dir, newRec("alice", "waited"), journal.AppendOptions{Now: fixedClock(t0)})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // let Append block on the lock
	replacement := `{"uuid":"new","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"rewritten"}` + "\n"
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(replacement), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	held.Close() // releases the lock on the old inode
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recs := readJournal(t, path)
	if len(recs) != 2 || recs[0].UUID != "new" || recs[1].Text != "waited" {
		t.Fatalf("the record did not land in the replacement file: %+v", recs)
	}
}

func TestAppendCreatesDirectories(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents", "alice", "memory", "journal")
	path, err := journal.Append(dir, newRec("alice", "first ever"), journal.AppendOptions{Now: fixedClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !bytes.HasSuffix(data, []byte("\n")) || bytes.Count(data, []byte("\n")) != 1 {
		t.Fatalf("file %q", data)
	}
}
