package surprise_test

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/surprise"
)

// readInPlaceJournal writes n records of a few real words each to a day
// file of jdir and returns its path.
func readInPlaceJournal(t *testing.T, jdir string, from, n int) string {
	t.Helper()
	words := strings.Fields("deploy database migration latency budget customer invoice release rollback " +
		"schema tenant quota alert oncall runbook contract pricing roadmap review benchmark journal retry")
	var b []byte
	for i := from; i < from+n; i++ {
		text := fmt.Sprintf("%s %s %s record %d", words[i%len(words)], words[i*7%len(words)], words[i*13%len(words)], i)
		r := journal.Record{UUID: fmt.Sprintf("mem_%05d", i), Agent: "a", Kind: journal.KindFact, Text: text}
		b = append(append(b, r.Canonical()...), '\n')
	}
	day := filepath.Join(jdir, "2026-11-21.jsonl")
	f, err := os.OpenFile(day, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return day
}

// TestIndexReadInPlace: LoadVectors reads the index file in place (mapped,
// not copied: loading a 2,000-record index with vectors allocates less
// than a tenth of the file's bytes, where a read into the heap allocated
// all of them), answers as ScoreVectors over Recent, and an Index still
// open when another Load rewrites the file (a rename) keeps reading the
// file it opened, until Close.
func TestIndexReadInPlace(t *testing.T) {
	dir := t.TempDir()
	jdir := filepath.Join(dir, "journal")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	readInPlaceJournal(t, jdir, 0, n)
	idx := filepath.Join(dir, "a.idx")
	m := embed.Default()
	first, err := surprise.LoadVectors(jdir, idx, n, m) // built and written
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	info, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	probes := []*journal.Record{learning("deploy schema quota record 12"), learning("the tenant quota alert fired again"),
		learning("an unrelated memory about lunch")}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x, err := surprise.LoadVectors(jdir, idx, n, m)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(info.Size())/10 {
		t.Errorf("loading a %d-byte index file allocated %d bytes, want under a tenth of it", info.Size(), alloc)
	}
	recent, err := surprise.Recent(jdir, n)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]surprise.Result, len(probes))
	for i, p := range probes {
		want[i] = surprise.ScoreVectors(p, recent, m)
		if got := x.Score(p); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%q: index %+v, want %+v", p.Text, got, want[i])
		}
	}

	// Enough new lines that the next Load rewrites the file (a rename).
	readInPlaceJournal(t, jdir, n, 40)
	y, err := surprise.LoadVectors(jdir, idx, n, m)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if info2, err := os.Stat(idx); err != nil || os.SameFile(info, info2) {
		t.Fatalf("the index file was not replaced (%v)", err)
	}
	for i, p := range probes {
		if got := x.Score(p); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%q, file replaced while open: %+v, want %+v", p.Text, got, want[i])
		}
	}
	x.Close()
	if x.Len() != 0 {
		t.Errorf("a closed index holds %d records", x.Len())
	}
	recent, err = surprise.Recent(jdir, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probes {
		if got, want := y.Score(p), surprise.ScoreVectors(p, recent, m); !reflect.DeepEqual(got, want) {
			t.Errorf("%q, the new file: %+v, want %+v", p.Text, got, want)
		}
	}
}

// TestIndexFileChecksum: an index file is version 5, its body checksummed
// with CRC-32 IEEE (whose tables a process makes in microseconds, where
// Castagnoli's took 130–200 µs of every append), and a file of version 4
// is built again, not read.
func TestIndexFileChecksum(t *testing.T) {
	dir := t.TempDir()
	jdir := filepath.Join(dir, "journal")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		t.Fatal(err)
	}
	readInPlaceJournal(t, jdir, 0, 20)
	idx := filepath.Join(dir, "a.idx")
	x, err := surprise.Load(jdir, idx, 50)
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	const magic = "memsync-surprise-index 5\n"
	if !strings.HasPrefix(string(data), magic) {
		t.Fatalf("index file starts %q, want %q", data[:min(len(data), len(magic))], magic)
	}
	body := len(magic) + 4
	if got, want := binary.LittleEndian.Uint32(data[len(magic):]), crc32.ChecksumIEEE(data[body:]); got != want {
		t.Fatalf("checksum %08x, want CRC-32 IEEE %08x", got, want)
	}
	// The same body as a version 4 file (Castagnoli): built again.
	old := append([]byte("memsync-surprise-index 4\n0000"), data[body:]...)
	binary.LittleEndian.PutUint32(old[len(magic):], crc32.Checksum(data[body:], crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(idx, old, 0o644); err != nil {
		t.Fatal(err)
	}
	x, err = surprise.Load(jdir, idx, 50)
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if data, err := os.ReadFile(idx); err != nil || !strings.HasPrefix(string(data), magic) {
		t.Fatalf("a version 4 file was not built again (%v)", err)
	}
}
