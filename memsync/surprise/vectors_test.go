package surprise_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/surprise"
)

// TestVectorGatePairs: labelled pairs (a few of
// cmd/bench/testdata/gate-pairs.jsonl) through Score with the built-in
// model: a duplicate or a paraphrase of a recent record is skipped, a new
// fact on the same topic is stored. The paraphrases are ones the words
// alone store (that is the point of the vectors), so this fails on a gate
// that compares words only.
func TestVectorGatePairs(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "gate-pairs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := embed.Default()
	labels := map[string]int{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var p struct{ A, B, Label string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		labels[p.Label]++
		t.Run(p.Label+"/"+p.B, func(t *testing.T) {
			prior := []surprise.Prior{{UUID: "mem_a", Text: p.A}}
			words := surprise.Score(learning(p.B), prior)
			got := surprise.ScoreVectors(learning(p.B), prior, m)
			switch p.Label {
			case "duplicate", "paraphrase":
				if got.Decision != surprise.Skip || got.Match != "mem_a" {
					t.Errorf("%q after %q: %+v, want skipped", p.B, p.A, got)
				}
				if p.Label == "paraphrase" && words.Decision == surprise.Skip {
					t.Errorf("words alone skip %q: not a pair that needs the vectors", p.B)
				}
			case "different":
				if got.Decision == surprise.Skip {
					t.Errorf("%q after %q: %+v, a new memory skipped", p.B, p.A, got)
				}
			default:
				t.Fatalf("label %q", p.Label)
			}
			if got.Score > words.Score {
				t.Errorf("vectors raised the score: %v > words' %v", got.Score, words.Score)
			}
		})
	}
	if labels["paraphrase"] == 0 || labels["different"] == 0 || labels["duplicate"] == 0 {
		t.Fatalf("testdata lacks a label: %v", labels)
	}
}

// TestMappedCosine pins the two anchors and the clamp.
func TestMappedCosine(t *testing.T) {
	for _, tc := range []struct{ cos, want float64 }{
		{surprise.VectorSkipCos, 1 - surprise.LowAt},
		{surprise.VectorStoreCos, 1 - surprise.StoreAt},
		{0.65, 0.45},
		{0.5, 0},
		{-1, 0},
		{0.9, 1},
		{1, 1},
	} {
		if got := surprise.MappedCosine(tc.cos); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", tc.want) {
			t.Errorf("MappedCosine(%v) = %v, want %v", tc.cos, got, tc.want)
		}
	}
}

// TestVectorsKeepWordRules: with an embedder, contradiction stays on
// words (a negated paraphrase of a recent record is still stored as a
// contradiction), and so do the always-stored cases.
func TestVectorsKeepWordRules(t *testing.T) {
	m := embed.Default()
	for _, tc := range []struct {
		name     string
		rec      *journal.Record
		decision surprise.Decision
		always   string
	}{
		{"negation flip", learning("Deploys never happen on Tuesdays after the standup"), surprise.Store, "contradiction"},
		{"correction", learning("No, actually the cache is warmed every night at 02:00"), surprise.Store, "correction"},
		{"remember", learning("The cache is warmed each night at 2am", remember), surprise.Store, "remember"},
		{"paraphrase", learning("Every night at 2am the cache gets warmed"), surprise.Skip, ""},
		{"not learning", learning("The cache is warmed every night at 02:00", tier("core")), surprise.Store, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := surprise.ScoreVectors(tc.rec, recent, m)
			if got.Decision != tc.decision || got.Always != tc.always {
				t.Errorf("%+v, want %s (always %q)", got, tc.decision, tc.always)
			}
		})
	}
}

// counting is a model whose Embed calls are counted, under a version of
// its own.
type counting struct {
	*embed.Model
	version string
	calls   *atomic.Int64
}

func (c counting) Embed(text string) []float32 { c.calls.Add(1); return c.Model.Embed(text) }
func (c counting) Version() string             { return c.version }

func newCounting(version string) counting {
	return counting{Model: embed.Default(), version: version, calls: new(atomic.Int64)}
}

