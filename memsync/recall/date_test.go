package recall

import (
	"testing"
	"time"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestParseSpan(t *testing.T) {
	for _, c := range []struct {
		text     string
		from, to time.Time
		anyYear  bool
	}{
		{"Which team did John sign with on 21 May, 2023?", day(2023, 5, 21), day(2023, 5, 22), false},
		{"What was Tim's huge writing issue last week, as mentioned on November 6, 2023?", day(2023, 11, 6), day(2023, 11, 7), false},
		{"What book did Tim just finish reading on 8th December, 2023?", day(2023, 12, 8), day(2023, 12, 9), false},
		{"What new activity has Tim started learning in August 2023?", day(2023, 8, 1), day(2023, 9, 1), false},
		{"What kind of deal did John get in December?", day(2000, 12, 1), time.Time{}, true},
		{"When did John get an ankle injury in 2023?", day(2023, 1, 1), day(2024, 1, 1), false},
		{"What may Caroline do next?", time.Time{}, time.Time{}, false},
		{"Where did they meet?", time.Time{}, time.Time{}, false},
	} {
		s := ParseSpan(c.text)
		if !s.From.Equal(c.from) || !s.To.Equal(c.to) || s.AnyYear != c.anyYear {
			t.Errorf("ParseSpan(%q) = %+v, want %v..%v any year %v", c.text, s, c.from, c.to, c.anyYear)
		}
	}
}

func TestSpanHolds(t *testing.T) {
	aug := ParseSpan("in August 2023")
	if !aug.Holds(day(2023, 8, 31), 0) || aug.Holds(day(2023, 9, 1), 0) || !aug.Holds(day(2023, 9, 1), 24*time.Hour) || aug.Holds(day(2022, 8, 5), 0) {
		t.Errorf("August 2023 holds the wrong days")
	}
	dec := ParseSpan("in December")
	if !dec.Holds(day(2021, 12, 5), 0) || !dec.Holds(day(2024, 1, 1), 24*time.Hour) || dec.Holds(day(2024, 1, 3), 24*time.Hour) || dec.Holds(day(2023, 11, 5), 0) {
		t.Errorf("December (any year) holds the wrong days")
	}
	if (Span{}).Holds(day(2023, 1, 1), time.Hour) {
		t.Errorf("no span holds nothing")
	}
}

func TestEpisode(t *testing.T) {
	t0 := day(2023, 5, 1)
	side := []time.Time{t0.Add(-time.Minute), t0.Add(-20 * time.Minute), t0.Add(-60 * time.Minute)}
	if got := Episode(t0, side); got != 2 {
		t.Errorf("Episode = %d, want 2 (the third is %v after the second)", got, 40*time.Minute)
	}
	if got := Episode(t0, []time.Time{t0.Add(EpisodeGap + time.Second)}); got != 0 {
		t.Errorf("a neighbour past the gap joined")
	}
	if got := Episode(t0, []time.Time{t0.Add(EpisodeGap)}); got != 1 {
		t.Errorf("a neighbour at the gap did not join")
	}
}

// TestDateBoost: a lexical hit whose ts falls in the time the query names
// ranks above an equal one that does not, and says so (Boosts.Date).
func TestDateBoost(t *testing.T) {
	q := ParseQuery("What did Tim learn in August 2023?")
	cands := []Candidate{
		{UUID: "a", TS: day(2023, 8, 10), Lexical: 1, Match: 1},
		{UUID: "b", TS: day(2023, 10, 10), Lexical: 1, Match: 1},
	}
	r := Rank(q, cands, nil)
	if r[0].UUID != "a" || r[0].Boosts.Date != 1+DateBoost || r[1].Boosts.Date != 0 {
		t.Fatalf("Rank = %+v", r)
	}
}
