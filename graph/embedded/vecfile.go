package embedded

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/mapped"
)

// The vector index file: a process that loads the vector index (vecIndex)
// from the vector log writes what it loaded to a file beside the store,
// so that the next process (each `memsync search` is one) maps it instead
// of reading the log record by record (and computing every sign code),
// then loads from the log only the records written since. The file is a
// cache: it names the store's generation, log epoch and model version it
// was built for, and a file that does not match the store (a Drop, a new
// log, another model), or cannot be read, is ignored and written again.
//
//	"MSVECIX3", uint32 len + key, uint32 dim, int64 through (the log's
//	bytes loaded), uint32 groups,
//	then per group: uint32 len + name, uint32 n, zero bytes up to a
//	multiple of 8 from the file's start, n int64 ids,
//	n × signWords(dim) uint64 sign codes, n float32 scales, n × dim int8
//
// all little-endian (the first format, "MSVECIX1", had no sign codes, and
// the second's through was a memory id: a reader takes either for a file
// of another format, and writes it again).
// The file is mapped into memory where the system can (vecmap_unix.go)
// and, on a little-endian machine, its aligned arrays are the index's
// own, not copies: a search through the sign codes touches the codes and
// the int8 rows of its candidates only, so a process that searches once
// (`memsync search`) reads a small part of the file.
//
// It is written to a temporary file and renamed, so a
// reader never sees half of one.
const (
	vecFileName  = "vectors.idx"
	vecFileMagic = "MSVECIX3"
	// vecFileRewrite is how many records a load must have read from the
	// log before it writes the file again: fewer are cheap to read.
	vecFileRewrite = 2048
)

// errVecFile is a file that is not an index file of this format.
var errVecFile = errors.New("not a vector index file")

// writeVecFile replaces path with x (built for key, dim), streamed
// through a small buffer: at 1M vectors the file is 300 MB, and building
// it in memory first (as this did) doubled a first search's peak. It is a
// derived file (journal.ReplaceDerivedWith: no fsync; a lost one is built
// again from the log).
func writeVecFile(path string, x *vecIndex, dim int) error {
	return journal.ReplaceDerivedWith(path, func(f io.Writer) error { return encodeVecFile(f, x, dim) })
}

// encodeVecFile writes x's index file to f.
func encodeVecFile(f io.Writer, x *vecIndex, dim int) error {
	w := &countingWriter{w: bufio.NewWriterSize(f, 1<<16)}
	le := binary.LittleEndian
	var scratch []byte
	put := func(b []byte) { w.write(b) }
	put32 := func(v uint32) { put(le.AppendUint32(scratch[:0], v)) }
	put([]byte(vecFileMagic))
	put32(uint32(len(x.key)))
	put([]byte(x.key))
	put32(uint32(dim))
	put(le.AppendUint64(scratch[:0], uint64(x.through)))
	put32(uint32(len(x.groups)))
	for name, g := range x.groups {
		put32(uint32(len(name)))
		put([]byte(name))
		put32(uint32(len(g.ids)))
		put(make([]byte, pad8(int(w.n))))
		// The arrays a chunk at a time, through scratch.
		const chunk = 4096
		for i := 0; i < len(g.ids); i += chunk {
			scratch = scratch[:0]
			for _, id := range g.ids[i:min(i+chunk, len(g.ids))] {
				scratch = le.AppendUint64(scratch, uint64(id))
			}
			put(scratch)
		}
		for i := 0; i < len(g.codes); i += chunk {
			scratch = scratch[:0]
			for _, c := range g.codes[i:min(i+chunk, len(g.codes))] {
				scratch = le.AppendUint64(scratch, c)
			}
			put(scratch)
		}
		for i := 0; i < len(g.scale); i += chunk {
			scratch = scratch[:0]
			for _, f := range g.scale[i:min(i+chunk, len(g.scale))] {
				scratch = le.AppendUint32(scratch, math.Float32bits(f))
			}
			put(scratch)
		}
		if len(g.q) > 0 {
			put(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(g.q))), len(g.q)))
		}
	}
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// countingWriter writes to w, counting the bytes and keeping the first
// error (every later write is skipped).
type countingWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (c *countingWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	k, err := c.w.Write(b)
	c.n += int64(k)
	c.err = err
}

// readVecFile reads the index file at path into x if it was built for key
// and dim; false (x untouched) when it was not, or is missing or damaged.
// The file stays mapped, its arrays x's own, until x starts again
// (x.release).
func readVecFile(path string, x *vecIndex, key string, dim int) (ok bool, err error) {
	b, release, err := mapped.File(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() {
		if !ok {
			release()
		}
	}()
	r := vecReader{b: b}
	if string(r.next(len(vecFileMagic))) != vecFileMagic {
		return false, errVecFile
	}
	if string(r.next(int(r.u32()))) != key || int(r.u32()) != dim {
		return false, nil // another generation, epoch or model: stale
	}
	w := signWords(dim)
	through := int64(r.u64())
	groups := map[string]*groupVecs{}
	for n := int(r.u32()); n > 0 && r.err == nil; n-- {
		name := string(r.next(int(r.u32())))
		count := int(r.u32())
		if count < 0 || count > len(r.b) {
			return false, errVecFile
		}
		if pad := r.next(pad8(r.at)); r.err == nil && !allZero(pad) {
			return false, errVecFile
		}
		ids := r.next(8 * count)
		codes := r.next(8 * count * w)
		scales := r.next(4 * count)
		q := r.next(count * dim)
		if r.err != nil {
			break
		}
		g := &groupVecs{
			ids:   viewOrCopy(ids, binary.LittleEndian.Uint64, func(v uint64) int64 { return int64(v) }),
			codes: viewOrCopy(codes, binary.LittleEndian.Uint64, func(v uint64) uint64 { return v }),
			scale: viewOrCopy(scales, binary.LittleEndian.Uint32, math.Float32frombits),
			// The file's bytes are the int8 rows: no copy. A later load
			// appends to them, which copies once (every view's capacity
			// is its length).
			q: viewOrCopy(q, func(b []byte) byte { return b[0] }, func(v byte) int8 { return int8(v) }),
		}
		groups[name] = g
	}
	if r.err != nil || len(r.b) != r.at {
		return false, errVecFile
	}
	if x.release != nil {
		x.release()
	}
	x.key, x.through, x.groups, x.release = key, through, groups, release
	return true, nil
}

// pad8 is how many bytes take offset at to a multiple of 8.
func pad8(at int) int { return (8 - at%8) % 8 }

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// littleEndian is whether this machine stores numbers as the file does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// viewOrCopy is the little-endian array of Ts in b: b itself, seen as
// []T, when the machine is little-endian and b is aligned for T; else a
// copy, each element read with get and converted with conv. The view's
// capacity is its length, so an append copies.
func viewOrCopy[T any, U uint64 | uint32 | byte](b []byte, get func([]byte) U, conv func(U) T) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(b) / size
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(unsafe.Alignof(zero)) == 0 {
		v := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
		return v[:n:n]
	}
	out := make([]T, n)
	for i := range out {
		out[i] = conv(get(b[i*size:]))
	}
	return out
}

// vecReader reads an index file's fields in order; err is set, and every
// later read is empty, once one runs past the end.
type vecReader struct {
	b   []byte
	at  int
	err error
}

func (r *vecReader) next(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.at {
		r.err = fmt.Errorf("%w: truncated", errVecFile)
		return nil
	}
	p := r.b[r.at : r.at+n]
	r.at += n
	return p
}

func (r *vecReader) u32() uint32 {
	if p := r.next(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *vecReader) u64() uint64 {
	if p := r.next(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}
