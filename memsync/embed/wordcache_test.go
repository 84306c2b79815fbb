package embed

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// cachedWords is how many words the word cache holds.
func (v *vocabulary) cachedWords() int {
	v.wordsMu.RLock()
	defer v.wordsMu.RUnlock()
	return len(v.words)
}

// uncachedModel is a built-in model whose word cache never starts: every
// word the vocabulary does not hold is split, as before the cache existed.
func uncachedModel(t testing.TB) *Model {
	m, err := newModel(builtinVectors, builtinVocab, "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	v.splits.Store(math.MinInt64 / 2)
	return m
}

// locomoTexts are the turns of the LoCoMo dev conversations (from
// MEMSYNC_LOCOMO, never copied into the repository), nil without them.
func locomoTexts(t testing.TB) []string {
	path := os.Getenv("MEMSYNC_LOCOMO")
	if path == "" {
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var convs []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(raw, &convs); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var texts []string
	for _, c := range convs {
		for s := 1; ; s++ {
			v, ok := c.Conversation[fmt.Sprintf("session_%d", s)]
			if !ok {
				break
			}
			var turns []struct{ Speaker, Text string }
			if err := json.Unmarshal(v, &turns); err != nil {
				t.Fatalf("session %d: %v", s, err)
			}
			for _, tu := range turns {
				texts = append(texts, tu.Speaker+": "+tu.Text)
			}
		}
	}
	return texts
}

// manyWords returns n texts of words made of random letters and digits:
// far more distinct words than the cache has slots, so that entries are
// replaced and neighbouring slots shared.
func manyWords(seed int64, n, maxChars int) []string {
	r := rand.New(rand.NewSource(seed))
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789éü"
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for w := range 6 + r.Intn(10) {
			if w > 0 {
				b.WriteByte(' ')
			}
			for range 1 + r.Intn(maxChars) {
				b.WriteRune([]rune(letters)[r.Intn(len([]rune(letters)))])
			}
		}
		out[i] = b.String()
	}
	return out
}

// TestWordCacheBitIdentical: with the word cache on, warm, full and read
// by several goroutines at once, every vector is bit for bit the one the model gives without a
// cache, on real conversation turns (LoCoMo dev, when MEMSYNC_LOCOMO
// names it), harness-like texts and random words.
func TestWordCacheBitIdentical(t *testing.T) {
	sets := map[string][]string{
		"invented": inventedTexts(7, 4000),
		"random":   manyWords(3, 6000, 9),
		"long":     manyWords(5, 1500, 60),
		"golden":   nil,
	}
	for _, c := range readGolden(t) {
		sets["golden"] = append(sets["golden"], c.Text)
	}
	if l := locomoTexts(t); l != nil {
		sets["locomo"] = l
	} else {
		t.Log("no LoCoMo data (set MEMSYNC_LOCOMO to locomo-dev.json): generated texts only")
	}
	ref := uncachedModel(t)
	cached, err := newModel(builtinVectors, builtinVocab, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"golden", "invented", "locomo", "random", "long"} {
		texts := sets[name]
		if texts == nil {
			continue
		}
		want := make([][]float32, len(texts))
		for i, text := range texts {
			want[i] = ref.Embed(text)
		}
		for pass := range 2 { // the first fills the cache, the second reads it
			for i, text := range texts {
				if got := cached.Embed(text); !slices.Equal(got, want[i]) {
					t.Fatalf("%s, pass %d: Embed(%q) differs from the uncached model's", name, pass, text)
				}
			}
		}
		// Several goroutines at once (go test -race): reads, fills and
		// replacements interleaved.
		var wg sync.WaitGroup
		errs := make(chan string, 4)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range texts {
					i := (k*7 + g*len(texts)/4) % len(texts)
					if got := cached.Embed(texts[i]); !slices.Equal(got, want[i]) {
						errs <- fmt.Sprintf("%s, goroutine %d: Embed(%q) differs", name, g, texts[i])
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
	}
	if n := ref.vocab.cachedWords(); n != 0 {
		t.Errorf("the uncached model cached %d words", n)
	}
	if n := cached.vocab.cachedWords(); n == 0 || n > wordsMax {
		t.Errorf("the cache holds %d words, want 1..%d", n, wordsMax)
	}
}
