//go:build linux || darwin || freebsd || netbsd || openbsd

package mapped

import (
	"fmt"
	"os"
	"syscall"
)

// File returns the bytes of the file at path, mapped read-only, and the
// function that unmaps them (after which the bytes must not be used). An
// empty file is returned as no bytes and a no-op.
func File(path string) (data []byte, unmap func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := info.Size()
	if size == 0 {
		return nil, func() {}, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("mapped: %s: %d bytes do not fit in memory", path, size)
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mapped: map %s: %w", path, err)
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
