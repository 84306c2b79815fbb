package memsync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// tmpSuffix ends the name of every file WriteAtomic is writing:
// <name>.<pid>-<random>.memsync-tmp, unique to the writer, so that two
// processes replacing one file (two daemons on a repository, a rebuild
// beside a daemon) never write, rename or remove each other's temp file.
const tmpSuffix = ".memsync-tmp"

// WriteAtomic implements Disk.
func (OSDisk) WriteAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+"."+strconv.Itoa(os.Getpid())+"-*"+tmpSuffix)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// staleTemp is the age past which a temp file of ours is swept even when
// the pid in its name is alive (a recycled pid): a write takes far less.
const staleTemp = time.Hour

// sweepTemp removes the temp files a crashed writer left in dir: those of
// our pattern whose writer is gone (the pid in the name is not running, or
// the name has no pid: the old fixed name) or that are older than
// staleTemp. A live process's file is left alone: it is being written.
func sweepTemp(dir string, now time.Time) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, tmpSuffix) {
			continue
		}
		if pid, ok := tempPID(name); ok && processAlive(pid) {
			if fi, err := e.Info(); err != nil || now.Sub(fi.ModTime()) < staleTemp {
				continue
			}
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// tempPID is the writer's pid in a temp file name WriteAtomic made.
func tempPID(name string) (int, bool) {
	name = strings.TrimSuffix(name, tmpSuffix)
	dash := strings.LastIndexByte(name, '-')
	if dash < 0 {
		return 0, false
	}
	dot := strings.LastIndexByte(name[:dash], '.')
	if dot < 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(name[dot+1 : dash])
	return pid, err == nil && pid > 0
}

// processAlive says whether a process with that pid exists on this host.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
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
