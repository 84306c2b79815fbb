//go:build amd64 && !purego

package embed

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 says whether pool runs poolAVX2 (eight components an
// instruction, poolGeneric's operations and order, so its bits): when the
// CPU has AVX2, for a dimension that is a multiple of 32.
var useAVX2 = cpu.X86.HasAVX2

// pool sets out to the sum of the tokens' rows of q (poolGeneric's bits).
func pool(out []float32, q string, toks []token) {
	if !useAVX2 || len(out) == 0 || len(out)%32 != 0 || len(toks) == 0 {
		poolGeneric(out, q, toks)
		return
	}
	// Every row lies within q: the tokens are vocabulary ids, and the
	// model has a row of len(out) components for each (newModel,
	// vocabulary).
	poolAVX2(unsafe.SliceData(out), len(out), unsafe.StringData(q), unsafe.SliceData(toks), len(toks))
}

// poolAVX2 adds, for each of the n tokens at toks, scale × its row of
// dim int8 components at q + row to out (dim float32), eight components
// at a time: sign-extend, convert (exact), multiply, add, as poolGeneric.
//
//go:noescape
func poolAVX2(out *float32, dim int, q *byte, toks *token, n int)
