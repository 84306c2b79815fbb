package analysis

import (
	"slices"
	"strings"
	"testing"
)

// TestStemPorter: the examples of Porter's paper and his test vocabulary.
func TestStemPorter(t *testing.T) {
	for _, c := range [][2]string{
		{"caresses", "caress"}, {"ponies", "poni"}, {"ties", "ti"}, {"caress", "caress"}, {"cats", "cat"},
		{"feed", "feed"}, {"agreed", "agre"}, {"plastered", "plaster"}, {"bled", "bled"}, {"motoring", "motor"},
		{"sing", "sing"}, {"conflated", "conflat"}, {"troubled", "troubl"}, {"sized", "size"}, {"hopping", "hop"},
		{"tanned", "tan"}, {"falling", "fall"}, {"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"},
		{"filing", "file"}, {"happy", "happi"}, {"sky", "sky"}, {"relational", "relat"}, {"conditional", "condit"},
		{"rational", "ration"}, {"valenci", "valenc"}, {"digitizer", "digit"}, {"radicalli", "radic"},
		{"differentli", "differ"}, {"vileli", "vile"}, {"analogousli", "analog"}, {"vietnamization", "vietnam"},
		{"predication", "predic"}, {"operator", "oper"}, {"feudalism", "feudal"}, {"decisiveness", "decis"},
		{"hopefulness", "hope"}, {"callousness", "callous"}, {"formaliti", "formal"}, {"sensitiviti", "sensit"},
		{"sensibiliti", "sensibl"}, {"triplicate", "triplic"}, {"formative", "form"}, {"formalize", "formal"},
		{"electriciti", "electr"}, {"electrical", "electr"}, {"hopeful", "hope"}, {"goodness", "good"},
		{"revival", "reviv"}, {"allowance", "allow"}, {"inference", "infer"}, {"airliner", "airlin"},
		{"gyroscopic", "gyroscop"}, {"adjustable", "adjust"}, {"defensible", "defens"}, {"irritant", "irrit"},
		{"replacement", "replac"}, {"adjustment", "adjust"}, {"dependent", "depend"}, {"adoption", "adopt"},
		{"homologou", "homolog"}, {"communism", "commun"}, {"activate", "activ"}, {"angulariti", "angular"},
		{"homologous", "homolog"}, {"effective", "effect"}, {"bowdlerize", "bowdler"}, {"probate", "probat"},
		{"rate", "rate"}, {"cease", "ceas"}, {"controll", "control"}, {"roll", "roll"},
		{"generalizations", "gener"}, {"oscillators", "oscil"}, {"joined", "join"}, {"joining", "join"},
		{"is", "is"}, {"2023", "2023"}, {"café", "café"}, {"ing", "ing"}, {"sss", "sss"}, {"e", "e"},
	} {
		if got := Stem(c[0]); got != c[1] {
			t.Errorf("Stem(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// TestTerms: tokenisation, case, stopwords (question words included) and
// stemming, on the cases every search path relies on.
func TestTerms(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"When did Caroline join the LGBTQ support group?", []string{"carolin", "join", "lgbtq", "support", "group"}},
		{"Caroline joined a support group", []string{"carolin", "join", "support", "group"}},
		{"Use #postgres for @Mira's billing service", []string{"us", "postgr", "mira", "bill", "servic"}},
		{"what is it?", nil},
		{"-foo --bar", []string{"foo", "bar"}},
		{`"quoted" OR (NEAR) AND text:x*`, []string{"quot", "near", "text", "x"}},
		{"ÉCOLE Straße naïve cafe\u0301 Łódź", []string{"ecol", "straße", "naiv", "cafe", "lodz"}},
		{"\u0301 x² ½", []string{"x²", "½"}},
		{"東京 2023", []string{"東京", "2023"}},
		{"", nil},
	} {
		if got := Terms(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.text, got, c.want)
		}
		if got, want := Text(c.text), strings.Join(c.want, " "); got != want {
			t.Errorf("Text(%q) = %q, want %q", c.text, got, want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	if got, want := QueryTerms("join joined JOINING groups group"), []string{"join", "group"}; !slices.Equal(got, want) {
		t.Fatalf("QueryTerms = %q, want %q", got, want)
	}
	if got := QueryTerms("Who was it, and where?"); len(got) != 0 {
		t.Fatalf("a stopword-only query has terms %q", got)
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"When did Caroline join?", "a-b_c", "ÉCOLE", "\xff\xfe", "sses"} {
		f.Add(s)
	}
	var a Analyzer
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := Text(text), strings.Join(Terms(text), " "); got != want {
			t.Fatalf("Text(%q) = %q, Terms joined = %q", text, got, want)
		}
		for range 2 { // the second time from its memory of stems
			if got, want := string(a.AppendText(nil, text)), Text(text); got != want {
				t.Fatalf("Analyzer.AppendText(%q) = %q, AppendText %q", text, got, want)
			}
		}
		for _, term := range Terms(text) {
			if term == "" {
				t.Fatalf("empty term from %q", text)
			}
			for _, r := range term {
				if !WordRune(r) {
					t.Fatalf("term %q from %q holds %q", term, text, r)
				}
			}
		}
	})
}

// TestAnalyzer: the Analyzer's output is AppendText's, for repeated words
// (from its memory), for words it meets once, and after its memory filled
// and was forgotten.
func TestAnalyzer(t *testing.T) {
	var a Analyzer
	texts := []string{"Caroline joined the running group; running groups meet joined", "the relational rationalizations of operators", "café naïve 日本語 2023"}
	for i := 0; i < analyzerStems+1000; i++ {
		w := []byte("ing")
		for n := i; n > 0 || len(w) == 3; n /= 26 {
			w = append([]byte{byte('a' + n%26)}, w...)
		}
		texts = append(texts, string(w)+"s walking")
	}
	texts = append(texts, texts[:3]...)
	var buf []byte
	for _, text := range texts {
		buf = a.AppendText(buf[:0], text)
		if got, want := string(buf), Text(text); got != want {
			t.Fatalf("Analyzer.AppendText(%q) = %q, AppendText %q", text, got, want)
		}
	}
	if n := len(a.stems); n > analyzerStems {
		t.Fatalf("the Analyzer remembers %d stems, more than %d", n, analyzerStems)
	}
}

func BenchmarkAnalyzer(b *testing.B) {
	text := "Caroline: I joined the LGBTQ support group yesterday, and it was really powerful! #community @Melanie"
	var (
		a   Analyzer
		buf []byte
	)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buf = a.AppendText(buf[:0], text)
	}
}

func BenchmarkText(b *testing.B) {
	text := "Caroline: I joined the LGBTQ support group yesterday, and it was really powerful! #community @Melanie"
	var buf []byte
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buf = AppendText(buf[:0], text)
	}
}

// TestHolds: which of a query's terms texts hold, analyzed as the indexes
// analyze them (stems fold "adopted" into "adopt", case folds away), over
// one text or several (a memory's tags).
func TestHolds(t *testing.T) {
	terms := QueryTerms("When did Caroline adopt the dogs?")
	for _, tc := range []struct {
		texts []string
		want  uint64
	}{
		{[]string{"Caroline: we adopted a dog last week!"}, 0b111},
		{[]string{"Melanie: dogs are great"}, 0b100},
		{[]string{"Caroline: hi"}, 0b001},
		{[]string{"nothing here"}, 0},
		{[]string{"CAROLINE", "adoption", "dog"}, 0b111},
		{[]string{"CAROLINE", "dog"}, 0b101},
		{nil, 0},
	} {
		if got := Holds(terms, tc.texts...); got != tc.want {
			t.Errorf("Holds(%q) = %b, want %b", tc.texts, got, tc.want)
		}
	}
}
