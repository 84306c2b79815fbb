package analysis

// Stem reduces an English word (lowercase) to its stem with the Porter
// algorithm (M. F. Porter, "An algorithm for suffix stripping", 1980), the
// one SQLite's porter tokenizer and Lucene's PorterStemFilter implement.
// Words of two letters or fewer, and words that are not plain ASCII
// lowercase letters (digits, other scripts), are returned as they are.
func Stem(word string) string {
	if !stemmable(word) {
		return word
	}
	return string(stem([]byte(word)))
}

// stemmable reports whether Stem changes anything of word: three letters
// or more, all ASCII lowercase.
func stemmable[S string | []byte](word S) bool {
	if len(word) <= 2 {
		return false
	}
	for i := 0; i < len(word); i++ {
		if c := word[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// stem stems b (stemmable) in place, and returns it: the stem is never
// more than one byte longer, and only appends when b has no room.
func stem(b []byte) []byte {
	s := stemmer{b: b}
	s.step1ab()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return s.b
}

// stemmer holds the word being stemmed; j marks the end of the stem that a
// suffix test (ends) left, as in Porter's reference implementation.
type stemmer struct {
	b []byte
	j int
}

// cons reports whether b[i] is a consonant: not a vowel, and y only when
// it follows a vowel or starts the word.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// m measures the stem b[:j]: the number of vowel-consonant sequences.
func (s *stemmer) m() int {
	n, i := 0, 0
	for ; i < s.j && s.cons(i); i++ {
	}
	for i < s.j {
		for ; i < s.j && !s.cons(i); i++ {
		}
		if i >= s.j {
			break
		}
		n++
		for ; i < s.j && s.cons(i); i++ {
		}
	}
	return n
}

// vowelInStem reports whether b[:j] holds a vowel.
func (s *stemmer) vowelInStem() bool {
	for i := 0; i < s.j; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doubleC reports whether b[i-1:i+1] is a double consonant.
func (s *stemmer) doubleC(i int) bool {
	return i >= 1 && s.b[i] == s.b[i-1] && s.cons(i)
}

// cvc reports whether b[i-2:i+1] is consonant-vowel-consonant, the last
// not w, x or y: the stem of hop(e), not of hoop.
func (s *stemmer) cvc(i int) bool {
	if i < 2 || !s.cons(i) || s.cons(i-1) || !s.cons(i-2) {
		return false
	}
	switch s.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether the word ends in suffix, and sets j to where it starts.
func (s *stemmer) ends(suffix string) bool {
	n := len(suffix)
	if n > len(s.b) || s.b[len(s.b)-1] != suffix[n-1] || string(s.b[len(s.b)-n:]) != suffix {
		return false
	}
	s.j = len(s.b) - n
	return true
}

// setTo replaces b[j:] with r.
func (s *stemmer) setTo(r string) { s.b = append(s.b[:s.j], r...) }

// replace replaces the suffix ends found with r when the stem's measure is > 0.
func (s *stemmer) replace(r string) {
	if s.m() > 0 {
		s.setTo(r)
	}
}

func (s *stemmer) step1ab() {
	if s.b[len(s.b)-1] == 's' {
		switch {
		case s.ends("sses"):
			s.b = s.b[:len(s.b)-2]
		case s.ends("ies"):
			s.setTo("i")
		case len(s.b) >= 2 && s.b[len(s.b)-2] != 's':
			s.b = s.b[:len(s.b)-1]
		}
	}
	if s.ends("eed") {
		if s.m() > 0 {
			s.b = s.b[:len(s.b)-1]
		}
		return
	}
	if !(s.ends("ed") || s.ends("ing")) || !s.vowelInStem() {
		return
	}
	s.b = s.b[:s.j]
	s.j = len(s.b)
	switch {
	case s.ends("at"):
		s.setTo("ate")
	case s.ends("bl"):
		s.setTo("ble")
	case s.ends("iz"):
		s.setTo("ize")
	case s.doubleC(len(s.b) - 1):
		switch s.b[len(s.b)-1] {
		case 'l', 's', 'z':
		default:
			s.b = s.b[:len(s.b)-1]
		}
	default:
		s.j = len(s.b)
		if s.m() == 1 && s.cvc(len(s.b)-1) {
			s.b = append(s.b, 'e')
		}
	}
}

func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelInStem() {
		s.b[len(s.b)-1] = 'i'
	}
}

// step2Rules and step3Rules map suffixes to replacements; the first suffix
// that matches decides, whether or not the stem is long enough.
var step2Rules = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Rules = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

func (s *stemmer) rules(rules [][2]string) {
	for _, r := range rules {
		if s.ends(r[0]) {
			s.replace(r[1])
			return
		}
	}
}

func (s *stemmer) step2() { s.rules(step2Rules) }
func (s *stemmer) step3() { s.rules(step3Rules) }

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
	"ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

func (s *stemmer) step4() {
	for _, suf := range step4Suffixes {
		if !s.ends(suf) {
			continue
		}
		if suf == "ion" && (s.j == 0 || s.b[s.j-1] != 's' && s.b[s.j-1] != 't') {
			continue
		}
		if s.m() > 1 {
			s.b = s.b[:s.j]
		}
		return
	}
}

func (s *stemmer) step5() {
	s.j = len(s.b)
	if s.b[len(s.b)-1] == 'e' {
		s.j = len(s.b) - 1
		if m := s.m(); m > 1 || m == 1 && !s.cvc(len(s.b)-2) {
			s.b = s.b[:len(s.b)-1]
		}
	}
	s.j = len(s.b)
	if s.b[len(s.b)-1] == 'l' && s.doubleC(len(s.b)-1) && s.m() > 1 {
		s.b = s.b[:len(s.b)-1]
	}
}
