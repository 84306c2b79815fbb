package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// series is one measurement of one backend: a value per run, or why there
// is none.
type series struct {
	runs []float64
	err  error  // the measurement failed
	na   string // the measurement does not apply or was not asked for
}

func (s *series) add(v float64) { s.runs = append(s.runs, v) }

// ok says whether the series has a value to show.
func (s series) ok() bool { return s.err == nil && s.na == "" && len(s.runs) > 0 }

// median of the runs (the mean of the middle two for an even count).
func (s series) median() float64 { return median(s.runs) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of v: the
// smallest value that at least p% of the values do not exceed.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// target is a goal a figure is held to.
type target struct {
	atLeast bool    // the value must be >= bound; else it must be <= bound (or < bound when strict)
	strict  bool    // a strict upper bound: < bound
	bound   float64 // in the figure's unit
	label   string  // how the table states it, e.g. "≥ 20,000"
}

func atLeast(bound float64, label string) *target {
	return &target{atLeast: true, bound: bound, label: label}
}
func atMost(bound float64, label string) *target { return &target{bound: bound, label: label} }
func below(bound float64, label string) *target {
	return &target{strict: true, bound: bound, label: label}
}

// met says whether v meets the target.
func (t *target) met(v float64) bool {
	switch {
	case t.atLeast:
		return v >= t.bound
	case t.strict:
		return v < t.bound
	default:
		return v <= t.bound
	}
}

// verdict renders v against the target: "✅ met (≥ 20,000)".
func (t *target) verdict(v float64) string {
	if t == nil {
		return ""
	}
	if t.met(v) {
		return " ✅ (target " + t.label + ")"
	}
	return " ❌ missed (target " + t.label + ")"
}

// check is one target's outcome, for the summary after the table.
type check struct {
	figure  string
	backend string
	value   string
	target  string
	met     bool
}

// tableRow is one line of the results table.
type tableRow struct {
	figure string
	cells  []string // one per backend column
}

// renderTable renders a markdown table with a header of columns.
func renderTable(columns []string, rows []tableRow) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(columns, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(columns)) + "\n")
	for _, r := range rows {
		cells := append([]string{r.figure}, r.cells...)
		for len(cells) < len(columns) {
			cells = append(cells, "")
		}
		for i, c := range cells {
			cells[i] = escapeCell(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// escapeCell keeps a cell on one line and its pipes out of the table syntax.
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// thousands formats n rounded to an integer with comma separators.
func thousands(v float64) string {
	n := int64(math.Round(v))
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// millis formats a duration in milliseconds with a precision that suits it.
func millis(ms float64) string {
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	default:
		return thousands(ms)
	}
}

// seconds formats seconds with one decimal.
func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) }

// ratio formats a factor: "52×".
func ratio(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + "×"
	}
	return thousands(v) + "×"
}

// percent formats a fraction as a percentage: "73%".
func percent(v float64) string { return strconv.FormatFloat(v*100, 'f', 0, 64) + "%" }

// cellFor renders a series: its median in format, with the target's
// verdict; "n/a (why)" or "error: ..." when there is no value.
func cellFor(s series, format func(float64) string, t *target) string {
	switch {
	case s.na != "":
		return "n/a (" + s.na + ")"
	case s.err != nil:
		return "error: " + firstLine(s.err.Error())
	case len(s.runs) == 0:
		return "n/a"
	}
	v := s.median()
	return format(v) + t.verdict(v)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// runsList renders every run of a series, for the raw figures: "1,234 / 1,301 / 1,288".
func runsList(s series, format func(float64) string) string {
	if !s.ok() {
		return cellFor(s, format, nil)
	}
	parts := make([]string, len(s.runs))
	for i, v := range s.runs {
		parts[i] = format(v)
	}
	return strings.Join(parts, " / ")
}

// plural is "1 run" or "3 runs".
func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
