package memsynctest

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"github.com/memsync/memsync/memsync"
)

// Embedder is a deterministic memsync.Embedder for tests only (never a
// default): each lower-cased word and each character trigram of a word is
// hashed into one of Dim buckets with a hashed sign, and the sum is
// L2-normalised. Texts that share words or word parts are similar; it
// knows no meaning. Salt changes every vector (and Version), as a new
// model would.
type Embedder struct {
	N    int    // dimensions
	Salt string // changes the vectors and the version
}

var _ memsync.Embedder = Embedder{}

// NewEmbedder returns a test embedder of dim dimensions.
func NewEmbedder(dim int) Embedder { return Embedder{N: dim} }

// Dim implements memsync.Embedder.
func (e Embedder) Dim() int { return e.N }

// Version implements memsync.Embedder.
func (e Embedder) Version() string { return fmt.Sprintf("test-hash-%d%s", e.N, e.Salt) }

// Embed implements memsync.Embedder.
func (e Embedder) Embed(text string) []float32 {
	v := make([]float32, e.N)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	add := func(f string, w float32) {
		h := fnv.New64a()
		h.Write([]byte(e.Salt))
		h.Write([]byte(f))
		s := h.Sum64()
		if s>>63 == 1 {
			w = -w
		}
		v[s%uint64(e.N)] += w
	}
	for _, w := range words {
		add("w:"+w, 1)
		p := "^" + w + "$"
		r := []rune(p)
		for i := 0; i+3 <= len(r); i++ {
			add("t:"+string(r[i:i+3]), 0.5)
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}
