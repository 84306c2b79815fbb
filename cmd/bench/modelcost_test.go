package main

import (
	"strings"
	"testing"
)

// TestModelCostCell: the figure's cell shows both medians, the median of
// the pairs' changes judged against issue 27's 15 %, and every pair; a
// Neo4j column says it is not measured there, and a figure not run says so.
func TestModelCostCell(t *testing.T) {
	for _, c := range []struct {
		name   string
		model  modelCost
		want   []string
		met    bool
		judged bool
	}{
		{"within", modelCost{lexical: series{runs: []float64{40_000, 38_000, 42_000}}, model: series{runs: []float64{36_000, 33_000, 37_000}},
			change: series{runs: []float64{-0.10, -0.1316, -0.119}}},
			[]string{"40,000 → 36,000 · −11.9 %", "✅", "pairs: 40,000 → 36,000 (−10.0 %); 38,000 → 33,000 (−13.2 %); 42,000 → 37,000 (−11.9 %)"}, true, true},
		{"missed", modelCost{lexical: series{runs: []float64{40_000}}, model: series{runs: []float64{32_000}},
			change: series{runs: []float64{-0.20}}},
			[]string{"−20.0 %", "❌"}, false, true},
		{"at the line", modelCost{lexical: series{runs: []float64{40_000}}, model: series{runs: []float64{34_000}},
			change: series{runs: []float64{-0.15}}},
			[]string{"−15.0 %", "✅"}, true, true},
		{"neo4j", modelCost{na: "embedded only"}, []string{"embedded only"}, false, false},
		{"not run", modelCost{lexical: series{na: "not run"}, model: series{na: "not run"}, change: series{na: "not run"}},
			[]string{"not run"}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := &column{b: &backend{name: "embedded"}, model: c.model}
			b := &bench{opts: &options{runs: 1, rebuildRuns: 1, records: 100_000, modelPairs: 3}, columns: []*column{col}}
			table, checks := b.table()
			row := ""
			for _, l := range strings.Split(table, "\n") {
				if strings.Contains(l, "built-in model against lexical-only") {
					row = l
				}
			}
			for _, w := range c.want {
				if !strings.Contains(row, w) {
					t.Errorf("row lacks %q:\n%s", w, row)
				}
			}
			var judged, met bool
			for _, ch := range checks {
				if strings.Contains(ch.figure, "built-in model") {
					judged, met = true, ch.met
				}
			}
			if judged != c.judged || met != c.met {
				t.Errorf("judged %t met %t, want %t %t", judged, met, c.judged, c.met)
			}
		})
	}
}

func TestSignedPercent(t *testing.T) {
	for v, want := range map[float64]string{-0.123: "−12.3 %", 0.02: "+2.0 %", 0: "+0.0 %"} {
		if got := signedPercent(v); got != want {
			t.Errorf("signedPercent(%v) = %q, want %q", v, got, want)
		}
	}
}
