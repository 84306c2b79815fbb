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

// TestQueryDot: the int8 pass's kernel (dotAVX2 on amd64 with AVX2, for
// lengths that are multiples of 16) gives dot's value, for random and
// extreme components, whatever the length.
func TestQueryDot(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, n := range []int{1, 8, 15, 16, 17, 32, 48, 64, 256, 384} {
		for _, fill := range []string{"random", "extremes", "mixed signs"} {
			q8, b := make([]byte, n), make([]byte, n+7) // b longer than the query, as an index row
			for i := range q8 {
				switch fill {
				case "random":
					q8[i], b[i] = byte(rng.Intn(256)), byte(rng.Intn(256))
				case "extremes":
					q8[i], b[i] = 0x80, 0x80 // -128 × -128
				default:
					q8[i], b[i] = 0x7f, 0x80 // 127 × -128
				}
			}
			q := newQuery(q8)
			if useKernel := n%16 == 0 && useAVX2Here(); useKernel != (q.wide != nil) {
				t.Fatalf("n=%d: kernel in use %v, want %v", n, q.wide != nil, useKernel)
			}
			if got, want := q.dot(b), dot(q.q, b); got != want {
				t.Errorf("n=%d %s: %d, want %d", n, fill, got, want)
			}
		}
	}
}
