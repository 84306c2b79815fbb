package embed

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand"
	"strings"
	"testing"
	"unicode"
)

// inventedTexts returns n memories like the projection harness's corpus
// (cmd/bench): a few real words among invented ones of two to four
// syllables, which WordPiece splits into several pieces each.
func inventedTexts(seed int64, n int) []string {
	real := strings.Fields(`deploy database migration latency budget customer invoice release
		rollback schema tenant quota alert oncall runbook contract pricing roadmap review
		benchmark journal retry backoff graph index cache snapshot postgres kafka service`)
	syll := []string{"ka", "lo", "mi", "ra", "te", "vo", "zu", "ne", "shi", "pa", "dor", "len",
		"qua", "fi", "bex", "tor", "nim", "sar", "gul", "wen"}
	r := rand.New(rand.NewSource(seed))
	invented := make([]string, 2000)
	for i := range invented {
		var b strings.Builder
		for range 2 + r.Intn(3) {
			b.WriteString(syll[r.Intn(len(syll))])
		}
		invented[i] = b.String()
	}
	zipf := rand.NewZipf(r, 1.05, 30, uint64(len(invented)-1))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for w := range 8 + r.Intn(16) {
			if w > 0 {
				b.WriteByte(' ')
			}
			switch {
			case r.Intn(4) == 0:
				b.WriteString(real[r.Intn(len(real))])
			case r.Intn(14) == 0:
				b.WriteString("@Mira")
			default:
				b.WriteString(invented[zipf.Uint64()])
			}
		}
		if r.Intn(5) == 0 {
			b.WriteString(". Ünïcödé naïve café, 東京, co-operate!")
		}
		out[i] = b.String()
	}
	return out
}

// pinnedVectors is the SHA-256 of the bits of every vector the built-in
// model gives for pinnedTexts, in order, as the plain scalar pooling
// (one row added at a time, component by component, in token order) made
// them. The vectors are versioned with the model (Version): a change to
// how Embed sums that moves one bit must come with a new Version, so a
// faster pooling must keep this digest.
const pinnedVectors = "647a9e86ffddc77d6a03aaf896e2589c252df179096abf371ffc9a984d51688d"

// pinnedTexts are the golden texts, memory200 and harness-like texts.
func pinnedTexts(t testing.TB) []string {
	texts := []string{memory200, "", "   ", "[CLS] [SEP]", strings.Repeat("x", 150)}
	for _, c := range readGolden(t) {
		texts = append(texts, c.Text)
	}
	return append(texts, inventedTexts(11, 3000)...)
}

func vectorsDigest(m *Model, texts []string) string {
	h := sha256.New()
	var b [4]byte
	for _, text := range texts {
		for _, x := range m.Embed(text) {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestVectorsPinned: the built-in model's vectors are bit for bit those
// of the plain scalar pooling, with the word cache cold and warm.
func TestVectorsPinned(t *testing.T) {
	m, err := newModel(builtinVectors, builtinVocab, "test")
	if err != nil {
		t.Fatal(err)
	}
	texts := pinnedTexts(t)
	for pass := 0; pass < 2; pass++ { // the second with the word cache on
		if got := vectorsDigest(m, texts); got != pinnedVectors {
			t.Errorf("pass %d: vectors digest %s, want %s", pass, got, pinnedVectors)
		}
	}
}

// BenchmarkEmbedInvented embeds harness-like memories (invented words
// WordPiece splits into several pieces), with the word cache warm: the
// per-record cost the projection pays with the built-in model.
func BenchmarkEmbedInvented(b *testing.B) {
	m := Default()
	texts := inventedTexts(42, 4096)
	for _, text := range texts {
		m.Embed(text)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Embed(texts[i%len(texts)])
		i++
	}
}

// BenchmarkEmbedCold is BenchmarkEmbedInvented with the caches taken by
// other work before every eighth record (24 MB touched, outside the
// clock): the model's rows and vocabulary are read from memory, as in the
// projection's reader, which shares the caches with SQLite.
func BenchmarkEmbedCold(b *testing.B) {
	m := Default()
	texts := inventedTexts(42, 4096)
	for _, text := range texts {
		m.Embed(text)
	}
	other := make([]byte, 24<<20)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%8 == 0 {
			b.StopTimer()
			for j := 0; j < len(other); j += 64 {
				other[j]++
			}
			b.StartTimer()
		}
		m.Embed(texts[i%len(texts)])
		i++
	}
}

// TestPoolKernels: the pooling this build runs (AVX2 on amd64 when the CPU
// has it) gives poolGeneric's bits, for random rows and scales from
// subnormal to huge, over dimensions it takes and ones it leaves to
// poolGeneric.
func TestPoolKernels(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	scales := []float32{1, 0.0123, -0.5, 1e-40, 3e38, float32(math.Copysign(0, -1)), 7.25e-3}
	for _, dim := range []int{32, 64, 256, 40, 8, 1, 0} {
		const rows = 50
		qb := make([]byte, rows*dim)
		for i := range qb {
			qb[i] = byte(r.Intn(256))
		}
		if len(qb) >= 2 {
			qb[0], qb[1] = 0x80, 0x7f // -128 and 127
		}
		q := string(qb)
		for trial := range 200 {
			toks := make([]token, r.Intn(40))
			for i := range toks {
				s := scales[r.Intn(len(scales))]
				if trial%2 == 0 {
					s = float32(r.NormFloat64() * 0.01)
				}
				toks[i] = token{scale: s, row: r.Intn(rows) * dim}
			}
			want, got := make([]float32, dim), make([]float32, dim)
			poolGeneric(want, q, toks)
			pool(got, q, toks)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("dim %d, %d tokens: component %d is %v (%#x), poolGeneric's %v (%#x)",
						dim, len(toks), i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}

// TestASCIIClasses: tokenize's ASCII table agrees with the predicates of
// its general path, character by character, and every character of a
// word class is at or above classWord.
func TestASCIIClasses(t *testing.T) {
	for c := rune(0); c < 128; c++ {
		var want byte
		switch {
		case c == 0 || isControl(c):
			want = classDrop
		case isSpace(c):
			want = classSpace
		case isPunct(c) || isCJK(c):
			want = classPunct
		default:
			want = byte(unicode.ToLower(c))
			if want < classWord {
				t.Fatalf("%q: word character below classWord", c)
			}
		}
		if asciiClass[c] != want {
			t.Errorf("%q: class %d, want %d", c, asciiClass[c], want)
		}
	}
}
