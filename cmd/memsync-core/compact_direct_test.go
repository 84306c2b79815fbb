package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
)

// Lines written directly into today's journal (one write(2), O_APPEND, no
// lock: one writer opening the file per line, one keeping its descriptor
// open) while `memsync compact` compacts that overfull journal again and
// again, with a sync pass between compactions (a running daemon refuses
// `memsync compact`: issue 14): every line ends in the journal or the
// archive exactly once, and verify is clean (issue 13, item 2).
func TestCompactCommandKeepsDirectWrites(t *testing.T) {
	const rounds, perRound = 10, 400
	repo := newRepo(t, "a")
	if err := os.WriteFile(filepath.Join(repo, "memsync.yaml"), []byte("compaction:\n  max_day_lines: 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jdir := core.Layout{Root: repo}.JournalDir("a")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	path := filepath.Join(jdir, journal.FileName(now))
	lineOf := func(id string) []byte {
		r := journal.Record{UUID: id, TS: now, Agent: "a", Kind: journal.KindObservation, Scope: journal.ScopePrivate, Text: "written directly: " + id}
		return append(r.Canonical(), '\n')
	}
	const flags = syscall.O_WRONLY | syscall.O_APPEND | syscall.O_CREAT | syscall.O_CLOEXEC
	keptFD, err := syscall.Open(path, flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(keptFD)
	write := func(name string, round int) {
		for i := 0; i < perRound; i++ {
			b := lineOf(fmt.Sprintf("mem_direct_%s_%02d_%04d", name, round, i))
			fd := keptFD
			if name == "perline" {
				if fd, err = syscall.Open(path, flags, 0o644); err != nil {
					t.Error(err)
					return
				}
			}
			n, err := syscall.Write(fd, b)
			if name == "perline" {
				syscall.Close(fd)
			}
			if err != nil || n != len(b) {
				t.Errorf("%s: wrote %d of %d bytes: %v", name, n, len(b), err)
				return
			}
			if i%20 == 0 {
				time.Sleep(time.Millisecond) // spread the lines over the compaction
			}
		}
	}
	// A first overfull day for the first round to compact.
	var wg sync.WaitGroup
	write("perline", -1)
	for round := 0; round < rounds; round++ {
		for _, name := range []string{"perline", "keepfd"} {
			wg.Add(1)
			go func() { defer wg.Done(); write(name, round) }()
		}
		out, err := exec.Command(memsyncBinary(t), "compact", "--agent", "a", "--repo", repo).CombinedOutput()
		wg.Wait()
		if err != nil {
			t.Fatalf("memsync compact: %v\n%s", err, out)
		}
		if t.Failed() {
			return
		}
		if round == 0 {
			t.Logf("first compaction: %s", out)
		}
		// Project between compactions, so the next one blanks lines that
		// cursors have already passed.
		if out, err := exec.Command(memsyncBinary(t), "sync", "--once", "--repo", repo).CombinedOutput(); err != nil {
			t.Fatalf("sync: %v\n%s", err, out)
		}
	}
	counts := map[string]int{}
	for _, dir := range []string{jdir, filepath.Join(jdir, "archive")} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(data), "\n") {
				if rec, err := journal.Parse([]byte(l)); err == nil && strings.HasPrefix(rec.UUID, "mem_direct_") {
					counts[rec.UUID]++
				}
			}
		}
	}
	lost, dup := map[string]int{}, 0
	for round := -1; round < rounds; round++ {
		for _, name := range []string{"perline", "keepfd"} {
			if round < 0 && name == "keepfd" {
				continue
			}
			for i := 0; i < perRound; i++ {
				switch n := counts[fmt.Sprintf("mem_direct_%s_%02d_%04d", name, round, i)]; {
				case n == 0:
					lost[name]++
				case n > 1:
					dup++
				}
			}
		}
	}
	if len(lost) > 0 || dup > 0 {
		t.Fatalf("of %d lines written directly: lost %v, %d duplicated", (2*rounds+1)*perRound, lost, dup)
	}
	out, err := exec.Command(memsyncBinary(t), "sync", "--once", "--repo", repo).CombinedOutput()
	if err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	out, err = exec.Command(memsyncBinary(t), "verify", "--repo", repo).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok: ") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	t.Logf("verify: %s", out)
}
