package embed

// token is one known token of a text: its row's scale and the offset of
// its row in the model's int8 components.
type token struct {
	scale float32
	row   int
}

// poolGeneric sets out (zero, of the model's dimension) to the sum of the
// tokens' rows: row after row, in token order, each component out[i] +
// scale × float32(q[i]), one rounding for the product and one for the
// sum. This order is the model's (its Version names it): every faster
// pooling must give these bits (TestPoolKernels, TestVectorsPinned).
//
// The product's explicit float32 conversion keeps its rounding: without
// it the Go spec lets a compiler fuse the multiply-add, and on arm64 (and
// other CPUs with FMA in their base ISA) it does, so the same model gave
// other bits there than on amd64 under one Version.
func poolGeneric(out []float32, q string, toks []token) {
	for _, t := range toks {
		row := q[t.row : t.row+len(out)]
		s := t.scale
		out := out[:len(row)]
		for i := 0; i < len(row); i++ {
			out[i] += float32(s * float32(int8(row[i])))
		}
	}
}
