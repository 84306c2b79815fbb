package surprise_test

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/surprise"
)

// benchJournal writes n records of 5 to 28 words from a 2,000-word
// vocabulary into dir, as the bench harness's corpus does.
func benchJournal(b *testing.B, dir string, n int) {
	rng := rand.New(rand.NewSource(1))
	vocab := make([]string, 2000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%d", i, i*7%13)
	}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		words := make([]string, 5+rng.Intn(24))
		for j := range words {
			words[j] = vocab[rng.Intn(len(vocab))]
		}
		r := journal.Record{UUID: fmt.Sprintf("mem_x_%05d", i), Agent: "a", Kind: journal.KindFact, Text: strings.Join(words, " "), Tags: []string{vocab[rng.Intn(50)]}}
		sb.Write(r.Canonical())
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "2026-11-21.jsonl"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGate is the gate's work in one append against 5,000 recent
// records: reading them from the journal, scoring without the index, and
// what append does (the host-local index, then the score).
func BenchmarkGate(b *testing.B) {
	dir := b.TempDir()
	benchJournal(b, dir, surprise.DefaultRecent)
	rec := &journal.Record{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: "w1x1 w2x2 w3x3 something entirely new about @Mira and #postgres"}
	b.Run("recent", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := surprise.Recent(dir, surprise.DefaultRecent); err != nil {
				b.Fatal(err)
			}
		}
	})
	idx := filepath.Join(b.TempDir(), "a.idx")
	b.Run("load+score", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			x, err := surprise.Load(dir, idx, surprise.DefaultRecent)
			if err != nil {
				b.Fatal(err)
			}
			x.Score(rec)
		}
	})
	recent, _ := surprise.Recent(dir, surprise.DefaultRecent)
	b.Run("score", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			surprise.Score(rec, recent)
		}
	})
}

// BenchmarkGateVectors is append's gate with the built-in model against
// 5,000 recent records: words (Load, Score) against words and vectors
// (LoadVectors: a bigger index file; Score: embedding the new record and
// one int8 dot product per record), side by side. The model's vocabulary
// is parsed before the timer (BenchmarkFirstEmbed in memsync/embed is
// that cost).
func BenchmarkGateVectors(b *testing.B) {
	dir := b.TempDir()
	benchJournal(b, dir, surprise.DefaultRecent)
	rec := &journal.Record{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: "w1x1 w2x2 w3x3 something entirely new about @Mira and #postgres"}
	m := embed.Default()
	m.Embed("warm")
	for _, tc := range []struct {
		name string
		emb  surprise.Embedder
	}{{"words", nil}, {"vectors", m}} {
		idx := filepath.Join(b.TempDir(), "a.idx")
		if _, err := surprise.LoadVectors(dir, idx, surprise.DefaultRecent, tc.emb); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name+"/load", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := surprise.LoadVectors(dir, idx, surprise.DefaultRecent, tc.emb); err != nil {
					b.Fatal(err)
				}
			}
		})
		x, _ := surprise.LoadVectors(dir, idx, surprise.DefaultRecent, tc.emb)
		b.Run(tc.name+"/score", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				x.Score(rec)
			}
		})
		b.Run(tc.name+"/rebuild", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				os.Remove(idx)
				if _, err := surprise.LoadVectors(dir, idx, surprise.DefaultRecent, tc.emb); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
