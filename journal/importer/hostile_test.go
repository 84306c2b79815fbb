package importer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportNeverLeavesItsSource is issue 51 §4: in directory mode, a
// memory.jsonl or memories.json that is a symbolic link out of the source
// directory is not followed, and one that is a FIFO or a device is not
// read (the import neither hangs nor reads /dev/zero); each is said in
// the report. A link that stays inside the directory is read.
func TestImportNeverLeavesItsSource(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	secret := `{"type":"entity","name":"Outside","entityType":"secret","observations":["the outside secret"]}` + "\n"
	if err := os.WriteFile(outside, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, format, file string
		make               func(t *testing.T, path string)
		want               int // records imported
	}{
		{"mcp-memory link out", "mcp-memory", "memory.jsonl", func(t *testing.T, p string) { must(t, os.Symlink(outside, p)) }, 0},
		{"mem0 link out", "mem0", "memories.json", func(t *testing.T, p string) { must(t, os.Symlink(outside, p)) }, 0},
		{"mcp-memory fifo", "mcp-memory", "memory.jsonl", func(t *testing.T, p string) { must(t, syscall.Mkfifo(p, 0o644)) }, 0},
		{"mem0 fifo", "mem0", "memories.jsonl", func(t *testing.T, p string) { must(t, syscall.Mkfifo(p, 0o644)) }, 0},
		{"mcp-memory /dev/zero", "mcp-memory", "memory.jsonl", func(t *testing.T, p string) { must(t, os.Symlink("/dev/zero", p)) }, 0},
		{"mem0 /dev/zero", "mem0", "memories.json", func(t *testing.T, p string) { must(t, os.Symlink("/dev/zero", p)) }, 0},
		{"mcp-memory link inside", "mcp-memory", "memory.jsonl", func(t *testing.T, p string) {
			must(t, os.WriteFile(filepath.Join(filepath.Dir(p), "real.jsonl"), []byte(secret), 0o644))
			must(t, os.Symlink("real.jsonl", p))
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			tc.make(t, filepath.Join(src, tc.file))
			opts := repoFor(t, tc.format, src)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			type answer struct {
				rep *Report
				err error
			}
			done := make(chan answer, 1)
			go func() { rep, err := importNow(ctx, opts); done <- answer{rep, err} }()
			var a answer
			select {
			case a = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the import hangs")
			}
			if a.err != nil {
				t.Fatalf("import: %v", a.err)
			}
			if a.rep.Imported != tc.want {
				t.Fatalf("imported %d, want %d: %+v", a.rep.Imported, tc.want, a.rep)
			}
			if tc.want == 0 && len(a.rep.Skipped)+len(a.rep.Unparsable) == 0 {
				t.Errorf("the report does not say why nothing was read: %+v", a.rep)
			}
			for _, l := range lines(t, opts) {
				if tc.want == 0 && strings.Contains(l, "outside secret") {
					t.Fatalf("read from outside the source: %s", l)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
