package journal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// sequenceSetups run each sequence test with the high-water file the
// commands use and without one (a full scan every time).
var sequenceSetups = []struct {
	name string
	opts func(t *testing.T) journal.AppendOptions
}{
	{"high-water", func(t *testing.T) journal.AppendOptions {
		return journal.AppendOptions{NoSync: true, SequenceFile: filepath.Join(t.TempDir(), "seq", "alice")}
	}},
	{"scan", func(t *testing.T) journal.AppendOptions { return journal.AppendOptions{NoSync: true} }},
}

// appendAt appends a record with text at the clock's now and returns its uuid.
func appendAt(t *testing.T, dir string, opts journal.AppendOptions, now func() time.Time, text string) string {
	t.Helper()
	opts.Now = now
	r := newRec("alice", text)
	if _, err := journal.Append(dir, r, opts); err != nil {
		t.Fatal(err)
	}
	return r.UUID
}

// distinctUUIDs fails when a uuid of dir's journals or archives repeats
// and returns how many there are.
func distinctUUIDs(t *testing.T, dir string) int {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	archived, _ := filepath.Glob(filepath.Join(dir, "archive", "*.jsonl"))
	seen := map[string]string{}
	for _, p := range append(paths, archived...) {
		for _, r := range readJournal(t, p) {
			if where, dup := seen[r.UUID]; dup {
				t.Fatalf("uuid %s in %s and again in %s", r.UUID, where, p)
			}
			seen[r.UUID] = p
		}
	}
	return len(seen)
}

