package memsync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/memsync/memsync/journal"
)

// Disk is how the engine writes its own files (cursors, outbox, rejects).
// Tests substitute one that fails like a full disk.
type Disk interface {
	// WriteAtomic replaces path with data: temp file, fsync, rename, fsync
	// of the directory. On error the old file is intact.
	WriteAtomic(path string, data []byte) error
	// Append adds data to the end of path (creating it) and fsyncs. On error
	// the file is cut back to its old size, so no partial line remains.
	Append(path string, data []byte) error
	// Truncate empties path and fsyncs it.
	Truncate(path string) error
}

// OSDisk is the real file system.
type OSDisk struct{}

var _ Disk = OSDisk{}

// WriteAtomic implements Disk (journal.WriteAtomic).
func (OSDisk) WriteAtomic(path string, data []byte) error { return journal.WriteAtomic(path, data) }

// Append implements Disk.
func (OSDisk) Append(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if err != nil {
		_ = f.Truncate(st.Size())
		_ = f.Sync()
	}
	return err
}

// Truncate implements Disk.
func (OSDisk) Truncate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return err
	}
	return f.Sync()
}

// IsDiskFull reports whether err means the disk (or quota) is full.
func IsDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

func diskErr(what, path string, err error) error {
	if IsDiskFull(err) {
		return fmt.Errorf("%s %s: disk full: %w", what, path, err)
	}
	return fmt.Errorf("%s %s: %w", what, path, err)
}
