package ledger

import (
	"syscall"
	"time"
)

// modTime is st's modification time.
func modTime(st *syscall.Stat_t) time.Time { return time.Unix(st.Mtimespec.Sec, st.Mtimespec.Nsec) }

// changeTime is st's status change time (what git records as ctime).
func changeTime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctimespec.Sec, st.Ctimespec.Nsec) }

// identify reads path's fileID without following a link; macOS file
// systems keep a birth time in every stat.
func identify(path string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fileID{}, err
	}
	return fileID{ino: st.Ino, born: st.Birthtimespec.Sec*1e9 + st.Birthtimespec.Nsec}, nil
}
