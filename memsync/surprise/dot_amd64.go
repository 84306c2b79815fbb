//go:build amd64 && !purego

package surprise

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 says whether query.dot runs dotAVX2: when the CPU has AVX2.
var useAVX2 = cpu.X86.HasAVX2

// dotAVX2 is dot over n components (a positive multiple of 16) with the
// query widened to int16 at q and the int8 vector at b.
//
//go:noescape
func dotAVX2(q *int16, b *byte, n int) int32

// wide is q as int16 for dotAVX2; nil when the kernel cannot run (no
// AVX2, or a length that is not a positive multiple of 16).
func wide(q []int32) []int16 {
	if !useAVX2 || len(q) == 0 || len(q)%16 != 0 {
		return nil
	}
	w := make([]int16, len(q))
	for i, c := range q {
		w[i] = int16(c)
	}
	return w
}

// dot is the dot product of the query and the int8 vector b (at least
// len(q.q) bytes): dotAVX2 when it can run, else the Go loop.
func (q *query) dot(b []byte) int32 {
	if q.wide == nil {
		return dot(q.q, b)
	}
	b = b[:len(q.wide)]
	return dotAVX2(unsafe.SliceData(q.wide), unsafe.SliceData(b), len(q.wide))
}