// TestIndexVectors: the index file keeps the vectors (a second Load
// embeds nothing but the new lines, and answers as ScoreVectors over
// Recent); refreshAt new lines or more are folded into the file (the next
// Load embeds none of them, the oldest records drop out past the limit);
// an index of another model, or without vectors, is built again, and so
// is one with vectors read without an embedder.
func TestIndexVectors(t *testing.T) {
	dir := t.TempDir()
	jdir := filepath.Join(dir, "journal")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []byte
	texts := []string{"Deploys happen on Tuesdays after the standup", "The billing service runs in eu-west-1",
		"The laptop battery drains quickly when Docker is running.", "Bob is on vacation until the 15th."}
	for i, text := range texts {
		r := journal.Record{UUID: fmt.Sprintf("mem_%d", i), Agent: "a", Kind: journal.KindFact, Text: text}
		lines = append(append(lines, r.Canonical()...), '\n')
	}
	day := filepath.Join(jdir, "2026-11-21.jsonl")
	if err := os.WriteFile(day, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "a.idx")
	probes := []*journal.Record{
		learning("Running Docker makes the notebook's battery run down fast."),
		learning("Bob is away on holiday and back on the fifteenth."),
		learning("Bob owns the billing service and its on-call rota."),
	}
	check := func(t *testing.T, x *surprise.Index, emb surprise.Embedder) {
		t.Helper()
		rs, err := surprise.Recent(jdir, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probes {
			if got, want := x.Score(p), surprise.ScoreVectors(p, rs, emb); !reflect.DeepEqual(got, want) {
				t.Errorf("%q: index %+v, want %+v", p.Text, got, want)
			}
		}
	}
	// The decisions with the vectors: the paraphrases are skipped, the
	// new fact stored.
	rs, _ := surprise.Recent(jdir, 10)
	for i, want := range []surprise.Decision{surprise.Skip, surprise.Skip, surprise.Store} {
		if got := surprise.ScoreVectors(probes[i], rs, embed.Default()); got.Decision != want {
			t.Errorf("%q: %+v, want %s", probes[i].Text, got, want)
		}
	}
	steps := []struct {
		name    string
		version string // "" : no embedder
		embeds  int64  // Embed calls of the Load (records embedded)
		appends int    // lines appended before the Load
	}{
		{"built", "m1", 4, 0},
		{"read back", "m1", 0, 0},
		{"new lines embedded", "m1", 1, 1},
		{"40 new lines (and the one before)", "m1", 41, 40},
		{"folded into the file", "m1", 0, 0},
		{"another model", "m2", 10, 0},
		{"words only", "", 0, 0},
		{"words only, 40 new lines", "", 0, 40},
		{"words only, folded", "", 0, 0},
		{"without vectors: rebuilt", "m2", 10, 0},
		{"read back again", "m2", 0, 0},
	}
	n := 4
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var add []byte
			for range st.appends {
				r := journal.Record{UUID: fmt.Sprintf("mem_%d", n), Agent: "a", Kind: journal.KindFact,
					Text: fmt.Sprintf("Record %d: the office wifi password changed on day %d", n, n%7)}
				add = append(append(add, r.Canonical()...), '\n')
				n++
			}
			if len(add) > 0 {
				fh, err := os.OpenFile(day, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				fh.Write(add)
				fh.Close()
			}
			var emb surprise.Embedder
			var c counting
			if st.version != "" {
				c = newCounting(st.version)
				emb = c
			}
			x, err := surprise.LoadVectors(jdir, idx, 10, emb)
			if err != nil {
				t.Fatal(err)
			}
			if emb != nil {
				if got := c.calls.Load(); got != st.embeds {
					t.Errorf("Load embedded %d texts, want %d", got, st.embeds)
				}
			}
			check(t, x, emb)
		})
	}
}

// FuzzIndexFileVectors is FuzzIndexFile with the built-in model: whatever
// the index file holds, LoadVectors does not fail or panic, and answers as
// ScoreVectors over the records Recent reads.
func FuzzIndexFileVectors(f *testing.F) {
	dir := f.TempDir()
	jdir := filepath.Join(dir, "journal")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		f.Fatal(err)
	}
	var lines []byte
	for i, text := range []string{"deploys happen on tuesdays", "the cache is warm", "the laptop battery drains when docker runs"} {
		r := journal.Record{UUID: fmt.Sprintf("mem_%d", i), Agent: "a", Kind: journal.KindFact, Text: text}
		lines = append(append(lines, r.Canonical()...), '\n')
	}
	if err := os.WriteFile(filepath.Join(jdir, "2026-11-21.jsonl"), lines, 0o644); err != nil {
		f.Fatal(err)
	}
	m := embed.Default()
	for _, emb := range []surprise.Embedder{m, nil} {
		good := filepath.Join(dir, "good.idx")
		if _, err := surprise.LoadVectors(jdir, good, 10, emb); err != nil {
			f.Fatal(err)
		}
		seed, _ := os.ReadFile(good)
		f.Add(seed)
		os.Remove(good)
	}
	f.Add([]byte("memsync-surprise-index 5\n"))
	recent, _ := surprise.Recent(jdir, 10)
	probe := &journal.Record{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: "running docker drains the laptop battery"}
	want := surprise.ScoreVectors(probe, recent, m)
	f.Fuzz(func(t *testing.T, data []byte) {
		idx := filepath.Join(t.TempDir(), "a.idx")
		if err := os.WriteFile(idx, data, 0o644); err != nil {
			t.Fatal(err)
		}
		x, err := surprise.LoadVectors(jdir, idx, 10, m)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.Score(probe); !reflect.DeepEqual(got, want) {
			t.Errorf("index %q: %+v, want %+v", data, got, want)
		}
	})
}
