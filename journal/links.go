package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// LinkError says that a path memsync was about to read or write is, or
// passes through, a symbolic link. memsync never follows one inside a
// memory repository: it could lead out of it.
type LinkError struct {
	Path string // the link
}

func (e *LinkError) Error() string {
	return e.Path + " is a symbolic link: memsync does not follow links inside the repository (they may lead out of it)"
}

// NotDirError says that a path memsync expected to be a directory is not.
type NotDirError struct {
	Path string
}

func (e *NotDirError) Error() string { return e.Path + " is not a directory" }

// RealDir checks that dir, a directory at or below root, is reached from
// root through real directories only: no path element below root is a
// symbolic link (root itself may be one). An element that does not exist
// ends the check without error: there is nothing to read there, and
// os.MkdirAll would create real directories. An element that exists but is
// not a directory is a *NotDirError; a link is a *LinkError.
func RealDir(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not inside %s", dir, root)
	}
	if rel == "." {
		return nil
	}
	p := root
	for _, elem := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, elem)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.Mode()&os.ModeSymlink != 0:
			return &LinkError{Path: p}
		case !fi.IsDir():
			return &NotDirError{Path: p}
		}
	}
	return nil
}

// OpenNoFollow opens path with flag like os.OpenFile, refusing (a
// *LinkError) when path itself is a symbolic link.
func OpenNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
	if err != nil && errors.Is(err, syscall.ELOOP) {
		return nil, &LinkError{Path: path}
	}
	return f, err
}
