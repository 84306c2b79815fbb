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

// TestWalkedSourcesStayInside: for the formats that walk a directory
// (Basic Memory here), a note that is a symbolic link out of the source, a
// directory linked from outside, or a FIFO named like a note is not read
// (the import does not hang), and the report names the file; the regular
// note beside them is imported.
func TestWalkedSourcesStayInside(t *testing.T) {
	outside := t.TempDir()
	secret := "---\ntitle: Secret\n---\n- [fact] the outside secret\n"
	must(t, os.WriteFile(filepath.Join(outside, "secret.md"), []byte(secret), 0o644))
	for _, tc := range []struct {
		name string
		make func(t *testing.T, src string)
		skip string // the report names it
	}{
		{"note linked out", func(t *testing.T, src string) {
			must(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(src, "secret.md")))
		}, "secret.md"},
		{"directory linked out", func(t *testing.T, src string) { must(t, os.Symlink(outside, filepath.Join(src, "linked"))) }, ""},
		{"fifo", func(t *testing.T, src string) { must(t, syscall.Mkfifo(filepath.Join(src, "pipe.md"), 0o644)) }, "pipe.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			must(t, os.WriteFile(filepath.Join(src, "inside.md"), []byte("---\ntitle: Inside\n---\n- [fact] kept\n"), 0o644))
			tc.make(t, src)
			opts := repoFor(t, "basic-memory", src)
			done := make(chan struct{})
			var rep *Report
			var err error
			go func() { rep, err = importNow(context.Background(), opts); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the import hangs")
			}
			must(t, err)
			if rep.Imported != 2 {
				t.Fatalf("imported %d, want the inside note and its observation: %+v", rep.Imported, rep)
			}
			for _, l := range lines(t, opts) {
				if strings.Contains(l, "outside secret") {
					t.Fatalf("read from outside the source: %s", l)
				}
			}
			if tc.skip != "" {
				named := false
				for _, s := range rep.Skipped {
					named = named || s.Source == tc.skip
				}
				if !named {
					t.Errorf("the report does not name %s: %+v", tc.skip, rep.Skipped)
				}
			}
		})
	}
}
