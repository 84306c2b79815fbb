package embedded

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/memsync"
)

// TestCheckStore: the store notices its file deleted or replaced under it
// (its open connections would go on writing to a file nobody sees).
func TestCheckStore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		lost   bool
	}{
		{"untouched", func(*testing.T, string) {}, false},
		{"directory removed", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"file replaced", func(t *testing.T, dir string) {
			other := t.TempDir()
			g2, err := Open(other, nil)
			if err != nil {
				t.Fatal(err)
			}
			g2.Close()
			if err := os.Rename(filepath.Join(other, FileName), filepath.Join(dir, FileName)); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			g, err := Open(dir, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			tc.change(t, dir)
			if err := g.CheckStore(); errors.Is(err, memsync.ErrStoreLost) != tc.lost {
				t.Fatalf("CheckStore = %v, want lost %v", err, tc.lost)
			}
		})
	}
}
