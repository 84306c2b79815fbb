package main

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestPercentile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6} // 1..10, shuffled
	for _, c := range []struct {
		p    float64
		want float64
	}{{50, 5}, {90, 9}, {95, 10}, {99, 10}, {100, 10}, {10, 1}, {1, 1}, {0.001, 1}} {
		if got := percentile(v, c.p); got != c.want {
			t.Errorf("percentile(1..10, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if v[0] != 5 {
		t.Error("percentile sorted its argument in place")
	}
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i)
	}
	if got := percentile(hundred, 99); got != 99 {
		t.Errorf("p99 of 1..100 = %v, want 99", got)
	}
	if got := percentile([]float64{7}, 50); got != 7 {
		t.Errorf("p50 of one value = %v", got)
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Error("percentile of nothing is not NaN")
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.v); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestTargets(t *testing.T) {
	if !atLeast(20_000, "").met(20_000) || atLeast(20_000, "").met(19_999) {
		t.Error("atLeast")
	}
	if !atMost(250, "").met(250) || atMost(250, "").met(250.1) {
		t.Error("atMost")
	}
	if below(60, "").met(60) || !below(60, "").met(59.9) {
		t.Error("below")
	}
	if got := atLeast(50, "≥ 50×").verdict(12); !strings.Contains(got, "missed") || !strings.Contains(got, "≥ 50×") {
		t.Errorf("verdict of a miss = %q", got)
	}
	var none *target
	if none.verdict(1) != "" {
		t.Error("a nil target has a verdict")
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{thousands(0), "0"}, {thousands(999), "999"}, {thousands(1000), "1,000"}, {thousands(1234567.6), "1,234,568"},
		{thousands(-12345), "-12,345"}, {millis(3.14159), "3.14"}, {millis(42.42), "42.4"}, {millis(1234), "1,234"},
		{ratio(52.4), "52×"}, {ratio(3.25), "3.2×"}, {percent(0.734), "73%"}, {seconds(59.96), "60.0"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestCellFor(t *testing.T) {
	s := series{runs: []float64{30_000, 10_000, 20_000}}
	if got := cellFor(s, thousands, atLeast(20_000, "≥ 20,000")); got != "20,000 ✅ (target ≥ 20,000)" {
		t.Errorf("cell = %q", got)
	}
	if got := cellFor(series{na: "no server"}, thousands, nil); got != "n/a (no server)" {
		t.Errorf("n/a cell = %q", got)
	}
	if got := cellFor(series{err: errors.New("boom\nmore")}, thousands, nil); got != "error: boom" {
		t.Errorf("error cell = %q", got)
	}
	if got := runsList(s, thousands); got != "30,000 / 10,000 / 20,000" {
		t.Errorf("runs = %q", got)
	}
}

func TestRenderTable(t *testing.T) {
	got := renderTable([]string{"figure", "embedded", "Neo4j"}, []tableRow{
		{figure: "projection", cells: []string{"60,000", "n/a"}},
		{figure: "a | b", cells: []string{"x\ny"}},
	})
	want := "| figure | embedded | Neo4j |\n" +
		"|---|---|---|\n" +
		"| projection | 60,000 | n/a |\n" +
		"| a \\| b | x y |  |\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestSpliceReport(t *testing.T) {
	block := beginMarker + "\nnew table\n" + endMarker + "\n"
	old := "# Benchmarks\n\nintro\n\n" + beginMarker + "\nold table\n" + endMarker + "\n\n## Notes\nkept\n"
	got := string(spliceReport([]byte(old), block))
	want := "# Benchmarks\n\nintro\n\n" + block + "\n## Notes\nkept\n"
	if got != want {
		t.Errorf("splice:\n%s\nwant:\n%s", got, want)
	}
	if got := string(spliceReport([]byte("# Notes only\n"), block)); got != "# Notes only\n\n"+block {
		t.Errorf("append without markers:\n%s", got)
	}
}

func TestSummary(t *testing.T) {
	got := summary([]check{{figure: "a", backend: "embedded", met: true},
		{figure: "b", backend: "Neo4j", value: "12×", target: "≥ 50×"}})
	if got != "1 of 2 met; missed: b on Neo4j (12×, target ≥ 50×)" {
		t.Errorf("summary = %q", got)
	}
}

func TestParseTimeMaxRSS(t *testing.T) {
	report := "\tCommand being timed: \"memsync rebuild\"\n\tUser time (seconds): 1.00\n" +
		"\tMaximum resident set size (kbytes): 123456\n\tExit status: 0\n"
	got, err := parseTimeMaxRSS([]byte(report))
	if err != nil || got != 123456 {
		t.Errorf("parseTimeMaxRSS = %d, %v", got, err)
	}
	if _, err := parseTimeMaxRSS([]byte("nothing")); err == nil {
		t.Error("no error for a report without the field")
	}
}

func TestParseOptions(t *testing.T) {
	o, err := parseOptions([]string{"--quick", "--neo4j-uri", ""}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if o.runs != 1 || o.records != 10_000 || o.rebuildRecords != 10_000 || o.appendCalls != 100 || !o.only["rebuild"] {
		t.Errorf("quick options: %+v", o)
	}
	o, err = parseOptions([]string{"--sizes", "records=5000,rebuild=1_000", "--only", "projection,search"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if o.runs != 3 || o.records != 5000 || o.rebuildRecords != 1000 || o.searchCorpus != 100_000 || o.only["rebuild"] || !o.only["search"] {
		t.Errorf("sized options: %+v", o)
	}
	for _, bad := range [][]string{{"--sizes", "records=x"}, {"--sizes", "nope=3"}, {"--only", "nope"}, {"--runs", "-1"}, {"extra"}} {
		if _, err := parseOptions(bad, &strings.Builder{}); err == nil {
			t.Errorf("parseOptions(%q) accepted", bad)
		}
	}
}

// TestQuickRunJudgesNoTarget: a --quick smoke run measures small sizes the
// targets are not for, so its table marks no target met or missed (no red
// ❌ inside a passing test run); a full run judges them.
func TestQuickRunJudgesNoTarget(t *testing.T) {
	for _, quick := range []bool{false, true} {
		c := &column{b: &backend{name: "embedded"}, rebuildPath: series{runs: []float64{1}}, searchP50: series{runs: []float64{900}},
			searchP95: series{runs: []float64{1000}}}
		b := &bench{opts: &options{quick: quick, runs: 1, rebuildRuns: 1}, columns: []*column{c}, appendMS: series{runs: []float64{50}}}
		table, checks := b.table()
		judged := strings.Contains(table, "❌") || strings.Contains(table, "✅")
		if judged == quick || (len(checks) > 0) == quick {
			t.Errorf("quick %t: %d checks, table:\n%s", quick, len(checks), table)
		}
	}
}
