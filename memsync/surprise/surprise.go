// Package surprise is SPEC §9's gate for learning-tier records: Score, a
// deterministic, pure function of a new record and the agent's recent
// records, and Recent, which reads those records from the journals fast
// enough for `memsync append` (no graph, no daemon, no heavy imports: the
// front binary links it).
//
// # The score
//
// Words are runs of letters and digits, lower-cased; a few function words
// and the negations are left out of the comparison.
//
// # Why not memsync/analysis
//
// Every other word comparison in memsync goes through memsync/analysis
// (stopwords, diacritics, Porter stems); the gate keeps this lighter
// splitter because the analyzer costs `memsync append` measurable time.
// Measured on 2026-11-26 (2 shared cores, go1.26, an agent with 5,000
// recent records of 5–28 English words, the gate's words hashed from
// analysis.AppendText with the negations found beforehand): the front
// binary grew 18.5 KB (5,034,522 → 5,053,073 bytes, +0.4 %); an append
// whose index is current kept its time (2.8 ms median, n=60); one that
// reads 200 journal lines past its index took 4.8 ms instead of 3.8 ms
// (median, n=80); one that rebuilds the index (the first on a host, then
// every 257th) took 279 ms instead of 175 ms (median; minimum 72 against
// 42 ms), stemming being most of it. The gate compares an agent's new
// record with its own recent ones, where a writer's repeated word forms
// matter less than in a search.
//
//   - novelty = 1 − the highest similarity between the new record and any
//     recent record: the Jaccard of the words, or, with an embedder (see
//     Vectors), the greater of that and the mapped cosine of the vectors;
//   - topic novelty = the share of the new record's entities and tags
//     (declared, or @name, #tag, [[Wiki Link]] in its text) whose words no
//     recent record holds;
//   - score = min(1, novelty + 0.4 × topic novelty);
//   - contradiction: a recent record at least 0.5 similar (words only)
//     whose negation
//     (not, never, no longer, …) differs, or conflicts_with: at least 0.9;
//   - correction language ("no, actually", "that's wrong", …): at least 0.9.
//
// ≥ 0.7 is stored; 0.4–0.7 is stored with confidence low; below 0.4 is
// skipped. Always stored, whatever the score: kind correction, correction
// language, a contradiction, kind outcome, remember: true, and every
// record that is not of the learning tier (those are never gated).
package surprise

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
)

// Thresholds (SPEC §9).
const (
	StoreAt       = 0.7 // ≥: stored
	LowAt         = 0.4 // ≥ and < StoreAt: stored with confidence low
	ContradictsAt = 0.5 // similarity from which a negation flip is a contradiction
	AlwaysScore   = 0.9 // the floor of a correction or contradiction
)

// The weights of the blend.
const (
	noveltyWeight = 1.0
	topicWeight   = 0.4
)

// Decision is what the gate does with a record.
type Decision string

// The three decisions.
const (
	Store    Decision = "store"     // written as is
	StoreLow Decision = "store-low" // written with confidence: low
	Skip     Decision = "skip"      // not written
)

// Prior is what the gate reads of one recent record.
type Prior struct {
	UUID     string
	Text     string
	Entities []string // declared entities and tags
}

// Result is the gate's verdict on a record.
type Result struct {
	Gated    bool     // false for records the gate never looks at (not learning tier)
	Score    float64  // 0 to 1, two decimals
	Decision Decision // Store for every always-stored record
	// Always names the always-stored case that applied ("" when none).
	Always string
	// Reason says why, in a few words: "near-duplicate of mem_… (similarity 0.91)".
	Reason string
	// Match is the most similar recent record ("" when none).
	Match      string
	Similarity float64
}

// Gated reports whether a record goes through the gate at all: the
// learning tier only (core, working and untiered records never do).
func Gated(r *journal.Record) bool { return r.Tier == "learning" }

// Remember reports whether r carries remember: true.
func Remember(r *journal.Record) bool {
	raw, ok := r.Extra["remember"]
	if !ok {
		return false
	}
	var b bool
	return json.Unmarshal(raw, &b) == nil && b
}

// correctionPhrases are the correction language of SPEC §9, matched in the
// lower-cased text with curly apostrophes made straight.
var correctionPhrases = []string{
	"no, actually", "no actually", "actually, no", "that's wrong", "that is wrong", "that was wrong",
	"this is wrong", "that's not right", "that is not right", "that's incorrect", "that is incorrect",
	"i was wrong", "we were wrong", "correction:", "not true", "that's not true", "turns out",
	"scratch that", "i stand corrected", "wrong:",
}

