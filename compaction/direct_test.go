package compaction

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// phases lets direct writers advance in step with compactions, so that
// their lines land while compactions run (at every step of each) without a
// timing assumption.
type phases struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

func newPhases() *phases {
	p := &phases{}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *phases) next() {
	p.mu.Lock()
	p.n++
	p.cond.Broadcast()
	p.mu.Unlock()
}

// release lets every writer run to its end.
func (p *phases) release() {
	p.mu.Lock()
	p.n = 1 << 30
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *phases) wait(n int) {
	p.mu.Lock()
	for p.n < n {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

// directWriter writes n lines to path as the README allows agents to: one
// write(2) per line with O_APPEND and no lock, either opening the file for
// every line or keeping one descriptor open throughout. Line i waits for
// phase i*total/n + 1. It returns the uuids it wrote.
func directWriter(t *testing.T, path, name string, n int, keepOpen bool, ph *phases, total int) []string {
	const flags = syscall.O_WRONLY | syscall.O_APPEND | syscall.O_CREAT | syscall.O_CLOEXEC
	open := func() int {
		fd, err := syscall.Open(path, flags, 0o644)
		if err != nil {
			t.Errorf("%s: open: %v", name, err)
			return -1
		}
		return fd
	}
	fd := -1
	if keepOpen {
		if fd = open(); fd < 0 {
			return nil
		}
		defer syscall.Close(fd)
	}
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		ph.wait(i*total/n + 1)
		id := fmt.Sprintf("%s_%05d", name, i)
		b := []byte(line(rec{UUID: id, TS: ts(0, 10), Agent: "a", Kind: "observation", Text: fmt.Sprintf("%s wrote line %d directly", name, i)}))
		if !keepOpen {
			if fd = open(); fd < 0 {
				return ids
			}
		}
		w, err := syscall.Write(fd, b)
		if !keepOpen {
			syscall.Close(fd)
		}
		if err != nil || w != len(b) {
			t.Errorf("%s: write: %d of %d bytes, %v", name, w, len(b), err)
			return ids
		}
		ids = append(ids, id)
	}
	return ids
}

// Lines written directly to a journal (one write(2), O_APPEND, no lock)
// while compactions rewrite that very journal are never lost: after the
// writers stop, each is in the journal or the archive exactly once. One
// writer opens the file for every line, the other keeps its descriptor open
// across every compaction. The journal is overfull throughout, so every
// compaction absorbs lines of the file being written.
func TestCompactKeepsDirectWrites(t *testing.T) {
	const perWriter, total = 4000, 80
	for round := 0; round < 3; round++ {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			root := t.TempDir()
			pinHost(t, root)
			var seed []byte
			for i := 0; i < 300; i++ {
				seed = append(seed, line(rec{UUID: fmt.Sprintf("seed_%03d", i), TS: ts(0, 9), Agent: "a", Kind: "fact", Text: "seed"})...)
			}
			writeFile(t, root, jpath("2026-11-20"), string(seed))
			path := filepath.Join(root, jpath("2026-11-20"))
			ph := newPhases()
			defer ph.release()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var written []string
			for _, w := range []struct {
				name     string
				keepOpen bool
			}{{"perline", false}, {"keepfd", true}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids := directWriter(t, path, w.name, perWriter, w.keepOpen, ph, total)
					mu.Lock()
					written = append(written, ids...)
					mu.Unlock()
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			o := opts(root)
			o.MaxDayLines = 50
			o.Hook = func(string) error { ph.next(); return nil } // writers go on at every step
			runs, absorbed := 0, 0
			for finished := false; !finished; {
				select {
				case <-done:
					finished = true
				default:
				}
				ph.next()
				rep, err := Compact(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				runs++
				absorbed += rep.Absorbed
			}
			if t.Failed() {
				return
			}
			got := occurrences(t, root)
			lost, dup := map[string]int{}, 0
			for _, id := range written {
				switch n := got[id]; {
				case n == 0:
					lost[id[:strings.IndexByte(id, '_')]]++
				case n > 1:
					dup++
				}
			}
			if len(lost) > 0 || dup > 0 || len(written) != 2*perWriter {
				t.Fatalf("%d compactions absorbed %d lines; of %d lines written directly, lost %v, %d duplicated",
					runs, absorbed, len(written), lost, dup)
			}
			if runs < 5 || absorbed <= 300 {
				t.Fatalf("only %d compactions absorbing %d lines ran while the writers wrote", runs, absorbed)
			}
			t.Logf("%d compactions absorbed %d lines", runs, absorbed)
		})
	}
}

// A line that a power cut left partly blanked (its first byte and a run
// of others are spaces, the rest is its archived original) is recognised
// and blanked by the next run; a rejected line that merely starts with a
// space is left alone.
func TestCompactFinishesATornBlank(t *testing.T) {
	root := fixture(t)
	d1 := line(rec{UUID: "d1", TS: ts(-2, 9), Agent: "a", Kind: "decision", Text: "Use MySQL for @storage", Why: "it is there"})
	torn := []byte(d1)
	for i := 0; i < len(torn)/2; i++ {
		torn[i] = ' '
	}
	journal18 := fixtureJournal18()
	stranger := ` {"uuid":"zz", not json` + "\n"
	writeFile(t, root, jpath("2026-11-18"), strings.Replace(journal18, d1, string(torn), 1)+stranger)
	writeFile(t, root, apath("2026-11-18"), d1)
	rep, err := Compact(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resumed != 1 {
		t.Fatalf("report %+v", rep)
	}
	for id, n := range occurrences(t, root) {
		if n != 1 {
			t.Fatalf("%s: %d", id, n)
		}
	}
	data, err := os.ReadFile(filepath.Join(root, jpath("2026-11-18")))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != len(journal18)+len(stranger) || strings.TrimSpace(string(data)) != strings.TrimSpace(stranger) {
		t.Fatalf("journal after the run: %q", data)
	}
}
