package embedded

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"syscall"

	"go.uber.org/zap"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memsync/memsync/memsync"
)

// ErrDiskFull marks a write that failed because the disk (or a size limit
// on the database) is full. Such errors also wrap memsync.ErrUnavailable:
// nothing is wrong with the records, the batch can be retried once there is
// room.
var ErrDiskFull = errors.New("disk full")

// ErrLocked marks a write that waited out the busy timeout because another
// process held the database. It also wraps memsync.ErrUnavailable.
var ErrLocked = errors.New("database locked by another process")

var errBadConn = driver.ErrBadConn

// sqliteCode is the primary SQLite result code carried by err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// isBusy reports whether err is SQLite's "database is locked" (BUSY or
// LOCKED): another connection holds what this one needs.
func isBusy(err error) bool {
	code := sqliteCode(err)
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

// wrap adds the operation and classifies err: what a retry may cure wraps
// memsync.ErrUnavailable, disk full also ErrDiskFull, a damaged file says
// how to repair it.
func (g *Graph) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	code := sqliteCode(err)
	switch {
	case code == sqlite3.SQLITE_FULL || errors.Is(err, syscall.ENOSPC):
		g.lg.Error("embedded graph: disk full", zap.String("op", op), zap.Error(err))
		return fmt.Errorf("embedded: %s: %w writing %s (%w): %w", op, ErrDiskFull, g.path, memsync.ErrUnavailable, err)
	case isBusy(err):
		return fmt.Errorf("embedded: %s: %w (%w): %w", op, ErrLocked, memsync.ErrUnavailable, err)
	case code == sqlite3.SQLITE_IOERR || code == sqlite3.SQLITE_CANTOPEN ||
		code == sqlite3.SQLITE_READONLY || code == sqlite3.SQLITE_NOMEM ||
		errors.Is(err, errBadConn):
		return fmt.Errorf("embedded: %s: %s (%w): %w", op, g.path, memsync.ErrUnavailable, err)
	case code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("embedded: %s: %s is damaged; delete it and run memsync rebuild: %w", op, g.path, err)
	}
	return fmt.Errorf("embedded: %s: %w", op, err)
}