// Correction reports whether text uses correction language.
func Correction(text string) bool {
	t := strings.ToLower(strings.ReplaceAll(text, "’", "'"))
	for _, p := range correctionPhrases {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}

// Score is the gate's verdict on rec against the agent's recent records,
// newest first (the order matters only for ties: the first wins). It does
// not change rec. Records that are not of the learning tier are not gated.
func Score(rec *journal.Record, recent []Prior) Result {
	return NewIndex(recent).Score(rec)
}

// ScoreVectors is Score with novelty measured on words and on emb's
// vectors (see Vectors); a nil emb is Score.
func ScoreVectors(rec *journal.Record, recent []Prior, emb Embedder) Result {
	return NewIndexVectors(recent, emb).Score(rec)
}

// Score is the gate's verdict on rec against the records x holds: the
// same as Score with those records.
func (x *Index) Score(rec *journal.Record) Result {
	if !Gated(rec) {
		return Result{Decision: Store, Reason: "not gated: " + tierName(rec.Tier) + " tier"}
	}
	words := newWordSet(rec.Text)
	negated := hasNegation(rec.Text)
	topics := topicWords(rec)
	res := Result{Gated: true}

	// Similarity: count, per record, the new record's words it holds.
	inter := map[uint32]int{}
	for w := range words {
		x.each(w, func(id uint32, text bool) {
			if text {
				inter[id]++
			}
		})
	}
	best, bestID := -1.0, uint32(0)
	consider := func(id uint32, sim float64) {
		if sim > best || sim == best && id < bestID {
			best, bestID = sim, id
		}
	}
	for id, n := range inter {
		consider(id, float64(n)/float64(len(words)+int(x.rec(id).distinct)-n))
	}
	if best <= 0 && x.Len() > 0 {
		// No word in common: similarity 0 with the newest record, or 1
		// with one that, like the new record, has no words at all.
		consider(0, 0)
		if len(words) == 0 {
			for id := uint32(0); id < uint32(x.Len()); id++ {
				if x.rec(id).distinct == 0 {
					consider(id, 1)
					break
				}
			}
		}
	}
	// Contradiction is a matter of words: keep the word match apart.
	wordBest, wordMatch, wordNeg := best, "", false
	if best >= 0 {
		r := x.rec(bestID)
		wordMatch, wordNeg = r.uuid, r.neg
	}
	if vb, vid, ok := x.vectorBest(rec.Text); ok && vb > best {
		best, bestID = vb, vid
	}
	if best >= 0 {
		res.Match = x.rec(bestID).uuid
	}
	seen := make([]bool, len(topics)) // per topic: every word seen
	for i, tw := range topics {
		seen[i] = true
		for _, w := range tw {
			found := false
			x.each(w, func(uint32, bool) { found = true })
			seen[i] = seen[i] && found
		}
	}
	novelty := 1.0
	if best >= 0 {
		novelty = 1 - best
		res.Similarity = round(best)
	} else {
		res.Match = ""
	}
	topicNovelty, newTopics := 0.0, 0
	if len(topics) > 0 {
		for _, s := range seen {
			if !s {
				newTopics++
			}
		}
		topicNovelty = float64(newTopics) / float64(len(topics))
	}
	s := math.Min(1, noveltyWeight*novelty+topicWeight*topicNovelty)
	switch {
	case res.Match == "":
		res.Reason = "nothing recent to compare with"
	case best >= 0.8:
		res.Reason = fmt.Sprintf("near-duplicate of %s (similarity %.2f)", res.Match, res.Similarity)
	default:
		res.Reason = fmt.Sprintf("closest recent record %s (similarity %.2f)", res.Match, res.Similarity)
	}
	if newTopics > 0 {
		res.Reason += fmt.Sprintf("; %d new topic(s)", newTopics)
	}

	contradiction := len(rec.ConflictsWith) > 0
	if !contradiction && wordMatch != "" && wordBest >= ContradictsAt && wordNeg != negated { // Contradicts' rule
		contradiction = true
		res.Reason = fmt.Sprintf("contradicts %s (similarity %.2f, negation differs)", wordMatch, round(wordBest))
	}
	correction := rec.Kind == journal.KindCorrection || Correction(rec.Text)
	if contradiction || correction {
		s = math.Max(s, AlwaysScore)
	}
	res.Score = round(s)
	switch {
	case correction:
		res.Always = "correction"
	case contradiction:
		res.Always = "contradiction"
	case rec.Kind == journal.KindOutcome:
		res.Always = "outcome"
	case Remember(rec):
		res.Always = "remember"
	}
	switch {
	case res.Always != "":
		res.Decision = Store
	case res.Score >= StoreAt:
		res.Decision = Store
	case res.Score >= LowAt:
		res.Decision = StoreLow
	default:
		res.Decision = Skip
	}
	return res
}

func tierName(t string) string {
	if t == "" {
		return "no"
	}
	return t
}

func round(v float64) float64 { return math.Round(v*100) / 100 }

// topicWords is, per entity or tag of rec, its words.
func topicWords(rec *journal.Record) [][]uint64 {
	var names []string
	names = append(names, rec.Entities...)
	names = append(names, rec.Tags...)
	names = append(names, journal.ExtractEntities(rec.Text)...)
	seen := map[string]bool{}
	var out [][]uint64
	for _, n := range names {
		key := strings.ToLower(strings.TrimLeft(n, "@#"))
		if seen[key] {
			continue
		}
		seen[key] = true
		var ws []uint64
		eachWord(n, func(h uint64, _ bool) { ws = append(ws, h) })
		if len(ws) > 0 {
			out = append(out, ws)
		}
	}
	return out
}

// wordSet is the distinct words of the new record.
type wordSet map[uint64]struct{}

func newWordSet(text string) wordSet {
	s := wordSet{}
	eachWord(text, func(h uint64, neg bool) {
		if !neg {
			s[h] = struct{}{}
		}
	})
	return s
}

func hasNegation(text string) bool {
	neg := false
	eachWord(text, func(_ uint64, isNeg bool) { neg = neg || isNeg })
	return neg
}

// stop and negation words, by hash.
var stopWords, negWords = hashes(
	"a an the and or of to in on at for is are was were be been it its this that with as by from we i you they he she our my your their so then than also just",
), hashes("not no never none nobody nothing nowhere neither nor don't doesn't didn't isn't aren't wasn't weren't won't wouldn't can't cannot couldn't shouldn't hasn't haven't hadn't dont doesnt didnt isnt arent wasnt werent wont cant shouldnt")

func hashes(words string) map[uint64]bool {
	m := map[uint64]bool{}
	for _, w := range strings.Fields(words) {
		eachWordRaw(w, func(h uint64) { m[h] = true })
	}
	return m
}

// eachWord calls fn with the hash of every word of text that is not a
// stop word, and whether it is a negation.
func eachWord(text string, fn func(h uint64, neg bool)) {
	eachWordRaw(text, func(h uint64) {
		switch {
		case negWords[h]:
			fn(h, true)
		case stopWords[h]:
		default:
			fn(h, false)
		}
	})
}

// eachWordRaw calls fn with the FNV-1a hash of every word of text: a run
// of letters, digits and apostrophes, lower-cased (trailing apostrophes
// dropped). ASCII takes a fast path; it allocates nothing.
func eachWordRaw(text string, fn func(h uint64)) {
	const offset, prime = 14695981039346656037, 1099511628211
	h, n := uint64(offset), 0
	apos := 0 // trailing apostrophes not yet hashed
	flush := func() {
		if n > 0 {
			fn(h)
		}
		h, n, apos = offset, 0, 0
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
				fallthrough
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				for ; apos > 0; apos-- {
					h = (h ^ '\'') * prime
				}
				h = (h ^ uint64(c)) * prime
				n++
			case c == '\'' && n > 0:
				apos++
			default:
				flush()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r == '’' && n > 0:
			apos++
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			for ; apos > 0; apos-- {
				h = (h ^ '\'') * prime
			}
			r = unicode.ToLower(r)
			var buf [utf8.UTFMax]byte
			for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
				h = (h ^ uint64(b)) * prime
			}
			n++
		default:
			flush()
		}
	}
	flush()
}

