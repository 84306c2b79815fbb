package memsync

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
)

// spillSet is one unlinked temporary file per partition of the uuids, to
// which verify's single read of the journals (and its walk of the graph)
// appends fixed or length-prefixed entries, and from which each partition
// is read back on its own. What verify holds in memory is then one
// partition's entries, not the repository's; what it reads of the journals
// is each line once, whatever the number of partitions.
//
// Appends come from several goroutines, each through its own spillWriter;
// a failed write (a full disk) is kept and returned by every later call, so
// that no partition is read back short.
type spillSet struct {
	dir   string
	mu    sync.Mutex
	files []*os.File
	w     []*bufio.Writer
	n     []int64 // bytes appended to each partition
	err   error   // the first failed write
}

// createSpillFile creates an unlinked temporary file in dir (a variable so
// that a test can hand verify a file whose writes fail as on a full disk).
var createSpillFile = func(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".verify-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// newSpillSet creates parts unlinked files in dir (os.TempDir() when "").
func newSpillSet(dir string, parts int) (*spillSet, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	s := &spillSet{dir: dir, n: make([]int64, parts)}
	for range parts {
		f, err := createSpillFile(dir)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("spill file in %s: %w", dir, err)
		}
		s.files = append(s.files, f)
		s.w = append(s.w, bufio.NewWriterSize(f, 64<<10))
	}
	return s, nil
}

// Close releases the files (nothing is left on disk: they are unlinked).
func (s *spillSet) Close() {
	for _, f := range s.files {
		f.Close()
	}
}

// write appends b to partition p.
func (s *spillSet) write(p int, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := s.w[p].Write(b); err != nil {
		s.err = fmt.Errorf("write spill file in %s: %w", s.dir, err)
		return s.err
	}
	s.n[p] += int64(len(b))
	return nil
}

// finish flushes every partition; after it, read may be called.
func (s *spillSet) finish() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	for _, w := range s.w {
		if err := w.Flush(); err != nil {
			s.err = fmt.Errorf("write spill file in %s: %w", s.dir, err)
			return s.err
		}
	}
	return nil
}

// read returns a reader of every byte partition p was given, which fails
// if the file holds fewer. Readers of one partition, or of several, may
// be used at once (each reads at its own offset).
func (s *spillSet) read(p int) io.Reader {
	return &exactReader{r: bufio.NewReaderSize(io.NewSectionReader(s.files[p], 0, s.n[p]), 64<<10), left: s.n[p], dir: s.dir}
}

// size is how many bytes partition p was given.
func (s *spillSet) size(p int) int64 { return s.n[p] }

// exactReader reads left bytes and reports a short file as an error, not
// as the end of the partition.
type exactReader struct {
	r    io.Reader
	left int64
	dir  string
}

func (e *exactReader) Read(b []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	n, err := e.r.Read(b)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, fmt.Errorf("read spill file in %s: %d bytes short", e.dir, e.left)
	}
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("read spill file in %s: %w", e.dir, err)
	}
	return n, nil
}

// spillWriter buffers one goroutine's entries for each partition and hands
// them to the set 32 KiB at a time.
type spillWriter struct {
	s   *spillSet
	buf [][]byte
}

const spillChunk = 32 << 10

func (s *spillSet) writer() *spillWriter {
	return &spillWriter{s: s, buf: make([][]byte, len(s.files))}
}

// add appends entry b (already encoded) to partition p.
func (w *spillWriter) add(p int, b []byte) error {
	w.buf[p] = append(w.buf[p], b...)
	if len(w.buf[p]) >= spillChunk {
		return w.flushPart(p)
	}
	return nil
}

func (w *spillWriter) flushPart(p int) error {
	if len(w.buf[p]) == 0 {
		return nil
	}
	err := w.s.write(p, w.buf[p])
	w.buf[p] = w.buf[p][:0]
	return err
}

// flush hands every buffered entry to the set.
func (w *spillWriter) flush() error {
	for p := range w.buf {
		if err := w.flushPart(p); err != nil {
			return err
		}
	}
	return nil
}
