package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"unsafe"
)

// The vector index file: a process that loads the vector index (vecIndex)
// from the vectors table writes what it loaded to a file beside the store,
// so that the next process (each `memsync search` is one) reads it in one
// sequential read instead of row by row through SQLite, then loads from
// the table only the rows written since. The file is a cache: it names
// the store's generation, vectors epoch and model version it was built
// for, and a file that does not match the store (a Drop, a re-embedding,
// another model), or cannot be read, is ignored and written again.
//
//	"MSVECIX2", uint32 len + key, uint32 dim, int64 through, uint32 groups,
//	then per group: uint32 len + name, uint32 n, n int64 ids,
//	n float32 scales, n × dim int8, n × signWords(dim) uint64 sign codes
//
// all little-endian (the first format, "MSVECIX1", had no sign codes: a
// reader takes it for a file of another format, and writes it again).
//
// It is written to a temporary file and renamed, so a
// reader never sees half of one.
const (
	vecFileName  = "vectors.idx"
	vecFileMagic = "MSVECIX2"
	// vecFileRewrite is how many rows a load must have read from the
	// table before it writes the file again: fewer are cheap to read.
	vecFileRewrite = 2048
)

// errVecFile is a file that is not an index file of this format.
var errVecFile = errors.New("not a vector index file")

// writeVecFile writes x (built for key, dim) to path.
func writeVecFile(path string, x *vecIndex, dim int) error {
	var buf bytes.Buffer
	le := binary.LittleEndian
	put32 := func(v uint32) { buf.Write(le.AppendUint32(nil, v)) }
	buf.WriteString(vecFileMagic)
	put32(uint32(len(x.key)))
	buf.WriteString(x.key)
	put32(uint32(dim))
	buf.Write(le.AppendUint64(nil, uint64(x.through)))
	put32(uint32(len(x.groups)))
	for name, g := range x.groups {
		put32(uint32(len(name)))
		buf.WriteString(name)
		put32(uint32(len(g.ids)))
		b := buf.AvailableBuffer()
		for _, id := range g.ids {
			b = le.AppendUint64(b, uint64(id))
		}
		for _, s := range g.scale {
			b = le.AppendUint32(b, math.Float32bits(s))
		}
		buf.Write(b)
		if len(g.q) > 0 {
			buf.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(g.q))), len(g.q)))
		}
		b = buf.AvailableBuffer()
		for _, c := range g.codes {
			b = le.AppendUint64(b, c)
		}
		buf.Write(b)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), vecFileName+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// readVecFile reads the index file at path into x if it was built for key
// and dim; false (x untouched) when it was not, or is missing or damaged.
func readVecFile(path string, x *vecIndex, key string, dim int) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r := vecReader{b: b}
	if string(r.next(len(vecFileMagic))) != vecFileMagic {
		return false, errVecFile
	}
	if string(r.next(int(r.u32()))) != key || int(r.u32()) != dim {
		return false, nil // another generation, epoch or model: stale
	}
	through := int64(r.u64())
	groups := map[string]*groupVecs{}
	for n := int(r.u32()); n > 0 && r.err == nil; n-- {
		name := string(r.next(int(r.u32())))
		count := int(r.u32())
		if count < 0 || count > len(r.b) {
			return false, errVecFile
		}
		ids := r.next(8 * count)
		scales := r.next(4 * count)
		q := r.next(count * dim)
		codes := r.next(8 * count * signWords(dim))
		if r.err != nil {
			break
		}
		g := &groupVecs{ids: make([]int64, count), scale: make([]float32, count)}
		g.codes = make([]uint64, count*signWords(dim))
		for i := range g.codes {
			g.codes[i] = binary.LittleEndian.Uint64(codes[8*i:])
		}
		for i := range g.ids {
			g.ids[i] = int64(binary.LittleEndian.Uint64(ids[8*i:]))
			g.scale[i] = math.Float32frombits(binary.LittleEndian.Uint32(scales[4*i:]))
		}
		if len(q) > 0 {
			// The file's bytes are the int8 rows: no copy. A later load
			// appends to them, which copies once.
			g.q = unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(q))), len(q))
			g.q = g.q[:len(q):len(q)]
		}
		groups[name] = g
	}
	if r.err != nil || len(r.b) != r.at {
		return false, errVecFile
	}
	x.key, x.through, x.groups = key, through, groups
	return true, nil
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