// TestAppendSequenceNeverRepeats: the uuid Append allocates is new whatever
// came before it in the same second — a line over 64 KiB, a wait for the
// lock while others appended in the next second, the clock stepping back,
// the second's lines moved to the archive by compaction, a lost high-water
// file. Each case failed on the 64 KiB tail scan.
func TestAppendSequenceNeverRepeats(t *testing.T) {
	s := t0.Add(250 * time.Millisecond)
	big := strings.Repeat("x", 70<<10)
	cases := []struct {
		name string
		run  func(t *testing.T, dir string, opts journal.AppendOptions) (before []string, last string)
	}{
		{"after a line over 64 KiB", func(t *testing.T, dir string, opts journal.AppendOptions) ([]string, string) {
			a := appendAt(t, dir, opts, fixedClock(s), "first")
			b := appendAt(t, dir, opts, fixedClock(s), big)
			return []string{a, b}, appendAt(t, dir, opts, fixedClock(s), "after the long one")
		}},
		{"lock wait across a second", func(t *testing.T, dir string, opts journal.AppendOptions) ([]string, string) {
			before := []string{appendAt(t, dir, opts, fixedClock(s), "one"), appendAt(t, dir, opts, fixedClock(s), "two")}
			// The late appender reads the clock (second s), then waits for
			// the lock while others append 140 KiB in the next second.
			late := func() time.Time {
				for i := 0; i < 2; i++ {
					before = append(before, appendAt(t, dir, opts, fixedClock(s.Add(time.Second)), big))
				}
				return s
			}
			return before, appendAt(t, dir, opts, late, "late")
		}},
		{"clock steps back", func(t *testing.T, dir string, opts journal.AppendOptions) ([]string, string) {
			before := []string{appendAt(t, dir, opts, fixedClock(s), "one")}
			for i := 1; i <= 3; i++ {
				before = append(before, appendAt(t, dir, opts, fixedClock(s.Add(time.Duration(i)*time.Second)), big))
			}
			return before, appendAt(t, dir, opts, fixedClock(s.Add(100*time.Millisecond)), "stepped back")
		}},
		{"second's lines archived", func(t *testing.T, dir string, opts journal.AppendOptions) ([]string, string) {
			before := []string{appendAt(t, dir, opts, fixedClock(s), "one"), appendAt(t, dir, opts, fixedClock(s), "two")}
			name := journal.FileName(s)
			if err := os.MkdirAll(filepath.Join(dir, "archive"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, "archive", name)); err != nil {
				t.Fatal(err)
			}
			return before, appendAt(t, dir, opts, fixedClock(s), "after compaction")
		}},
		{"archived, then the clock steps back", func(t *testing.T, dir string, opts journal.AppendOptions) ([]string, string) {
			before := []string{appendAt(t, dir, opts, fixedClock(s), "one")}
			name := journal.FileName(s)
			if err := os.MkdirAll(filepath.Join(dir, "archive"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, "archive", name)); err != nil {
				t.Fatal(err)
			}
			before = append(before, appendAt(t, dir, opts, fixedClock(s.Add(time.Second)), "next second"))
			return before, appendAt(t, dir, opts, fixedClock(s), "stepped back")
		}},
		{"high-water file lost", func(t *testing.T, dir string, opts journal.AppendOptions) ([]string, string) {
			before := []string{appendAt(t, dir, opts, fixedClock(s), "one"), appendAt(t, dir, opts, fixedClock(s), big)}
			if opts.SequenceFile != "" {
				if err := os.WriteFile(opts.SequenceFile, []byte("garbage"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			return before, appendAt(t, dir, opts, fixedClock(s), "after the loss")
		}},
	}
	for _, setup := range sequenceSetups {
		for _, tc := range cases {
			t.Run(setup.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				before, last := tc.run(t, dir, setup.opts(t))
				for _, id := range before {
					if id == last {
						t.Fatalf("uuid %s handed out twice", last)
					}
				}
				if got := distinctUUIDs(t, dir); got != len(before)+1 {
					t.Fatalf("%d distinct uuids, want %d", got, len(before)+1)
				}
			})
		}
	}
}

// TestAppendSequenceMonotonic: within a second the sequence only grows,
// also when the clock steps back into it.
func TestAppendSequenceMonotonic(t *testing.T) {
	for _, setup := range sequenceSetups {
		t.Run(setup.name, func(t *testing.T) {
			dir, opts := t.TempDir(), setup.opts(t)
			var got []string
			for _, off := range []time.Duration{0, 0, time.Second, 0, 2 * time.Second, 0} {
				got = append(got, appendAt(t, dir, opts, fixedClock(t0.Add(off)), "r"))
			}
			want := []string{"_0001", "_0002", "T091501Z_alice_0001", "_0003", "T091502Z_alice_0001", "_0004"}
			for i := range want {
				if !strings.HasSuffix(got[i], want[i]) {
					t.Fatalf("uuid %d is %s, want …%s (all: %v)", i, got[i], want[i], got)
				}
			}
		})
	}
}

// TestAppendSequenceFileIsNotFollowed: a high-water file that is a symbolic
// link is not written through; the append still succeeds (a full scan
// numbers it) and its uuid is new.
func TestAppendSequenceFileIsNotFollowed(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	outside := filepath.Join(other, "outside")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	seq := filepath.Join(t.TempDir(), "alice")
	if err := os.Symlink(outside, seq); err != nil {
		t.Fatal(err)
	}
	opts := journal.AppendOptions{NoSync: true, SequenceFile: seq}
	a := appendAt(t, dir, opts, fixedClock(t0), "one")
	b := appendAt(t, dir, opts, fixedClock(t0), "two")
	if a == b {
		t.Fatalf("uuid %s handed out twice", a)
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep" {
		t.Fatalf("outside file now %q", data)
	}
}

// TestAppendWithoutUsableSequenceFile: a sequence file that cannot be
// created (here its directory is a file) does not stop appends.
func TestAppendWithoutUsableSequenceFile(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := journal.AppendOptions{NoSync: true, SequenceFile: filepath.Join(blocker, "alice")}
	a := appendAt(t, dir, opts, fixedClock(t0), "one")
	b := appendAt(t, dir, opts, fixedClock(t0), strings.Repeat("x", 70<<10))
	c := appendAt(t, dir, opts, fixedClock(t0), "three")
	if a == b || b == c || a == c {
		t.Fatalf("uuids %s %s %s repeat", a, b, c)
	}
}
