//go:build !amd64 || purego

package embed

// pool sets out to the sum of the tokens' rows of q (poolGeneric).
func pool(out []float32, q string, toks []token) { poolGeneric(out, q, toks) }
