package embedded

import (
	"math/rand"
	"testing"
)

// BenchmarkVectorScan: the in-memory pass of one search over 100,000
// vectors of 256 dimensions (the figure's store).
func BenchmarkVectorScan(b *testing.B) {
	const n, dim = 100_000, 256
	rng := rand.New(rand.NewSource(1))
	g := &groupVecs{}
	for i := 0; i < n; i++ {
		for j := 0; j < dim; j++ {
			g.q = append(g.q, int8(rng.Intn(255)-127))
		}
		g.ids = append(g.ids, int64(i))
		g.scale = append(g.scale, 0.01)
	}
	x := &vecIndex{groups: map[string]*groupVecs{"g": g}}
	qv := make([]float32, dim)
	for j := range qv {
		qv[j] = rng.Float32() - 0.5
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		all := x.scan(qv, []string{"g"})
		best(all, 400)
	}
}
