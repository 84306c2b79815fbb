package compaction

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
)

// oldTmpSuffix ended the temporary files of compactions before
// journal.WriteAtomic (one fixed name per file); a leftover is still swept.
const oldTmpSuffix = ".compact.tmp"

// lockJournal opens path and holds the exclusive lock journal.Append takes.
// A file replaced or removed while we waited is opened again, as Append
// does, so the lock always covers the file the path names. A missing file
// is (nil, nil).
func lockJournal(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if err := journal.Flock(f, syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		now, err := os.Stat(path)
		if err == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
}

// sweepTemp removes temporary files crashed writers left in dirs
// (journal.SweepTemp, and an older compaction's fixed names).
func sweepTemp(lg *zap.Logger, now time.Time, dirs ...string) {
	for _, dir := range dirs {
		for _, p := range journal.SweepTemp(dir, now, oldTmpSuffix) {
			lg.Info("removed a temporary file left by an interrupted compaction", zap.String("path", p))
		}
	}
}

// repairTail cuts a torn last line (bytes after the last newline) off the
// archive at path. Archives are written only by compaction, under its lock,
// and a line is removed from its journal only after the archive holding it
// was fsynced, so a torn tail is a copy that never completed; the cut bytes
// are still kept beside the archive, in case a person wrote them.
func repairTail(lg *zap.Logger, path string, now time.Time) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	keep, err := journal.CompleteLength(f, size)
	if err != nil || keep == size {
		return err
	}
	torn := make([]byte, size-keep)
	if _, err := f.ReadAt(torn, keep); err != nil && err != io.EOF {
		return err
	}
	aside := fmt.Sprintf("%s.torn-%d", path, now.UnixNano())
	if err := journal.WriteAtomic(aside, torn); err != nil {
		return fmt.Errorf("keep torn tail of %s: %w", path, err)
	}
	if err := f.Truncate(keep); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	lg.Warn("archive ended in a torn line (an interrupted compaction): cut it; the lines are still in the journal",
		zap.String("path", path), zap.Int64("offset", keep), zap.Int64("bytes", size-keep), zap.String("kept_as", aside))
	return nil
}
