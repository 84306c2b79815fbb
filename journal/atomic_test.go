package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// WriteAtomic replaces the file whole, keeps its permission bits, creates
// the directory, and leaves no temporary file behind.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new", "settings.json")
	if err := WriteAtomic(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v, %v; want mode 0644", st, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "two" {
		t.Fatalf("read %q, %v; want two", data, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v after a replace, want 0600 kept", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("directory holds %v, want the file alone", entries)
	}
}

// ReplaceDerivedWith streams the new content; a failed write leaves the
// old file whole and no temporary file behind.
func TestReplaceDerivedWith(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vectors.idx")
	write := func(parts ...string) func(w io.Writer) error {
		return func(w io.Writer) error {
			for _, p := range parts {
				if p == "FAIL" {
					return errors.New("disk on fire")
				}
				if _, err := io.WriteString(w, p); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := ReplaceDerivedWith(path, write("one", "two")); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceDerivedWith(path, write("three", "FAIL")); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("failed write returned %v", err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "onetwo" {
		t.Fatalf("read %q, %v; want the first content kept", data, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("directory holds %v, want the file alone", entries)
	}
}

// Writers replacing one file at once never take each other's temporary
// file: every call succeeds and the file is one of theirs, whole.
func TestWriteAtomicConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	var wg sync.WaitGroup
	errs := make(chan error, 8*50)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				errs <- WriteAtomic(path, []byte(strings.Repeat(fmt.Sprint(w), 1000+i)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	if len(data) < 1000 || strings.Count(string(data), string(data[:1])) != len(data) {
		t.Fatalf("file is torn or mixed: %d bytes", len(data))
	}
}

// StaleTemp: a temporary file is the sweeper's once its writer is gone or
// it is an hour old; a live writer's recent file, and any other name, never.
func TestStaleTemp(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	live := os.Getpid()
	for _, tc := range []struct {
		name string
		age  time.Duration
		want bool
	}{
		{fmt.Sprintf("state.json.%d-123%s", live, TempSuffix), time.Minute, false},
		{fmt.Sprintf("state.json.%d-123%s", live, TempSuffix), 2 * time.Hour, true},
		{fmt.Sprintf("state.json.%d-123%s", dead.Process.Pid, TempSuffix), 0, true},
		{"state.json" + TempSuffix, 0, true}, // an older memsync's fixed name
		{"state.json.x-123" + TempSuffix, 0, true},
		{"state.json", 2 * time.Hour, false},
		{fmt.Sprintf("2026-11-20.%d-123.jsonl", dead.Process.Pid), 2 * time.Hour, false},
	} {
		if got := StaleTemp(tc.name, now.Add(-tc.age), now); got != tc.want {
			t.Errorf("StaleTemp(%q, %v old) = %v, want %v", tc.name, tc.age, got, tc.want)
		}
	}
}

// SweepTemp removes a dead writer's temporary file and an old fixed name,
// and leaves a live writer's file and every other file alone.
func TestSweepTemp(t *testing.T) {
	dir := t.TempDir()
	dead := "state.json.999999999-1" + TempSuffix
	live := fmt.Sprintf("state.json.%d-1%s", os.Getpid(), TempSuffix)
	for _, name := range []string{dead, live, "MEMORY.md.compact.tmp", "state.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed := SweepTemp(dir, time.Now(), ".compact.tmp")
	if len(removed) != 2 {
		t.Fatalf("removed %v, want the dead writer's file and the old name", removed)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "state.json "+live {
		t.Fatalf("left %v", names)
	}
	if SweepTemp(filepath.Join(dir, "missing"), time.Now()) != nil {
		t.Fatal("a missing directory swept something")
	}
}
