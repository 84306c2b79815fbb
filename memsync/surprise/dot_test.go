package surprise

import (
	"math/rand"
	"testing"
)

// TestDot: the unrolled int8 dot product agrees with the plain sum, for
// lengths with and without a tail, at the int8 extremes too.
func TestDot(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 31, 256} {
		for _, fill := range []string{"random", "extremes"} {
			q, b := make([]int32, n), make([]byte, n)
			want := int32(0)
			for i := range q {
				qi, bi := int8(rng.Intn(256)-128), int8(rng.Intn(256)-128)
				if fill == "extremes" {
					qi, bi = -128, -128
				}
				q[i], b[i] = int32(qi), byte(bi)
				want += int32(qi) * int32(bi)
			}
			if got := dot(q, b); got != want {
				t.Errorf("n=%d %s: dot %d, want %d", n, fill, got, want)
			}
		}
	}
}
