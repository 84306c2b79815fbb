package embed

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Embedder is memsync.Embedder, repeated here as a compile-time check that
// this package implements the engine's interface without importing it.
type Embedder interface {
	Embed(text string) []float32
	Dim() int
	Version() string
}

var (
	_ Embedder = (*Model)(nil)
	_ Embedder = None
)

type goldenCase struct {
	Text    string    `json:"text"`
	IDs     []int32   `json:"ids"`
	Float   []float32 `json:"float"`
	Int8    []float32 `json:"int8"`
	Teacher []float32 `json:"teacher"`
}

func readGolden(t testing.TB) []goldenCase {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("golden.json has %d cases", len(cases))
	}
	return cases
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// TestGoldenTokens: the Go tokenizer gives the ids the source model's Python
// tokenizer (Hugging Face tokenizers, tokenizer.json) gave for the fixture.
func TestGoldenTokens(t *testing.T) {
	m := Default()
	for _, c := range readGolden(t) {
		got, err := m.Tokens(c.Text)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 && len(c.IDs) == 0 {
			continue
		}
		if !equalIDs(got, c.IDs) {
			t.Errorf("Tokens(%q)\n got  %v\n want %v", c.Text, got, c.IDs)
		}
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGoldenVectors: the Go vectors match the Python ones (float32 model
// before quantisation: cosine ≥ 0.999; the same int8 rows: ≥ 0.99999), and
// texts with no known token embed to the zero vector.
func TestGoldenVectors(t *testing.T) {
	m := Default()
	worstF, worstQ := 1.0, 1.0
	var mine, teacher [][]float32
	for _, c := range readGolden(t) {
		got := m.Embed(c.Text)
		if len(got) != m.Dim() {
			t.Fatalf("Embed(%q): len %d, want %d", c.Text, len(got), m.Dim())
		}
		if l2(c.Float) == 0 {
			if l2(got) != 0 {
				t.Errorf("Embed(%q): norm %v, want the zero vector", c.Text, l2(got))
			}
			continue
		}
		if n := l2(got); math.Abs(n-1) > 1e-5 {
			t.Errorf("Embed(%q): norm %v, want 1", c.Text, n)
		}
		f, q := cosine(got, c.Float), cosine(got, c.Int8)
		worstF, worstQ = min(worstF, f), min(worstQ, q)
		if f < 0.999 || q < 0.99999 {
			t.Errorf("Embed(%q): cosine %.6f to the float model, %.6f to the int8 model", c.Text, f, q)
		}
		mine, teacher = append(mine, got), append(teacher, c.Teacher)
	}
	// How well the static model keeps the transformer's notion of
	// similarity: the correlation of the fixture's pairwise cosines.
	var a, b []float64
	for i := range mine {
		for j := i + 1; j < len(mine); j++ {
			a, b = append(a, cosine(mine[i], mine[j])), append(b, cosine(teacher[i], teacher[j]))
		}
	}
	t.Logf("worst cosine: %.6f (float model), %.7f (int8 model); pairwise-cosine correlation with the transformer %.3f",
		worstF, worstQ, pearson(a, b))
}

func pearson(a, b []float64) float64 {
	ma, mb := mean(a), mean(b)
	var ab, aa, bb float64
	for i := range a {
		ab += (a[i] - ma) * (b[i] - mb)
		aa += (a[i] - ma) * (a[i] - ma)
		bb += (b[i] - mb) * (b[i] - mb)
	}
	return ab / math.Sqrt(aa*bb)
}

func l2(v []float32) float64 { return math.Sqrt(cosineDot(v, v)) }

func cosineDot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(max(len(xs), 1))
}

// TestEmbeddedSums: SHA256SUMS (the Version's source) names the embedded
// bytes, so Version changes whenever the vectors would.
func TestEmbeddedSums(t *testing.T) {
	files := map[string]string{"vectors.bin": builtinVectors, "vocab.txt": builtinVocab}
	for _, line := range strings.Split(strings.TrimSpace(builtinSums), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: bad line %q", line)
		}
		b, ok := files[name]
		if !ok {
			t.Fatalf("SHA256SUMS names %q", name)
		}
		delete(files, name)
		h := sha256.Sum256([]byte(b))
		if hex.EncodeToString(h[:]) != sum {
			t.Errorf("model/%s: sha256 %x, SHA256SUMS says %s: rerun scripts/make-embedder", name, h, sum)
		}
	}
	if len(files) > 0 {
		t.Errorf("SHA256SUMS misses %v", files)
	}
	if v := Default().Version(); !strings.HasPrefix(v, "static-int8-mean-") {
		t.Errorf("Version() = %q", v)
	}
}

func TestNone(t *testing.T) {
	if None.Embed("anything") != nil || None.Dim() != 0 || None.Version() != "none" {
		t.Fatal("None must embed nothing")
	}
	for spec, want := range map[string]string{"": Default().Version(), "default": Default().Version(), "none": "none"} {
		e, err := Open(spec)
		if err != nil || e.Version() != want {
			t.Errorf("Open(%q) = %v, %v; want version %s", spec, e, err, want)
		}
	}
}

// writeModel writes a model directory from the embedded one, edited by fn.
func writeModel(t *testing.T, fn func(vec, voc []byte) ([]byte, []byte)) string {
	t.Helper()
	vec, voc := fn([]byte(builtinVectors), []byte(builtinVocab))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vectors.bin"), vec, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), voc, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(vec, voc []byte) ([]byte, []byte)
		wantErr string
	}{
		{"same as built in", func(vec, voc []byte) ([]byte, []byte) { return vec, voc }, ""},
		{"bad magic", func(vec, voc []byte) ([]byte, []byte) { vec[0] = 'X'; return vec, voc }, "bad magic"},
		{"truncated", func(vec, voc []byte) ([]byte, []byte) { return vec[:len(vec)-1], voc }, "bytes, want"},
		{"zero dim", func(vec, voc []byte) ([]byte, []byte) {
			binary.LittleEndian.PutUint32(vec[len(magic)+4:], 0)
			return vec, voc
		}, "bad shape"},
		{"vocab short", func(vec, voc []byte) ([]byte, []byte) {
			return vec, voc[:bytes.LastIndexByte(bytes.TrimRight(voc, "\n"), '\n')+1]
		}, "tokens, vectors.bin has"},
		{"no [UNK]", func(vec, voc []byte) ([]byte, []byte) {
			return vec, bytes.Replace(voc, []byte("[UNK]\n"), []byte("[unk]\n"), 1)
		}, "no [UNK]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Load(writeModel(t, tt.edit))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load: err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := Default()
			if m.Dim() != d.Dim() {
				t.Fatalf("Dim %d, want %d", m.Dim(), d.Dim())
			}
			if m.Version() == "" || m.Version() == "none" {
				t.Fatalf("Version %q", m.Version())
			}
			text := "The deploy failed because the migration locked the users table."
			if c := cosine(m.Embed(text), d.Embed(text)); c < 0.999999 {
				t.Fatalf("cosine to the built-in model %v", c)
			}
		})
	}
}

