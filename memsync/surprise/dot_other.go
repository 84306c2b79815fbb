//go:build !amd64 || purego

package surprise

// wide is nil: there is no kernel for this architecture.
func wide([]int32) []int16 { return nil }

// dot is the dot product of the query and the int8 vector b (at least
// len(q.q) bytes).
func (q *query) dot(b []byte) int32 { return dot(q.q, b) }
