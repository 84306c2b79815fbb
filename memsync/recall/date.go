package recall

import (
	"strconv"
	"strings"
	"time"

	"github.com/memsync/memsync/memsync/analysis"
)

// Time in the query: a question that names a date ("on 21 May, 2023",
// "November 6, 2023"), a month ("in August 2023", "in December") or a year
// ("in 2023") asks about what was written then. Its Span is that time, and
// a lexical hit whose ts falls in it, give or take DateSlack, has its base
// multiplied by 1 + DateBoost: the record's own ts as a term of the query.
// A month without a year matches that month of any year.

// DateBoost and DateSlack were chosen by cross-validation over the LoCoMo
// dev conversations (docs/benchmarks.md). They are variables so that
// cmd/bench's sweep can try others; nothing else sets them.
var (
	DateBoost = 2.0
	DateSlack = 24 * time.Hour
)

// Span is a time a query names: [From, To), or, with AnyYear, the month
// From names in any year. Zero when the query names none.
type Span struct {
	From, To time.Time
	AnyYear  bool
}

// IsZero reports whether the query names no time.
func (s Span) IsZero() bool { return s.From.IsZero() }

// Holds reports whether ts falls in s, give or take slack.
func (s Span) Holds(ts time.Time, slack time.Duration) bool {
	if s.IsZero() {
		return false
	}
	from, to := s.From, s.To
	if s.AnyYear {
		y := ts.UTC().Year()
		from = time.Date(y, from.Month(), 1, 0, 0, 0, 0, time.UTC)
		to = from.AddDate(0, 1, 0)
		if ts.Before(from.Add(-slack)) { // December slack into January, and so on
			from, to = from.AddDate(-1, 0, 0), to.AddDate(-1, 0, 0)
		}
	}
	return !ts.Before(from.Add(-slack)) && ts.Before(to.Add(slack))
}

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
	"oct": 10, "nov": 11, "dec": 12,
}

// ParseSpan finds the first time text names: a day of a month (with a
// year: "21 May, 2023", "May 21 2023", "8th December, 2023"), else a month
// (with a year or not: "August 2023", "in December"), else a year. "may"
// counts as a month only beside a day or a year (it is mostly a verb).
func ParseSpan(text string) Span { return spanOf(analysis.Words(text)) }

// spanOf is ParseSpan of the text whose words (analysis.Words) are w.
func spanOf(w []string) Span {
	year := func(i int) int {
		if i < 0 || i >= len(w) || len(w[i]) != 4 || !allDigits(w[i]) {
			return 0
		}
		y, _ := strconv.Atoi(w[i])
		if y < 1900 || y > 2199 {
			return 0
		}
		return y
	}
	day := func(i int) int {
		if i < 0 || i >= len(w) {
			return 0
		}
		s := strings.TrimRight(w[i], "stndrh")
		if s == "" || len(s) > 2 || !allDigits(s) {
			return 0
		}
		d, _ := strconv.Atoi(s)
		if d < 1 || d > 31 {
			return 0
		}
		return d
	}
	var monthOnly Span
	for i, x := range w {
		m, ok := months[x]
		if !ok {
			continue
		}
		d, y := day(i-1), year(i+1)
		if d == 0 {
			if d = day(i + 1); d != 0 {
				y = year(i + 2)
			}
		}
		if d != 0 && y != 0 {
			from := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
			return Span{From: from, To: from.AddDate(0, 0, 1)}
		}
		if x == "may" && d == 0 && y == 0 {
			continue
		}
		if monthOnly.IsZero() {
			if y != 0 {
				from := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
				monthOnly = Span{From: from, To: from.AddDate(0, 1, 0)}
			} else {
				monthOnly = Span{From: time.Date(2000, m, 1, 0, 0, 0, 0, time.UTC), AnyYear: true}
			}
		}
	}
	if !monthOnly.IsZero() {
		return monthOnly
	}
	for i := range w {
		if y := year(i); y != 0 {
			from := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
			return Span{From: from, To: from.AddDate(1, 0, 0)}
		}
	}
	return Span{}
}