// TestLoadVersionFollowsBytes: another model's bytes give another Version.
func TestLoadVersionFollowsBytes(t *testing.T) {
	a, err := Load(writeModel(t, func(vec, voc []byte) ([]byte, []byte) { return vec, voc }))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(writeModel(t, func(vec, voc []byte) ([]byte, []byte) { vec[len(vec)-1]++; return vec, voc }))
	if err != nil {
		t.Fatal(err)
	}
	if a.Version() == b.Version() {
		t.Fatalf("two models, one version %s", a.Version())
	}
}

// TestEmbedConcurrent: the lazy vocabulary is built once under -race.
func TestEmbedConcurrent(t *testing.T) {
	m, err := newModel(builtinVectors, builtinVocab, "test")
	if err != nil {
		t.Fatal(err)
	}
	want := Default().Embed("concurrent use is safe")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c := cosine(m.Embed("concurrent use is safe"), want); c < 0.999999 {
				t.Errorf("cosine %v", c)
			}
		}()
	}
	wg.Wait()
}

// TestSimilarityOrder: a paraphrase is nearer than an unrelated sentence.
func TestSimilarityOrder(t *testing.T) {
	m := Default()
	tests := []struct{ a, near, far string }{
		{"The meeting about the roadmap moved to Thursday afternoon.", "Roadmap meeting rescheduled for Thursday PM.", "Quarterly revenue grew by twelve percent."},
		{"Melanie painted a sunrise over the lake.", "Melanie made a painting of the dawn at the lake.", "The deploy failed because of a locked table."},
		{"What did Caroline research?", "Caroline researched adoption agencies.", "The cat sat on the mat."},
	}
	for _, tt := range tests {
		a := m.Embed(tt.a)
		if n, f := cosine(a, m.Embed(tt.near)), cosine(a, m.Embed(tt.far)); n <= f {
			t.Errorf("%q: near %.3f <= far %.3f", tt.a, n, f)
		}
	}
}

