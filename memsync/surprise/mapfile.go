package surprise

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile returns the bytes of the file at path, mapped read-only, and
// the function that unmaps them: the index file is read in place (its
// records, postings and int8 vectors are used where they lie), with no
// copy into the heap; a process that reads a 1.3 MB index (5,000 records
// with vectors) would otherwise fault in and zero as many fresh heap pages
// first.
//
// writeIndex replaces the file by a rename, never in place, so the mapped
// bytes do not change under a reader; a file truncated in place by hand
// while a process reads it would fault that process (SIGBUS), as it would
// any program that maps files.
func mapFile(path string) (data []byte, unmap func(), err error) {
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
	if size <= 0 || size != int64(int(size)) {
		return nil, nil, fmt.Errorf("surprise: %s: size %d", path, size)
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("surprise: map %s: %w", path, err)
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
