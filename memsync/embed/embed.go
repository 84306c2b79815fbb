package embed

import (
	"crypto/sha256"
	_ "embed" // the built-in model
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// Pooling names how token vectors become a text's vector; it is part of
// every Version.
const Pooling = "mean"

const magic = "MSEMBv1\x00"

// headerSize is the magic and the two uint32 of vectors.bin.
const headerSize = len(magic) + 8

//go:generate go test -run ^TestVocabIndexFile$ -update-vocab-index .

// The built-in model, as strings: go:embed puts them in the binary's
// read-only data, and nothing copies them (an embed.FS read would copy 8 MB
// and page it all in at the first Embed of every process).
var (
	//go:embed model/vectors.bin
	builtinVectors string
	//go:embed model/vocab.txt
	builtinVocab string
	// The vocabulary's hash table, made from vocab.txt at build time
	// (go generate: TestVocabIndexFile -update) and read in place.
	//go:embed model/vocab.idx
	builtinVocabIndex string
	//go:embed model/SHA256SUMS
	builtinSums string
)

// Model is a static embedding model: a WordPiece vocabulary and one int8
// row per token. It is safe for concurrent use; the vocabulary is indexed
// on the first Embed, not before (the built-in model's index is read in
// place from model/vocab.idx).
type Model struct {
	rows, dim int
	scales    string // rows × float32, little-endian
	q         string // rows × dim int8
	vocabRaw  string
	vocabIdx  string // a vocab.idx for vocabRaw (the built-in model), or ""
	version   string
	special   [5]int32 // ids of the special tokens embedding skips ([UNK], [CLS], [SEP], [PAD], [MASK]); -1: absent

	once  sync.Once
	vocab *vocabulary
	err   error
}

var (
	defaultOnce  sync.Once
	defaultModel *Model
	defaultErr   error
)

// Default returns the model built into the binary. Only the header is read
// here; the vocabulary's table, made at build time, is read in place from
// the first Embed on. It panics if the embedded model is damaged (a build
// defect the tests catch).
func Default() *Model {
	defaultOnce.Do(func() {
		defaultModel, defaultErr = newModel(builtinVectors, builtinVocab, versionOf([]byte(builtinSums)))
		if defaultErr == nil {
			defaultModel.vocabIdx = builtinVocabIndex
		}
	})
	if defaultErr != nil {
		panic(fmt.Sprintf("embed: the built-in model: %v", defaultErr))
	}
	return defaultModel
}

// Load reads a model of the same format from dir (vectors.bin and
// vocab.txt, as scripts/make-embedder writes them). The vocabulary is
// checked now, so a bad model fails here and not at the first Embed.
func Load(dir string) (*Model, error) {
	vec, err := os.ReadFile(filepath.Join(dir, "vectors.bin"))
	if err != nil {
		return nil, fmt.Errorf("embed: load model: %w", err)
	}
	voc, err := os.ReadFile(filepath.Join(dir, "vocab.txt"))
	if err != nil {
		return nil, fmt.Errorf("embed: load model: %w", err)
	}
	h := sha256.New()
	h.Write(vec)
	h.Write(voc)
	m, err := newModel(string(vec), string(voc), versionOf(h.Sum(nil)))
	if err != nil {
		return nil, fmt.Errorf("embed: load model %s: %w", dir, err)
	}
	if _, err := m.vocabulary(); err != nil {
		return nil, fmt.Errorf("embed: load model %s: %w", dir, err)
	}
	return m, nil
}

// versionOf names a model by the hash of its bytes and the pooling.
func versionOf(sum []byte) string {
	if len(sum) > 32 { // a SHA256SUMS file: hash it whole
		s := sha256.Sum256(sum)
		sum = s[:]
	}
	return "static-int8-" + Pooling + "-" + hex.EncodeToString(sum[:8])
}

func newModel(vec, voc string, version string) (*Model, error) {
	if len(vec) < headerSize || vec[:len(magic)] != magic {
		return nil, errors.New("vectors.bin: not a memsync static model (bad magic)")
	}
	rows := int(binary.LittleEndian.Uint32([]byte(vec[len(magic) : len(magic)+4])))
	dim := int(binary.LittleEndian.Uint32([]byte(vec[len(magic)+4 : headerSize])))
	if rows <= 0 || dim <= 0 || dim > 4096 {
		return nil, fmt.Errorf("vectors.bin: bad shape %d×%d", rows, dim)
	}
	want := headerSize + rows*4 + rows*dim
	if len(vec) != want {
		return nil, fmt.Errorf("vectors.bin: %d bytes, want %d for %d×%d", len(vec), want, rows, dim)
	}
	return &Model{
		rows: rows, dim: dim,
		scales:   vec[headerSize : headerSize+rows*4],
		q:        vec[headerSize+rows*4:],
		vocabRaw: voc,
		version:  version,
	}, nil
}

// vocabulary parses vocab.txt once, or reads the table made for it at
// build time (vocabIdx).
func (m *Model) vocabulary() (*vocabulary, error) {
	m.once.Do(func() {
		v, ok := vocabIndex(m.vocabRaw, m.vocabIdx)
		if !ok {
			v = newVocabulary(m.vocabRaw)
		}
		if v.size() != m.rows {
			m.err = fmt.Errorf("vocab.txt: %d tokens, vectors.bin has %d rows", v.size(), m.rows)
			return
		}
		for i, tok := range []string{"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"} {
			m.special[i] = -1
			if id, ok := v.lookup([]byte(tok)); ok {
				m.special[i] = id
				if tok == "[UNK]" {
					v.unk = id
				}
			}
		}
		if v.unk < 0 {
			m.err = errors.New("vocab.txt: no [UNK] token")
			return
		}
		m.vocab = v
	})
	return m.vocab, m.err
}

// skip reports whether id is a special token, which Embed leaves out.
func (m *Model) skip(id int32) bool {
	for _, s := range m.special {
		if s == id {
			return true
		}
	}
	return false
}

// Dim is the length of every vector Embed returns.
func (m *Model) Dim() int { return m.dim }

// Version names the model's bytes and pooling: it changes whenever the
// vectors would, so an index built with another version is rebuilt.
func (m *Model) Version() string { return m.version }

// Embed returns text's vector: the mean of its known tokens' rows,
// L2-normalised; the zero vector when text has no known token.
func (m *Model) Embed(text string) []float32 {
	out := make([]float32, m.dim)
	v, err := m.vocabulary()
	if err != nil {
		return out // Load and the tests reject a model with a bad vocabulary
	}
	var stack [64]token
	toks := stack[:0]
	v.tokenize(text, func(id int32) {
		if m.skip(id) {
			return
		}
		o := 4 * int(id)
		s := math.Float32frombits(uint32(m.scales[o]) | uint32(m.scales[o+1])<<8 | uint32(m.scales[o+2])<<16 | uint32(m.scales[o+3])<<24)
		toks = append(toks, token{scale: s, row: int(id) * m.dim})
	})
	if len(toks) == 0 {
		return out
	}
	pool(out, m.q, toks)
	var ss float64
	for _, x := range out {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range out {
		out[i] *= inv
	}
	return out
}

// Tokens returns the WordPiece ids of text (special tokens and [UNK]
// included), as the model's tokenizer would: for tests and diagnostics.
func (m *Model) Tokens(text string) ([]int32, error) {
	v, err := m.vocabulary()
	if err != nil {
		return nil, err
	}
	var ids []int32
	v.tokenize(text, func(id int32) { ids = append(ids, id) })
	return ids, nil
}

// NoneEmbedder is the embedder of "--embedder none": no vectors at all.
type NoneEmbedder struct{}

// None embeds nothing: Embed returns nil and Dim 0.
var None NoneEmbedder

// Embed returns nil.
func (NoneEmbedder) Embed(string) []float32 { return nil }

// Dim returns 0.
func (NoneEmbedder) Dim() int { return 0 }

// Version returns "none".
func (NoneEmbedder) Version() string { return "none" }

// Open resolves an --embedder value: "" or "default" is the built-in model,
// "none" is None, anything else a model directory for Load.
func Open(spec string) (interface {
	Embed(text string) []float32
	Dim() int
	Version() string
}, error) {
	switch spec {
	case "", "default":
		return Default(), nil
	case "none":
		return None, nil
	}
	return Load(spec)
}
