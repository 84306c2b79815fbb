package embed

import (
	"bytes"
	"flag"
	"os"
	"runtime"
	"strings"
	"testing"
)

var updateVocabIndex = flag.Bool("update-vocab-index", false, "write model/vocab.idx from model/vocab.txt (go generate)")

// TestVocabIndexFile: the built-in model's vocab.idx is, byte for byte,
// the table newVocabulary builds from vocab.txt (so ids, and vectors, are
// those of the table a model read from disk gets); with
// -update-vocab-index it writes the file (go generate).
func TestVocabIndexFile(t *testing.T) {
	want := newVocabulary(builtinVocab).marshal()
	if *updateVocabIndex {
		if err := os.WriteFile("model/vocab.idx", want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote model/vocab.idx (%d bytes)", len(want))
		return
	}
	if !bytes.Equal([]byte(builtinVocabIndex), want) {
		t.Fatal("model/vocab.idx is not the table of model/vocab.txt: run go generate ./memsync/embed")
	}
}

// TestVocabIndexSameIDs: every token of the built-in vocabulary, and
// every one of them as a continuation piece, gets the same id (or the
// same miss) from the table read in place as from the one built at run
// time, and the golden texts the same ids and bit-identical vectors from
// the built-in model as from a model without the file.
func TestVocabIndexSameIDs(t *testing.T) {
	built := newVocabulary(builtinVocab)
	read, ok := vocabIndex(builtinVocab, builtinVocabIndex)
	if !ok {
		t.Fatal("vocabIndex rejects the built-in vocab.idx")
	}
	if read.size() != built.size() || read.size() < 30000 {
		t.Fatalf("sizes: read %d, built %d", read.size(), built.size())
	}
	for i, tok := range strings.Split(strings.TrimSuffix(builtinVocab, "\n"), "\n") {
		for _, probe := range []string{tok, "##" + tok, tok + "x"} {
			a, aok := read.lookup([]byte(probe))
			b, bok := built.lookup([]byte(probe))
			if a != b || aok != bok {
				t.Fatalf("token %d %q: read %d %v, built %d %v", i, probe, a, aok, b, bok)
			}
		}
		if got := read.token(int32(i)); got != built.token(int32(i)) {
			t.Fatalf("token %d: read %q, built %q", i, got, built.token(int32(i)))
		}
	}
	cold, err := newModel(builtinVectors, builtinVocab, "test") // no vocab.idx: built at run time
	if err != nil {
		t.Fatal(err)
	}
	warm := Default()
	for _, c := range readGolden(t) {
		a, _ := warm.Tokens(c.Text)
		b, _ := cold.Tokens(c.Text)
		if !equalIDs(a, b) {
			t.Fatalf("Tokens(%q): %v read in place, %v built", c.Text, a, b)
		}
		va, vb := warm.Embed(c.Text), cold.Embed(c.Text)
		for j := range va {
			if va[j] != vb[j] && !(va[j] != va[j] && vb[j] != vb[j]) {
				t.Fatalf("Embed(%q)[%d]: %v read in place, %v built", c.Text, j, va[j], vb[j])
			}
		}
	}
}

// TestVocabIndexRejects: vocabIndex refuses a vocab.idx that is not one,
// or whose lines do not fall on the vocabulary's (a Model then builds the
// table); the built-in pair is checked whole by TestVocabIndexFile.
func TestVocabIndexRejects(t *testing.T) {
	idx := builtinVocabIndex
	cases := []struct {
		name     string
		raw, idx string
	}{
		{"empty", builtinVocab, ""},
		{"bad magic", builtinVocab, "X" + idx[1:]},
		{"short", builtinVocab, idx[:len(idx)-4]},
		{"lines shifted", builtinVocab[strings.IndexByte(builtinVocab, '\n')+1:] + "[PAD]\n", idx},
		{"shorter vocabulary", builtinVocab[:len(builtinVocab)-1], idx},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := vocabIndex(c.raw, c.idx); ok {
				t.Fatal("accepted")
			}
		})
	}
}

// TestFirstEmbedBuiltinNoBuild: the built-in model's first Embed builds
// no table: it allocates a few hundred bytes (the vector, the struct),
// where building the table allocated ~0.5 MB (and hashed 30,522 tokens).
func TestFirstEmbedBuiltinNoBuild(t *testing.T) {
	var before, after runtime.MemStats
	m, err := newModel(builtinVectors, builtinVocab, "test")
	if err != nil {
		t.Fatal(err)
	}
	m.vocabIdx = builtinVocabIndex // as Default does
	runtime.GC()
	runtime.ReadMemStats(&before)
	m.Embed(memory200)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<10 {
		t.Fatalf("the built-in model's first Embed allocated %d bytes, want ≤ 16 KiB", alloc)
	}
}

// BenchmarkFirstEmbedBuiltin is BenchmarkFirstEmbed for the built-in
// model: its table read in place from vocab.idx.
func BenchmarkFirstEmbedBuiltin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m, err := newModel(builtinVectors, builtinVocab, "bench")
		if err != nil {
			b.Fatal(err)
		}
		m.vocabIdx = builtinVocabIndex
		m.Embed(memory200)
	}
}

// TestVocabIndexSmall: a vocab.idx of a vocabulary with fewer tokens than
// vocabIndex samples (and one with a duplicate token, "\r\n" line ends and
// no final newline) is read back, with the ids of the built table.
func TestVocabIndexSmall(t *testing.T) {
	for _, raw := range []string{"[UNK]\nthe\n##s\n", "[UNK]\r\na\r\na\r\n##b\r\nc"} {
		built := newVocabulary(raw)
		read, ok := vocabIndex(raw, string(built.marshal()))
		if !ok {
			t.Fatalf("%q: vocabIndex rejects its own vocab.idx", raw)
		}
		for _, tok := range []string{"[UNK]", "the", "##s", "a", "##b", "c", "x", ""} {
			a, aok := read.lookup([]byte(tok))
			b, bok := built.lookup([]byte(tok))
			if a != b || aok != bok {
				t.Errorf("%q, %q: read %d %v, built %d %v", raw, tok, a, aok, b, bok)
			}
		}
	}
}
