package embed

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxWordChars is WordPiece's limit: a longer word is one [UNK].
const maxWordChars = 100

// vocabulary maps WordPiece tokens to ids (continuation pieces with their
// "##" prefix, as in vocab.txt). It is an open-addressing hash table over
// the vocabulary file's own bytes, itself held as bytes (little-endian
// uint32s in strings): built by newVocabulary for a model read from disk,
// or read in place from the built-in model's vocab.idx (vocabIndex), which
// newVocabulary wrote at build time, so that a process's first Embed of
// the built-in model costs no table build and no allocation.
type vocabulary struct {
	raw   string // vocab.txt
	spans string // token id → start, end offsets in raw: 2 × uint32
	table string // hash slot → token id + 1 (0: empty): uint32
	n     int    // tokens (ids)
	mask  uint32
	unk   int32

	// words keeps the pieces of words already split (up to wordsMax of
	// them): most words of a store recur, and WordPiece's longest-match
	// search costs several table probes a piece. The ids are the same
	// either way, so the vectors are.
	wordsMu sync.RWMutex
	words   map[string][]int32
	splits  atomic.Int64 // words split so far
}

// wordsMax bounds the word cache (about 100 bytes a word). The cache
// starts after wordsAfter words were split, so that a process embedding
// one query (a command's first Embed) allocates nothing for it.
const (
	wordsMax   = 1 << 14
	wordsAfter = 512
)

// newVocabulary indexes raw, one token a line ("\r\n" tolerated). A token
// that appears twice keeps its first id, as a map built line by line would.
func newVocabulary(raw string) *vocabulary {
	n := strings.Count(raw, "\n")
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		n++
	}
	size := uint32(1)
	for size < uint32(2*n+1) {
		size <<= 1
	}
	spans := make([]byte, 0, 8*n)
	table := make([]byte, 4*size)
	mask := size - 1
	id := int32(0)
	for off := 0; off < len(raw); id++ {
		e := strings.IndexByte(raw[off:], '\n')
		next := off + e + 1
		if e < 0 {
			e, next = len(raw)-off, len(raw)
		}
		tokEnd := off + e
		if tokEnd > off && raw[tokEnd-1] == '\r' {
			tokEnd--
		}
		spans = binary.LittleEndian.AppendUint32(spans, uint32(off))
		spans = binary.LittleEndian.AppendUint32(spans, uint32(tokEnd))
		tok := raw[off:tokEnd]
		for h := fnv32s(tok) & mask; ; h = (h + 1) & mask {
			slot := binary.LittleEndian.Uint32(table[4*h:])
			if slot == 0 {
				binary.LittleEndian.PutUint32(table[4*h:], uint32(id+1))
				break
			}
			other := spans[8*(slot-1):]
			if raw[binary.LittleEndian.Uint32(other):binary.LittleEndian.Uint32(other[4:])] == tok {
				break // a duplicate: the first id stays
			}
		}
		off = next
	}
	return &vocabulary{raw: raw, spans: string(spans), table: string(table), n: int(id), mask: mask, unk: -1}
}

// vocabIndexMagic starts a vocab.idx file: newVocabulary's table and
// spans for one vocab.txt, written by marshal and read in place by
// vocabIndex.
const vocabIndexMagic = "MSVIDXv1"

// vocabIndexHeader is the magic then four uint32: the vocabulary's length
// in bytes, its tokens, the table's slots, and the FNV-1a of its bytes
// (for tools and tests: vocabIndex does not hash the vocabulary).
const vocabIndexHeader = len(vocabIndexMagic) + 16

// marshal is v as a vocab.idx file.
func (v *vocabulary) marshal() []byte {
	b := []byte(vocabIndexMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v.raw)))
	b = binary.LittleEndian.AppendUint32(b, uint32(v.n))
	b = binary.LittleEndian.AppendUint32(b, v.mask+1)
	b = binary.LittleEndian.AppendUint32(b, fnv32s(v.raw))
	b = append(b, v.spans...)
	return append(b, v.table...)
}

