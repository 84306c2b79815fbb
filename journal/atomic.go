package journal

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TempSuffix ends the name of every temporary file WriteAtomic writes:
// <name>.<pid>-<random>.memsync-tmp, unique to the writer, so that two
// processes replacing one file (two daemons on a repository, a rebuild
// beside a daemon, a hook installer beside a person's editor) never write,
// rename or remove each other's temporary file, and a sweeper can tell a
// dead writer's leftover from a live writer's file (StaleTemp).
const TempSuffix = ".memsync-tmp"

// staleTemp is the age past which a temporary file is stale even when the
// pid in its name is alive (a recycled pid): a write takes far less.
const staleTemp = time.Hour

// WriteAtomic replaces path with data, whole or not at all: a temporary
// file beside it (TempSuffix), written and fsynced, renamed over path,
// then the directory fsynced so that the rename survives a power cut. The
// file keeps path's permission bits when path exists (0644 when not);
// path's directory is created when missing. It and the lighter Replace,
// ReplaceDerived and ReplaceDerivedWith below are the one way memsync
// replaces a file: state, outbox and rejects, cache pages, compaction's
// pages, the exchange's attributes, hook settings, the daemon's summary,
// the surprise gate's and the embedded store's vector indexes, the
// consolidation stamp, the benchmark report.
func WriteAtomic(path string, data []byte) error {
	if err := Replace(path, data); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// Replace is WriteAtomic but for the directory's fsync: for a caller that
// replaces many files of one directory and fsyncs it once (SyncDir).
func Replace(path string, data []byte) error { return replace(path, data, true) }

// ReplaceDerived replaces path with data, whole or not at all, like
// Replace but without any fsync: for derived files (the agents' snapshot
// caches) that are regenerated from the graph whenever they are missing or
// out of date. After a crash such a file holds its old or its new content,
// never a mix (the rename is atomic). On ext4 (auto_da_alloc, the default)
// the data of a file renamed over another is flushed with the rename; on
// other file systems a power cut may leave it empty. Either way the caller
// must rewrite it when it next runs (the daemon walks every agent on start).
func ReplaceDerived(path string, data []byte) error { return replace(path, data, false) }

// ReplaceDerivedWith is ReplaceDerived for a file too large to build in
// memory first: write streams the new content into the temporary file
// (an error from it leaves path as it was).
func ReplaceDerivedWith(path string, write func(w io.Writer) error) error {
	return replaceWith(path, write, false)
}

func replace(path string, data []byte, sync bool) error {
	return replaceWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, sync)
}

func replaceWith(path string, write func(w io.Writer) error, sync bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+"."+strconv.Itoa(os.Getpid())+"-*"+TempSuffix)
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil && sync {
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
	}
	return err
}

// SyncDir fsyncs a directory, so that a new name or a rename in it is
// durable. A file system that cannot sync a directory (EINVAL) is not an
// error: the files themselves are synced.
func SyncDir(dir string) error {
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

// SweepTemp removes the temporary files crashed writers left in dir
// (StaleTemp), and any file whose name ends in one of old (an older
// memsync's fixed temporary names); a live writer's file is left alone.
// It returns the paths it removed. A directory it cannot read is not an
// error: there is nothing to sweep.
func SweepTemp(dir string, now time.Time, old ...string) (removed []string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		stale := slices.ContainsFunc(old, func(suffix string) bool { return strings.HasSuffix(name, suffix) })
		if !stale {
			fi, err := e.Info()
			stale = err == nil && StaleTemp(name, fi.ModTime(), now)
		}
		if !stale {
			continue
		}
		p := filepath.Join(dir, name)
		if os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// StaleTemp reports whether name (a file name, modified at modTime) is a
// temporary file of WriteAtomic's that a sweeper may remove at now: its
// writer is gone (the pid in its name is not running on this host, or the
// name carries no pid: an older memsync's fixed name), or it is older than
// an hour. A live writer's file is not stale: it is being written.
func StaleTemp(name string, modTime, now time.Time) bool {
	if !strings.HasSuffix(name, TempSuffix) {
		return false
	}
	if pid, ok := tempPID(name); ok && processAlive(pid) {
		return now.Sub(modTime) >= staleTemp
	}
	return true
}

// tempPID is the writer's pid in a temporary file name WriteAtomic made.
func tempPID(name string) (int, bool) {
	name = strings.TrimSuffix(name, TempSuffix)
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
