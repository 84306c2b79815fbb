package recall

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync/analysis"
)

func TestParseQuery(t *testing.T) {
	for _, c := range []struct {
		text  string
		terms []string
		when  bool
	}{
		{"When did Caroline join the group?", []string{"carolin", "join", "group"}, true},
		{"What year did Melanie start painting?", []string{"year", "melani", "start", "paint"}, true},
		{"What does Caroline paint?", []string{"carolin", "paint"}, false},
		{"what is it", nil, false},
		{"", nil, false},
	} {
		q := ParseQuery(c.text)
		if !slices.Equal(q.Terms, c.terms) || q.When != c.when {
			t.Errorf("ParseQuery(%q) = %q, when %v; want %q, %v", c.text, q.Terms, q.When, c.terms, c.when)
		}
	}
}

func TestTimed(t *testing.T) {
	for text, want := range map[string]bool{
		"We went camping last week":   true,
		"I started in 2019":           true,
		"Sunday was fun":              true,
		"I love painting sunsets":     false,
		"room 2048 is on floor three": true, // a four-digit 20xx reads as a year
		"call 5551234":                false,
	} {
		if got := Timed(text); got != want {
			t.Errorf("Timed(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestRank: the rule on small cases, each naming what it shows.
func TestRank(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	for _, c := range []struct {
		name  string
		q     Query
		cands []Candidate
		links []Link
		want  []string
	}{
		{"lexical order, ties newest then uuid", Query{}, []Candidate{
			{UUID: "b", TS: at(1), Lexical: 1}, {UUID: "a", TS: at(1), Lexical: 1}, {UUID: "c", TS: at(2), Lexical: 1}, {UUID: "d", TS: at(0), Lexical: 2},
		}, nil, []string{"d", "c", "a", "b"}},
		{"a neighbour joins, weaker than its source", Query{}, []Candidate{
			{UUID: "q", TS: at(1), Lexical: 2}, {UUID: "ans", TS: at(2)}, {UUID: "other", TS: at(9), Lexical: 1},
		}, []Link{{From: "q", To: "ans", Dist: 1}}, []string{"q", "ans", "other"}},
		{"a lift fades with distance", Query{}, []Candidate{
			{UUID: "q", TS: at(1), Lexical: 2}, {UUID: "far", TS: at(3)}, {UUID: "near", TS: at(2)},
		}, []Link{{From: "q", To: "far", Dist: 2}, {From: "q", To: "near", Dist: 1}}, []string{"q", "near", "far"}},
		{"a weak hit next to a strong one overtakes a lone one", Query{}, []Candidate{
			{UUID: "strong", TS: at(1), Lexical: 3}, {UUID: "weak", TS: at(2), Lexical: 1}, {UUID: "lone", TS: at(9), Lexical: 2},
		}, []Link{{From: "strong", To: "weak", Dist: 1}, {From: "weak", To: "strong", Dist: 1}}, []string{"strong", "weak", "lone"}},
		{"links from or to unknown uuids, or from non-hits, are ignored", Query{}, []Candidate{
			{UUID: "a", TS: at(1), Lexical: 1}, {UUID: "n", TS: at(2)},
		}, []Link{{From: "x", To: "n", Dist: 1}, {From: "a", To: "x", Dist: 1}, {From: "n", To: "a", Dist: 1}}, []string{"a"}},
		{"a when question favours a memory that names a time", Query{When: true}, []Candidate{
			{UUID: "plain", TS: at(2), Lexical: 1.2}, {UUID: "dated", TS: at(1), Lexical: 1, Timed: true},
		}, nil, []string{"dated", "plain"}},
		{"a hit holding more of the query outranks a stronger one holding less", Query{Terms: []string{"carolin", "adopt", "dog"}}, []Candidate{
			{UUID: "one", TS: at(2), Lexical: 1.5, Match: 0b001}, {UUID: "all", TS: at(1), Lexical: 1, Match: 0b111},
		}, nil, []string{"all", "one"}},
		{"a rare query term weighs more than a common one", Query{Terms: []string{"carolin", "adopt"}}, []Candidate{
			{UUID: "name1", TS: at(4), Lexical: 1, Match: 0b01}, {UUID: "name2", TS: at(3), Lexical: 1, Match: 0b01},
			{UUID: "name3", TS: at(2), Lexical: 1, Match: 0b01}, {UUID: "rare", TS: at(1), Lexical: 1, Match: 0b10},
		}, nil, []string{"rare", "name1", "name2", "name3"}},
		{"a hit whose terms are unknown (Match 0) keeps its lexical score", Query{Terms: []string{"a", "b"}}, []Candidate{
			{UUID: "known", TS: at(2), Lexical: 1.5, Match: 0b01}, {UUID: "unknown", TS: at(1), Lexical: 1},
		}, nil, []string{"unknown", "known"}},
		{"other questions do not", Query{}, []Candidate{
			{UUID: "plain", TS: at(2), Lexical: 1.2}, {UUID: "dated", TS: at(1), Lexical: 1, Timed: true},
		}, nil, []string{"plain", "dated"}},
	} {
		var got []string
		for _, r := range Rank(c.q, c.cands, c.links) {
			got = append(got, r.UUID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCover(t *testing.T) {
	q := Query{Terms: []string{"x", "y"}}
	cov := Cover(q, []Candidate{
		{UUID: "x1", Lexical: 1, Match: 0b01}, {UUID: "x2", Lexical: 1, Match: 0b01},
		{UUID: "xy", Lexical: 1, Match: 0b11}, {UUID: "near", Match: 0b10}, {UUID: "unknown", Lexical: 1},
	})
	if cov["xy"] != 1 || !(cov["x1"] > 0 && cov["x1"] < 0.5) || cov["x1"] != cov["x2"] {
		t.Errorf("Cover = %v: want xy 1, x1 = x2 below one half (x is the commoner term)", cov)
	}
	if _, ok := cov["near"]; ok {
		t.Errorf("Cover gave a share to a neighbour that is not a lexical hit")
	}
	if _, ok := cov["unknown"]; ok {
		t.Errorf("Cover gave a share to a hit of unknown terms")
	}
}

func TestLinks(t *testing.T) {
	got := Links("s", []string{"b1", "b2", "b3"}, []string{"a1"})
	want := []Link{{"s", "b1", 1}, {"s", "b2", 2}, {"s", "a1", 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("Links = %v, want %v", got, want)
	}
	if PoolSize(5) != Pool || PoolSize(500) != 500 {
		t.Fatalf("PoolSize")
	}
}

// TestOrderKeepsSupersets: whatever the scores, no item ranks below one
// it dominates, and where no dominance is at stake less's order stands.
func TestOrderKeepsSupersets(t *testing.T) {
	type item struct {
		id    int
		score float64
		match uint64
	}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 500; round++ {
		items := make([]item, 1+rng.Intn(40))
		for i := range items {
			items[i] = item{i, rng.Float64(), uint64(rng.Intn(16))}
		}
		Order(items, func(a, b item) bool { return a.score > b.score || a.score == b.score && a.id < b.id },
			func(it item) uint64 { return it.match })
		for i := range items {
			for _, later := range items[i+1:] {
				if Dominates(later.match, items[i].match) {
					t.Fatalf("round %d: %+v ranks above %+v, which holds more", round, items[i], later)
				}
				if items[i].match == later.match && items[i].score < later.score {
					t.Fatalf("round %d: equal matches out of score order: %+v before %+v", round, items[i], later)
				}
			}
		}
	}
	// No dominance at stake: the order is less's.
	items := []item{{0, 0.1, 1}, {1, 0.9, 2}, {2, 0.5, 4}}
	Order(items, func(a, b item) bool { return a.score > b.score }, func(it item) uint64 { return it.match })
	if items[0].id != 1 || items[1].id != 2 || items[2].id != 0 {
		t.Fatalf("order %+v, want by score", items)
	}
}

// TestFieldsCountInTheCover: a term held only in tags or entities counts
// as held (it is in Match), at MetaCover of its weight; where each term
// is held is named by query word.
func TestFieldsCountInTheCover(t *testing.T) {
	q := ParseQuery("postgres billing")
	fields := func(text string, tags, entities []string) Fields {
		return Fields{Text: analysis.Holds(q.Terms, text), Tags: analysis.Holds(q.Terms, tags...), Entities: analysis.Holds(q.Terms, entities...)}
	}
	said := fields("Keep postgres as is", nil, nil)
	tagged := fields("Upgrade webhooks dependencies", []string{"billing"}, nil)
	ent := fields("nothing here", nil, []string{"Billing"})
	for _, c := range []struct {
		f     Fields
		match uint64
		says  string
	}{
		{said, 0b01, "text: postgres"},
		{tagged, 0b10, "tag: billing"},
		{ent, 0b10, "entity: billing"},
		{fields("billing", []string{"billing", "postgres"}, nil), 0b11, "text: billing; tag: postgres"},
	} {
		if c.f.All() != c.match || c.f.Describe(q) != c.says {
			t.Errorf("%+v: holds %b (%q), want %b (%q)", c.f, c.f.All(), c.f.Describe(q), c.match, c.says)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cands := []Candidate{
		{UUID: "said", TS: t0, Lexical: 1, Match: said.All(), Fields: said},
		{UUID: "tagged", TS: t0, Lexical: 1, Match: tagged.All(), Fields: tagged},
	}
	cover := Cover(q, cands)
	if cover["tagged"] != MetaCover*cover["said"] || cover["said"] != 0.5 {
		t.Errorf("cover %v: want said 0.5, tagged %v of it", cover, MetaCover)
	}
	if got := Rank(q, cands, nil); got[0].UUID != "said" {
		t.Errorf("Rank = %v, want said first", got)
	}
}

// TestNeighbourFrom: a neighbour that is no lexical hit names the hit
// whose lift brought it in (the strongest); a lexical hit names none.
func TestNeighbourFrom(t *testing.T) {
	q := Query{Terms: []string{"x"}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cands := []Candidate{
		{UUID: "strong", TS: t0, Lexical: 2, Match: 1},
		{UUID: "weak", TS: t0, Lexical: 1, Match: 1},
		{UUID: "n", TS: t0},
	}
	links := []Link{{From: "weak", To: "n", Dist: 1}, {From: "strong", To: "n", Dist: 1}, {From: "strong", To: "weak", Dist: 1}}
	for _, r := range Rank(q, cands, links) {
		want := map[string]string{"n": "strong"}[r.UUID]
		if r.From != want {
			t.Errorf("%s: From %q, want %q", r.UUID, r.From, want)
		}
	}
}

// TestOrderFrom: an item stays below the one that brought it in, even
// when the superset rule skips that one (Order alone would place the
// neighbour first), and the superset property holds.
func TestOrderFrom(t *testing.T) {
	type it struct {
		id    string
		score float64
		match uint64
		from  int
	}
	for _, c := range []struct {
		items []it
		want  string
	}{
		// s is dominated by x; n (brought in by s) scores above x.
		{[]it{{"s", 0.8, 0b01, -1}, {"n", 0.79, 0, 0}, {"x", 0.3, 0b11, -1}}, "x s n"},
		{[]it{{"n", 0.9, 0, 1}, {"s", 0.5, 0b1, -1}, {"z", 0.7, 0b10, -1}}, "z s n"},
		{[]it{{"a", 0.9, 0b1, -1}, {"b", 0.5, 0b10, -1}}, "a b"},
	} {
		items := slices.Clone(c.items)
		OrderFrom(items, func(a, b it) bool { return a.score > b.score }, func(x it) uint64 { return x.match },
			func(x it) int { return x.from })
		var got []string
		for _, x := range items {
			got = append(got, x.id)
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("OrderFrom(%v) = %s, want %s", c.items, s, c.want)
		}
	}
}
