package surprise_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/surprise"
)

// TestLoadAgreesWithScore: the host-local index answers exactly as Score
// over the records Recent reads, whatever happened to the journals since
// it was written (lines appended, many lines appended, a file rewritten,
// an older day file appearing, the index deleted or damaged), for n both
// above and below the number of records.
func TestLoadAgreesWithScore(t *testing.T) {
	dir := t.TempDir()
	jdir := filepath.Join(dir, "journal")
	idx := filepath.Join(dir, ".memsync", "surprise", "a.idx")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		t.Fatal(err)
	}
	seq := 0
	add := func(day string, n int) {
		f, err := os.OpenFile(filepath.Join(jdir, day+".jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for i := 0; i < n; i++ {
			seq++
			r := journal.Record{UUID: fmt.Sprintf("mem_%05d", seq), Agent: "a", Kind: journal.KindFact,
				Text: fmt.Sprintf("record %d about topic%d and thing%d, not %d", seq, seq%7, seq%11, seq%3), Tags: []string{fmt.Sprintf("t%d", seq%5)}}
			if seq%4 == 0 {
				r.Text = fmt.Sprintf("record about topic%d and thing%d", seq%7, seq%11)
			}
			if _, err := f.Write(append(r.Canonical(), '\n')); err != nil {
				t.Fatal(err)
			}
		}
	}
	probes := []*journal.Record{
		{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: "record about topic3 and thing5"},
		{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: "record 12 about topic5 and thing1, not 0"},
		{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: "something else entirely", Tags: []string{"t3", "new"}},
		{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: "the a of"},
	}
	check := func(step string, n int) {
		t.Helper()
		x, err := surprise.Load(jdir, idx, n)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		recent, err := surprise.Recent(jdir, n)
		if err != nil {
			t.Fatal(err)
		}
		if x.Len() != len(recent) {
			t.Fatalf("%s: index holds %d, Recent %d", step, x.Len(), len(recent))
		}
		for _, p := range probes {
			if got, want := x.Score(p), surprise.Score(p, recent); !reflect.DeepEqual(got, want) {
				t.Errorf("%s (n=%d) %q:\nindex %+v\nscore %+v", step, n, p.Text, got, want)
			}
		}
	}
	for _, n := range []int{50, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			os.Remove(idx)
			check("empty", n)
			add("2026-11-20", 30)
			add("2026-11-21", 40)
			check("built", n)
			check("again", n)
			add("2026-11-21", 3)
			check("appended", n)
			add("2026-11-22", 5)
			check("new day", n)
			add("2026-11-22", 300)
			check("many appended", n)
			add("2026-11-19", 10)
			check("older day file", n)
			compact(t, jdir, "2026-11-22", "2026-11-21", 2)
			check("compacted in place", n)
			check("compacted in place, again", n)
			data, _ := os.ReadFile(filepath.Join(jdir, "2026-11-21.jsonl"))
			if err := os.WriteFile(filepath.Join(jdir, "2026-11-21.jsonl"), data[:len(data)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			check("truncated", n)
			if err := os.WriteFile(idx, []byte("memsync-surprise-index 3\n\x05\x00"), 0o644); err != nil {
				t.Fatal(err)
			}
			check("damaged index", n)
			os.Remove(filepath.Join(jdir, "2026-11-22.jsonl"))
			check("file removed", n)
		})
	}
}

// compact does what a compaction does to a journal, without the archive:
// it appends to the journal of day a compaction record absorbing the
// first k records left in the journal of from, then blanks their lines in place
// (the file keeps its size and inode).
func compact(t *testing.T, jdir, day, from string, k int) {
	t.Helper()
	path := filepath.Join(jdir, from+".jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for off := 0; len(ids) < k; {
		end := off + bytes.IndexByte(data[off:], '\n')
		if len(bytes.TrimSpace(data[off:end])) == 0 {
			off = end + 1 // blanked already
			continue
		}
		var r journal.Record
		if err := json.Unmarshal(data[off:end], &r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.UUID)
		copy(data[off:end], bytes.Repeat([]byte{' '}, end-off))
		off = end + 1
	}
	raw, _ := json.Marshal(ids)
	c := journal.Record{UUID: "mem_compaction_" + from, Agent: "a", Kind: journal.KindCompaction, Text: "Compacted",
		Extra: map[string]json.RawMessage{"absorbed": raw}}
	f, err := os.OpenFile(filepath.Join(jdir, day+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(c.Canonical(), '\n')); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
}

// FuzzIndexFile: whatever the index file holds, Load does not fail or
// panic, and answers as Score over the records Recent reads.
func FuzzIndexFile(f *testing.F) {
	dir := f.TempDir()
	jdir := filepath.Join(dir, "journal")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		f.Fatal(err)
	}
	var lines []byte
	for i, text := range []string{"deploys happen on tuesdays", "the cache is warm", "deploys never happen on tuesdays"} {
		r := journal.Record{UUID: fmt.Sprintf("mem_%d", i), Agent: "a", Kind: journal.KindFact, Text: text}
		lines = append(append(lines, r.Canonical()...), '\n')
	}
	if err := os.WriteFile(filepath.Join(jdir, "2026-11-21.jsonl"), lines, 0o644); err != nil {
		f.Fatal(err)
	}
	good := filepath.Join(dir, "good.idx")
	if _, err := surprise.Load(jdir, good, 10); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(good)
	f.Add(seed)
	f.Add([]byte("memsync-surprise-index 3\n"))
	f.Add([]byte("memsync-surprise-index 5\n"))
	recent, _ := surprise.Recent(jdir, 10)
	probe := &journal.Record{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: "deploys happen on tuesdays"}
	want := surprise.Score(probe, recent)
	f.Fuzz(func(t *testing.T, data []byte) {
		idx := filepath.Join(t.TempDir(), "a.idx")
		if err := os.WriteFile(idx, data, 0o644); err != nil {
			t.Fatal(err)
		}
		x, err := surprise.Load(jdir, idx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.Score(probe); !reflect.DeepEqual(got, want) {
			t.Errorf("index %q: %+v, want %+v", data, got, want)
		}
	})
}
