package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRRF(t *testing.T) {
	tests := []struct {
		name  string
		lists [][]string
		want  []string
	}{
		{"one list keeps its order", [][]string{{"c", "a", "b"}}, []string{"c", "a", "b"}},
		{"agreement wins", [][]string{{"a", "b", "c"}, {"b", "a", "d"}}, []string{"a", "b", "c", "d"}},
		{"in both beats first of one", [][]string{{"x", "y"}, {"z", "y"}}, []string{"y", "x", "z"}},
		{"ties by uuid", [][]string{{"b"}, {"a"}}, []string{"a", "b"}},
		{"empty", nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rrf(60, tt.lists...); !slices.Equal(got, tt.want) {
				t.Fatalf("rrf = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBlend(t *testing.T) {
	tests := []struct {
		name  string
		alpha float64
		bmU   []string
		bmS   []float64
		vecU  []string
		vecS  []float64
		want  []string
	}{
		{"lexical only", 0, []string{"a", "b"}, []float64{4, 2}, []string{"b", "c"}, []float64{0.9, 0.8}, []string{"a", "b", "c"}},
		{"vector only", 1, []string{"a", "b"}, []float64{4, 2}, []string{"b", "c"}, []float64{0.9, 0.8}, []string{"b", "c", "a"}},
		// a: 0.5·1 = 0.5; b: 0.5·0.5 + 0.5·0.9 = 0.7; c: 0.5·0.8 = 0.4
		{"half and half", 0.5, []string{"a", "b"}, []float64{4, 2}, []string{"b", "c"}, []float64{0.9, 0.8}, []string{"b", "a", "c"}},
		{"no lexical hit", 0.5, nil, nil, []string{"c", "b"}, []float64{0.5, 0.5}, []string{"b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := blend(tt.alpha, tt.bmU, tt.bmS, tt.vecU, tt.vecS); !slices.Equal(got, tt.want) {
				t.Fatalf("blend = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAUC(t *testing.T) {
	tests := []struct {
		name     string
		pos, neg []float64
		want     float64
	}{
		{"perfect", []float64{0.9, 0.8}, []float64{0.1, 0.2}, 1},
		{"inverted", []float64{0.1}, []float64{0.9}, 0},
		{"ties count half", []float64{0.5}, []float64{0.5}, 0.5},
		{"mixed", []float64{0.9, 0.3}, []float64{0.5, 0.1}, 0.75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := auc(tt.pos, tt.neg); math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("auc = %v, want %v", got, tt.want)
			}
		})
	}
	if !math.IsNaN(auc(nil, []float64{1})) {
		t.Fatal("auc with no positive must be NaN")
	}
}

func TestReadGatePairs(t *testing.T) {
	ps, err := readGatePairs(filepath.Join("testdata", "gate-pairs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, p := range ps {
		n[p.Label]++
	}
	if n["duplicate"] < 10 || n["paraphrase"] < 10 || n["different"] < 20 {
		t.Fatalf("labels %v: the set is too small to measure", n)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"a":"x","b":"y","label":"same"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readGatePairs(bad); err == nil || !strings.Contains(err.Error(), "bad.jsonl:1") {
		t.Fatalf("a bad label: err %v, want file:line", err)
	}
}

// TestSemanticSmoke runs the diagnostic on one LoCoMo conversation when the
// shared data set is there (it is not shipped with the repository).
func TestSemanticSmoke(t *testing.T) {
	data := filepath.Join("..", "..", defaultRecallData)
	if _, err := os.Stat(data); err != nil {
		t.Skipf("%s: %v", data, err)
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"semantic", "--recall-data", data, "--recall-conversations", "1",
		"--gate-pairs", filepath.Join("testdata", "gate-pairs.jsonl")}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"| plain BM25 alone |", "| memsync lexical (embedded Graph.Search) alone |", "| vector only (cosine) |", "| RRF BM25 + vector (k=60) |", "| vector cosine |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBestCut(t *testing.T) {
	for _, tc := range []struct {
		repeated, different []float64
		cut                 float64
		counts              [2]int
	}{
		{[]float64{0.9, 0.8, 0.7}, []float64{0.1, 0.2, 0.3}, 0.7, [2]int{3, 0}},
		{[]float64{0.9, 0.5}, []float64{0.6, 0.1}, 0.5, [2]int{2, 1}}, // a tie of J: the lowest cut
		{[]float64{0.5}, []float64{0.5}, 0.5, [2]int{1, 1}},
	} {
		cut, counts := bestCut(tc.repeated, tc.different)
		if cut != tc.cut || counts != tc.counts {
			t.Errorf("bestCut(%v, %v) = %v %v, want %v %v", tc.repeated, tc.different, cut, counts, tc.cut, tc.counts)
		}
	}
}