// memory200 is a 200-character memory, the size the cost figures use.
const memory200 = "Decided to keep SQLite as the default store: Neo4j is optional, " +
	"the embedded engine projects 100k records/s and needs no server; revisit " +
	"if multi-host fleets need a shared graph."

func BenchmarkEmbed200(b *testing.B) {
	m := Default()
	m.Embed("warm")
	b.SetBytes(int64(len(memory200)))
	b.ReportAllocs()
	for b.Loop() {
		m.Embed(memory200)
	}
}

// BenchmarkFirstEmbed is the cold cost a process pays once: the vocabulary
// parsed into a map, then one 200-character memory embedded.
func BenchmarkFirstEmbed(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m, err := newModel(builtinVectors, builtinVocab, "bench")
		if err != nil {
			b.Fatal(err)
		}
		m.Embed(memory200)
	}
}

// TestTokensCorpus compares the tokenizer with ids the Python tokenizer
// produced for any corpus: MEMSYNC_EMBED_TOKEN_CHECK names a JSON-lines
// file of {"text", "ids"} (make one with the venv of scripts/make-embedder;
// the data sets it was checked on are not ours to ship). Skipped without it.
func TestTokensCorpus(t *testing.T) {
	path := os.Getenv("MEMSYNC_EMBED_TOKEN_CHECK")
	if path == "" {
		t.Skip("MEMSYNC_EMBED_TOKEN_CHECK not set")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, bad, n := Default(), 0, 0
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var c goldenCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		got, _ := m.Tokens(c.Text)
		n++
		if !equalIDs(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			if bad++; bad <= 5 {
				t.Errorf("Tokens(%q)\n got  %v\n want %v", c.Text, got, c.IDs)
			}
		}
	}
	t.Logf("%d texts, %d differ", n, bad)
}

// TestFirstEmbedCheap: a process's first Embed builds the vocabulary's
// hash table over the embedded bytes with a handful of allocations (a map
// of 30,522 strings took 30,591 and ~20 ms under load), so a command that
// embeds once stays within the write path's milliseconds.
func TestFirstEmbedCheap(t *testing.T) {
	allocs := testing.AllocsPerRun(5, func() {
		m, err := newModel(builtinVectors, builtinVocab, "test")
		if err != nil {
			t.Fatal(err)
		}
		m.Embed(memory200)
	})
	if allocs > 16 {
		t.Fatalf("a cold model's first Embed allocates %v times, want ≤ 16", allocs)
	}
}

// TestWordCacheSameTokens: once the word cache is on (after wordsAfter
// words), the golden texts still get the Python tokenizer's ids, from the
// cache, and every vector is bit for bit the one a cold model gives.
func TestWordCacheSameTokens(t *testing.T) {
	m, err := newModel(builtinVectors, builtinVocab, "test")
	if err != nil {
		t.Fatal(err)
	}
	golden := readGolden(t)
	cold := make([][]float32, len(golden))
	for i, c := range golden {
		cold[i] = m.Embed(c.Text) // the first pass: nothing cached yet
	}
	for m.vocab.splits.Load() <= wordsAfter {
		// Made-up words: a word the vocabulary holds is never split.
		m.Embed("warming zorblaxian quintrafelt blorptastic snerglewhump cache")
	}
	for pass := 0; pass < 2; pass++ { // the first fills the cache, the second reads it
		for i, c := range golden {
			if got, _ := m.Tokens(c.Text); !equalIDs(got, c.IDs) && (len(got) > 0 || len(c.IDs) > 0) {
				t.Errorf("pass %d: Tokens(%q)\n got  %v\n want %v", pass, c.Text, got, c.IDs)
			}
			if v := m.Embed(c.Text); !slices.Equal(v, cold[i]) {
				t.Errorf("pass %d: Embed(%q) differs from the cold model's", pass, c.Text)
			}
		}
	}
	if m.vocab.cachedWords() == 0 {
		t.Error("nothing cached")
	}
}

// BenchmarkEmbedGolden embeds the golden texts in turn (recurring words,
// as a store's memories have): with the word cache warm.
func BenchmarkEmbedGolden(b *testing.B) {
	m := Default()
	var texts []string
	for _, c := range readGolden(b) {
		texts = append(texts, c.Text)
	}
	for i := 0; i < 2*wordsAfter; i++ {
		m.Embed(texts[i%len(texts)])
	}
	i := 0
	for b.Loop() {
		m.Embed(texts[i%len(texts)])
		i++
	}
}