// vocabIndex is the vocabulary of raw from idx, a vocab.idx file that
// marshal wrote for raw, read in place: nothing is copied or allocated
// but the struct. False when idx is not such a file. It checks the
// lengths, and that a sample of the table's tokens (vocabIndexSample) lie
// on raw's lines and are found under their own ids; hashing all of raw
// would cost a process ~0.25 ms (the built-in file is checked whole by
// TestVocabIndexFile, the fnv32 in its header too).
func vocabIndex(raw, idx string) (*vocabulary, bool) {
	if len(idx) < vocabIndexHeader || idx[:len(vocabIndexMagic)] != vocabIndexMagic {
		return nil, false
	}
	h := idx[len(vocabIndexMagic):vocabIndexHeader]
	size, n, slots := le32(h, 0), int(le32(h, 4)), le32(h, 8)
	if int(size) != len(raw) || n <= 0 || slots == 0 || slots&(slots-1) != 0 || uint32(n) >= slots ||
		len(idx) != vocabIndexHeader+8*n+4*int(slots) {
		return nil, false
	}
	v := &vocabulary{raw: raw, spans: idx[vocabIndexHeader : vocabIndexHeader+8*n],
		table: idx[vocabIndexHeader+8*n:], n: n, mask: slots - 1, unk: -1}
	prevEnd, prevID := uint32(0), int32(-1)
	for k := range vocabIndexSample {
		id := int32(k * (n - 1) / (vocabIndexSample - 1)) // the first and the last among them
		if id == prevID {
			continue // fewer tokens than samples
		}
		prevID = id
		start, end := le32(v.spans, 8*uint32(id)), le32(v.spans, 8*uint32(id)+4)
		if start > end || end > size || start < prevEnd || start > 0 && raw[start-1] != '\n' ||
			end < size && raw[end] != '\n' && raw[end] != '\r' {
			return nil, false
		}
		prevEnd = end
		if got, ok := v.lookup([]byte(raw[start:end])); !ok || got != id && v.token(got) != raw[start:end] {
			return nil, false
		}
	}
	return v, true
}

// vocabIndexSample is how many tokens vocabIndex checks.
const vocabIndexSample = 64

// le32 is the little-endian uint32 at s[o:].
func le32(s string, o uint32) uint32 {
	return uint32(s[o]) | uint32(s[o+1])<<8 | uint32(s[o+2])<<16 | uint32(s[o+3])<<24
}

// token is the text of id.
func (v *vocabulary) token(id int32) string {
	o := 8 * uint32(id)
	return v.raw[le32(v.spans, o):le32(v.spans, o+4)]
}

// lookup returns the id of tok.
func (v *vocabulary) lookup(tok []byte) (int32, bool) {
	for h := fnv32(tok) & v.mask; ; h = (h + 1) & v.mask {
		e := int32(le32(v.table, 4*h))
		if e == 0 {
			return 0, false
		}
		if v.token(e-1) == string(tok) {
			return e - 1, true
		}
	}
}

// size is the number of lines (ids) of the vocabulary.
func (v *vocabulary) size() int { return v.n }

