package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Line is one complete journal line as the Reader found it. Exactly one of
// Record and Err is meaningful: Err is a *FieldError saying why the line can
// never be projected.
type Line struct {
	Number int   // 1-based line number in the file
	Offset int64 // byte offset of the line's first byte
	End    int64 // byte offset just past its newline
	Record Record
	Err    error
}

// LineError is a rejected line with the place it was found.
type LineError struct {
	Path   string
	Line   int
	Offset int64
	Err    error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Reader yields the complete lines of a journal from a starting offset. A last
// line without its newline is never yielded: it may still be being written.
// Blank lines are skipped (they still count as lines), a trailing \r is
// dropped, and a line over MaxLineBytes is rejected without being held in
// memory whole.
type Reader struct {
	br     *bufio.Reader
	offset int64
	line   int

	// The line being read. It survives an io.EOF so that a Reader over a
	// growing file resumes the partial line where it stopped instead of
	// taking its remainder for a line of its own.
	buf     []byte
	size    int64
	tooLong bool
}

// NewReader reads r, whose first byte is at offset in the file and is the
// first byte of line number line+1.
func NewReader(r io.Reader, offset int64, line int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), offset: offset, line: line}
}

// Offset is the offset just past the last complete line returned.
func (r *Reader) Offset() int64 { return r.offset }

// LineNumber is the number of the last complete line returned or skipped.
func (r *Reader) LineNumber() int { return r.line }

// Next returns the next complete, non-blank line, or io.EOF when only a
// partial line (or nothing) is left. Next may be called again after io.EOF
// once the source has grown. Other errors come from the underlying reader.
func (r *Reader) Next() (Line, error) {
	for {
		raw, size, tooLong, err := r.readLine()
		if err != nil {
			return Line{}, err
		}
		start := r.offset
		r.offset += size
		r.line++
		if tooLong {
			return Line{Number: r.line, Offset: start, End: r.offset,
				Err: &FieldError{Reason: fmt.Sprintf("line is %d bytes, over the 1 MiB limit", size-1)}}, nil
		}
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		l := Line{Number: r.line, Offset: start, End: r.offset}
		l.Record, l.Err = Parse(raw)
		return l, nil
	}
}

// readLine returns the next line without its newline and the bytes it
// occupies with the newline. A line longer than MaxLineBytes (+1 for a \r) is
// consumed up to its newline and reported as tooLong with no content.
// io.EOF means no complete line remains yet: the bytes of the partial line
// are kept, and the next call carries on with them if the source grows.
func (r *Reader) readLine() (line []byte, size int64, tooLong bool, err error) {
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.size += int64(len(chunk))
		if !r.tooLong {
			if len(r.buf)+len(chunk) > MaxLineBytes+2 {
				r.tooLong = true
				r.buf = r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			line, size, tooLong = r.buf, r.size, r.tooLong
			r.buf, r.size, r.tooLong = r.buf[:0], 0, false
			if tooLong {
				return nil, size, true, nil
			}
			return line[:len(line)-1], size, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, 0, false, err
		}
	}
}

// EachLine calls fn for every complete line of the journal file at path,
// opened without following a symbolic link, and stops at fn's first
// error. The error of opening path is returned as it is.
func EachLine(path string, fn func(Line) error) error {
	f, err := OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	r := NewReader(f, 0, 0)
	for {
		l, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(l); err != nil {
			return err
		}
	}
}
