package main

import (
	"math"
	"slices"
	"testing"

	"github.com/memsync/memsync/journal"
)

// TestEvidenceRepair: the malformed evidence shapes of the LoCoMo set.
func TestEvidenceRepair(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"D1:3", []string{"D1:3"}},
		{"D8:6; D9:17", []string{"D8:6", "D9:17"}},
		{"D1:3 D1:5", []string{"D1:3", "D1:5"}},
		{"D:11:26", []string{"D11:26"}},
		{"D30:05", []string{"D30:5"}},
		{"D", []string{"D"}},
		{"", nil},
	} {
		var got []string
		for _, id := range splitEvidence(c.in) {
			got = append(got, repairDiaID(id))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q → %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzEvidence(f *testing.F) {
	for _, s := range []string{"D8:6; D9:17", "D:11:26", "D30:05", "D:", "D99999999999999999999:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range splitEvidence(s) {
			if id == "" {
				t.Fatalf("empty id from %q", s)
			}
			_ = repairDiaID(id)
		}
	})
}

// TestRecallScores: recall@5/@10, hit@10 and MRR@10 of one question.
func TestRecallScores(t *testing.T) {
	s := newRecallScores()
	q := recallQuestion{category: 2, evidence: map[string]bool{"a": true, "b": true}}
	s.add(q, []string{"x", "a", "y", "z", "w", "v", "b"})
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"recall@5", s.mean(s.r5, 2), 0.5}, {"recall@10", s.mean(s.r10, 0), 1},
		{"hit@10", s.mean(s.hit10, 2), 1}, {"MRR@10", s.mean(s.mrr, 0), 0.5},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !math.IsNaN(s.mean(s.r10, 1)) {
		t.Errorf("a category without questions has a mean")
	}
}

// TestBaselineBM25: the baseline drops stopwords and ranks the rarer word higher.
func TestBaselineBM25(t *testing.T) {
	x := newBM25([]journal.Record{
		{UUID: "a", Text: "the cat sat"}, {UUID: "b", Text: "the dog sat"}, {UUID: "c", Text: "a cat and a dog"},
		{UUID: "d", Text: "nothing here"},
	})
	if got := x.search("what is the", 10); len(got) != 0 {
		t.Errorf("stopwords matched %v", got)
	}
	if got := x.search("cat", 10); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("cat: %v", got)
	}
}
