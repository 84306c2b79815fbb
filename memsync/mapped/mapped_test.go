package mapped_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/memsync/mapped"
)

func TestFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one byte", []byte{7}},
		{"a page and a bit", bytes.Repeat([]byte("memsync "), 600)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, unmap, err := mapped.File(path)
			if err != nil {
				t.Fatal(err)
			}
			defer unmap()
			if !bytes.Equal(got, tc.data) {
				t.Fatalf("read %d bytes, want the file's %d", len(got), len(tc.data))
			}
		})
	}
}

// TestFileReplaced: bytes read before the file is replaced by a rename
// stay those of the file that was opened.
func TestFileReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "index")
	if err := os.WriteFile(path, []byte("first version"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, unmap, err := mapped.File(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	tmp := filepath.Join(dir, "index.tmp")
	if err := os.WriteFile(tmp, []byte("SECOND VERSION"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if string(got) != "first version" {
		t.Fatalf("after the rename the bytes read %q", got)
	}
}

func TestFileMissing(t *testing.T) {
	_, _, err := mapped.File(filepath.Join(t.TempDir(), "none"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want one that is fs.ErrNotExist", err)
	}
}