func fnv32(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

func fnv32s(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// tokenize calls emit with the WordPiece id of every token of text, in
// order, [UNK] included. It allocates only for non-ASCII text (the NFD
// form) and for a word longer than buf.
func (v *vocabulary) tokenize(text string, emit func(id int32)) {
	if !isASCII(text) && !norm.NFD.IsNormalString(text) {
		text = norm.NFD.String(text)
	}
	var stack [256]byte
	word := stack[:0]
	chars := 0
	flush := func() {
		if len(word) > 0 {
			v.wordPiece(word, chars, emit)
			word, chars = word[:0], 0
		}
	}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			// ASCII, most of every text: its class from a table the
			// predicates below filled (asciiClasses).
			i++
			switch k := asciiClass[c]; {
			case k == classSpace:
				flush()
			case k == classPunct:
				flush()
				word = append(word, c)
				chars = 1
				flush()
			case k >= classWord:
				word = append(word, byte(k)) // lowercased
				chars++
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
			// dropped (clean_text)
		case isSpace(r):
			flush()
		case isPunct(r) || isCJK(r):
			flush()
			word = utf8.AppendRune(word, r)
			chars = 1
			flush()
		case r >= utf8.RuneSelf && unicode.Is(unicode.Mn, r):
			// accent stripped
		default:
			if r < utf8.RuneSelf {
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
				word = append(word, byte(r))
			} else {
				word = utf8.AppendRune(word, unicode.ToLower(r))
			}
			chars++
		}
	}
	flush()
}

// wordPiece emits the pieces of one normalised word (split), from the
// word cache when the word was split before.
func (v *vocabulary) wordPiece(word []byte, chars int, emit func(id int32)) {
	if chars > maxWordChars {
		emit(v.unk)
		return
	}
	// A word in the vocabulary is its own one piece (the longest match
	// from its start is the whole word): one probe of the table, no lock
	// and no cache entry. The cache keeps the words that split.
	if id, ok := v.lookup(word); ok {
		emit(id)
		return
	}
	v.wordsMu.RLock()
	ids, ok := v.words[string(word)]
	v.wordsMu.RUnlock()
	if ok {
		for _, id := range ids {
			emit(id)
		}
		return
	}
	var stack [16]int32
	pieces := v.split(word, stack[:0])
	if v.splits.Add(1) > wordsAfter {
		v.wordsMu.Lock()
		if len(v.words) < wordsMax {
			if v.words == nil {
				v.words = map[string][]int32{}
			}
			v.words[string(word)] = append([]int32(nil), pieces...)
		}
		v.wordsMu.Unlock()
	}
	for _, id := range pieces {
		emit(id)
	}
}

// split appends word's WordPiece ids to pieces: greedy, longest match
// first; a word with an unmatched rest is one [UNK].
func (v *vocabulary) split(word []byte, pieces []int32) []int32 {
	var probe [2 + 4*maxWordChars]byte
	for start := 0; start < len(word); {
		end := len(word)
		found := int32(-1)
		for end > start {
			var id int32
			var ok bool
			if start == 0 {
				id, ok = v.lookup(word[:end])
			} else {
				id, ok = v.lookup(append(append(probe[:0], '#', '#'), word[start:end]...))
			}
			if ok {
				found = id
				break
			}
			// step back one whole character
			end--
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		if found < 0 {
			return append(pieces[:0], v.unk)
		}
		pieces = append(pieces, found)
		start = end
	}
	return pieces
}

// The classes of asciiClass: an ASCII character is dropped, a space, a
// punctuation character, or (its value, lowercased, ≥ classWord) part of a
// word.
const (
	classDrop  = 0
	classSpace = 1
	classPunct = 2
	classWord  = 3 // and above: the lowercased character itself
)

// asciiClass is tokenize's switch for each ASCII character, computed from
// the same predicates.
var asciiClass = asciiClasses()

func asciiClasses() (t [utf8.RuneSelf]byte) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		switch {
		case c == 0 || isControl(c):
			t[c] = classDrop
		case isSpace(c):
			t[c] = classSpace
		case isPunct(c) || isCJK(c):
			t[c] = classPunct
		case 'A' <= c && c <= 'Z':
			t[c] = byte(c + 'a' - 'A')
		default:
			t[c] = byte(c)
		}
	}
	return t
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isSpace is BERT's whitespace: tab, newline, carriage return and Unicode
// White_Space (control characters other than those three count as control).
func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return !isControl(r) && unicode.IsSpace(r)
}

// isControl is BERT's control class: Unicode "other" categories (Cc, Cf, Co,
// Cs) except tab, newline and carriage return.
func isControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isPunct is BERT's punctuation: every ASCII non-alphanumeric printable
// character and the Unicode P categories.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
}

// isCJK reports the CJK Unified Ideograph blocks BERT splits one by one.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}