// Words is what the gate compares of a text: its distinct words (hashes,
// sorted; stop words and negations left out) and whether it is negated.
type Words struct {
	Hashes  []uint64
	Negated bool
}

// TextWords is the Words of text.
func TextWords(text string) Words {
	var w Words
	eachWord(text, func(h uint64, neg bool) {
		if neg {
			w.Negated = true
			return
		}
		w.Hashes = append(w.Hashes, h)
	})
	slices.Sort(w.Hashes)
	w.Hashes = slices.Compact(w.Hashes)
	return w
}

// Similarity is the Jaccard similarity of the words of a and b, as the
// gate computes it (1 when both have none).
func Similarity(a, b Words) float64 {
	if len(a.Hashes) == 0 && len(b.Hashes) == 0 {
		return 1
	}
	inter := 0
	for i, j := 0, 0; i < len(a.Hashes) && j < len(b.Hashes); {
		switch {
		case a.Hashes[i] == b.Hashes[j]:
			inter++
			i++
			j++
		case a.Hashes[i] < b.Hashes[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a.Hashes)+len(b.Hashes)-inter)
}

// Contradicts reports whether two texts contradict each other as the gate
// sees it: at least ContradictsAt similar, one negated and the other not.
func Contradicts(a, b Words) bool {
	return a.Negated != b.Negated && Similarity(a, b) >= ContradictsAt
}

// Duplicates reports whether two texts are duplicates as the gate sees
// it: the same words (case, punctuation, order and stop words aside) and
// the same negation.
func Duplicates(a, b Words) bool {
	return a.Negated == b.Negated && len(a.Hashes) > 0 && slices.Equal(a.Hashes, b.Hashes)
}
