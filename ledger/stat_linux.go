package ledger

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// modTime is st's modification time.
func modTime(st *syscall.Stat_t) time.Time { return time.Unix(st.Mtim.Sec, st.Mtim.Nsec) }

// changeTime is st's status change time (what git records as ctime).
func changeTime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Sec, st.Ctim.Nsec) }

// identify reads path's fileID without following a link; the birth time
// comes from statx where the file system keeps one.
func identify(path string) (fileID, error) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &stx); err != nil {
		return fileID{}, err
	}
	id := fileID{ino: stx.Ino}
	if stx.Mask&unix.STATX_BTIME != 0 {
		id.born = stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
	}
	return id, nil
}
