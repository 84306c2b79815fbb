package journal

import (
	"encoding/json"
	"sort"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// parseFast decodes a line (already size- and UTF-8-checked, and trimmed)
// in one pass, for the common case of a valid record. It gives up — ok is
// false — at anything wrong or unusual: bad JSON, a repeated key, a value of
// the wrong type, a null in a list, deep nesting, a record Validate rejects.
// Parse then runs parseSlow, which decides and says why; so parseFast's one
// duty is that a record it returns is the one parseSlow would return.
//
// Strings without escapes are substrings of one copy of the line, so a
// line costs one allocation for all of them.
func parseFast(line []byte) (r Record, ok bool) {
	if len(line) == 0 || line[0] != '{' {
		return r, false
	}
	d := decoder{s: string(line), i: 1}
	r.Scope = ScopePrivate
	var seen uint32
	d.space()
	for {
		key, ok := d.key()
		if !ok {
			return r, false
		}
		if f := fieldIndex(key); f >= 0 {
			if seen&(1<<f) != 0 || !d.field(&r, f) {
				return r, false
			}
			seen |= 1 << f
		} else {
			if _, dup := r.Extra[key]; dup {
				return r, false
			}
			v, ok := d.appendCanonical(nil, 0)
			if !ok {
				return r, false
			}
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[key] = v
		}
		d.space()
		if d.consume(',') {
			d.space()
			continue
		}
		if d.consume('}') {
			break
		}
		return r, false
	}
	if d.i != len(d.s) || r.Validate() != nil {
		return r, false
	}
	if r.UUID == "" {
		r.UUID = DerivedUUID(&r)
	}
	return r, true
}

// The known fields, by their index in parseFast's set of fields seen.
const (
	fUUID = iota
	fTS
	fAgent
	fKind
	fScope
	fText
	fRefs
	fEntities
	fTags
	fLinks
	fSupersedes
	fConflictsWith
	fSource
	fConfidence
	fMaxAge
	fTier
	fSession
	fTask
	fWhy
)

// fieldIndex is the index of a known field, or -1.
func fieldIndex(name string) int {
	switch name {
	case "uuid":
		return fUUID
	case "ts":
		return fTS
	case "agent":
		return fAgent
	case "kind":
		return fKind
	case "scope":
		return fScope
	case "text":
		return fText
	case "refs":
		return fRefs
	case "entities":
		return fEntities
	case "tags":
		return fTags
	case "links":
		return fLinks
	case "supersedes":
		return fSupersedes
	case "conflicts_with":
		return fConflictsWith
	case "source":
		return fSource
	case "confidence":
		return fConfidence
	case "max_age":
		return fMaxAge
	case "tier":
		return fTier
	case "session":
		return fSession
	case "task":
		return fTask
	case "why":
		return fWhy
	}
	return -1
}

// decoder reads JSON from s, the line, at i.
type decoder struct {
	s string
	i int
}

// field decodes the value of known field f into r, as setField would.
func (d *decoder) field(r *Record, f int) bool {
	if d.literal("null") {
		return true
	}
	var ok bool
	switch f {
	case fUUID:
		r.UUID, ok = d.str()
		return ok && r.UUID != ""
	case fTS:
		var s string
		if s, ok = d.str(); !ok {
			return false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return false
		}
		r.TS = t.UTC()
		return validYear(r.TS)
	case fAgent:
		r.Agent, ok = d.str()
	case fKind:
		var s string
		s, ok = d.str()
		r.Kind = Kind(s)
	case fScope:
		var s string
		s, ok = d.str()
		r.Scope = Scope(s)
	case fText:
		r.Text, ok = d.str()
	case fRefs:
		return d.refs(r)
	case fEntities:
		r.Entities, ok = d.strs()
	case fTags:
		r.Tags, ok = d.strs()
	case fLinks:
		r.Links, ok = d.strs()
	case fSupersedes:
		r.Supersedes, ok = d.strs()
	case fConflictsWith:
		r.ConflictsWith, ok = d.strs()
	case fSource:
		var v [3]string
		if !d.stringObject(sourceKeys[:], v[:]) {
			return false
		}
		r.Source = &Source{Type: v[0], Actor: v[1], Context: v[2]}
		return true
	case fConfidence:
		r.Confidence, ok = d.str()
	case fMaxAge:
		r.MaxAge, ok = d.str()
	case fTier:
		r.Tier, ok = d.str()
	case fSession:
		r.Session, ok = d.str()
	case fTask:
		r.Task, ok = d.str()
	case fWhy:
		r.Why, ok = d.str()
	}
	return ok
}

var (
	refKeys    = [...]string{"git", "path"}
	sourceKeys = [...]string{"type", "actor", "context"}
)

// refs decodes an array of {"git": "...", "path": "..."}; [] is an empty,
// non-nil slice, as encoding/json makes it.
func (d *decoder) refs(r *Record) bool {
	if !d.consume('[') {
		return false
	}
	r.Refs = make([]Ref, 0, 1)
	d.space()
	if d.consume(']') {
		return true
	}
	for {
		var v [2]string
		if !d.stringObject(refKeys[:], v[:]) {
			return false
		}
		r.Refs = append(r.Refs, Ref{Git: v[0], Path: v[1]})
		d.space()
		if d.consume(']') {
			return true
		}
		if !d.consume(',') {
			return false
		}
		d.space()
	}
}

// stringObject decodes an object whose keys are among keys, each at most
// once, and whose values are strings or null, into vals (by key index).
func (d *decoder) stringObject(keys []string, vals []string) bool {
	if !d.consume('{') {
		return false
	}
	d.space()
	if d.consume('}') {
		return true
	}
	var seen uint32
	for {
		k, ok := d.key()
		if !ok {
			return false
		}
		idx := -1
		for i, want := range keys {
			if k == want {
				idx = i
			}
		}
		if idx < 0 || seen&(1<<idx) != 0 {
			return false
		}
		seen |= 1 << idx
		if !d.literal("null") {
			if vals[idx], ok = d.str(); !ok {
				return false
			}
		}
		d.space()
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
		d.space()
	}
}

// strs decodes an array of strings; [] is an empty, non-nil slice, as
// encoding/json makes it. A null element (which encoding/json reads as "")
// gives up.
func (d *decoder) strs() ([]string, bool) {
	if !d.consume('[') {
		return nil, false
	}
	out := make([]string, 0, 2)
	d.space()
	if d.consume(']') {
		return out, true
	}
	for {
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		d.space()
		if d.consume(']') {
			return out, true
		}
		if !d.consume(',') {
			return nil, false
		}
		d.space()
	}
}

// space skips JSON white space.
func (d *decoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// consume skips c if it comes next.
func (d *decoder) consume(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// literal skips lit if it comes next. What follows is the caller's to check.
func (d *decoder) literal(lit string) bool {
	if len(d.s)-d.i >= len(lit) && d.s[d.i:d.i+len(lit)] == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// key reads an object member's name and the colon after it, with the
// white space around the colon.
func (d *decoder) key() (string, bool) {
	k, ok := d.str()
	if !ok {
		return "", false
	}
	d.space()
	if !d.consume(':') {
		return "", false
	}
	d.space()
	return k, true
}

// str decodes a JSON string. One without escapes is a substring of the line.
func (d *decoder) str() (string, bool) {
	if d.i >= len(d.s) || d.s[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	for i := start; i < len(d.s); i++ {
		switch c := d.s[i]; {
		case c == '"':
			d.i = i + 1
			return d.s[start:i], true
		case c == '\\':
			return d.unescape(start, i)
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// unescape decodes the string that starts at start and has its first escape
// at i, as encoding/json does: a \u escape of half a surrogate pair, or of a
// pair in the wrong order, is U+FFFD.
func (d *decoder) unescape(start, i int) (string, bool) {
	s := d.s
	b := make([]byte, 0, len(s)-start)
	b = append(b, s[start:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		switch s[i+1] {
		case '"', '\\', '/':
			b = append(b, s[i+1])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(s, i)
			if r < 0 {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if dec := utf16.DecodeRune(r, hex4(s, i)); dec != unicode.ReplacementChar {
					i += 6
					r = dec
				} else {
					r = unicode.ReplacementChar
				}
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return "", false
		}
		i += 2
	}
	return "", false
}

// hex4 is the value of the \uXXXX escape at s[i:], or -1.
func hex4(s string, i int) rune {
	if len(s)-i < 6 || s[i] != '\\' || s[i+1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range []byte(s[i+2 : i+6]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// maxFastDepth is how deeply parseFast follows nested unknown fields
// before it leaves them to parseSlow.
const maxFastDepth = 64

// appendCanonical appends the value that comes next in the canonical form
// canonicalJSON gives it: objects with sorted keys, no white space, strings
// re-escaped, numbers as written. A repeated key gives up: parseSlow
// rejects the line and names the key.
func (d *decoder) appendCanonical(b []byte, depth int) ([]byte, bool) {
	if d.i >= len(d.s) {
		return b, false
	}
	switch c := d.s[d.i]; {
	case c == '"':
		s, ok := d.str()
		return appendJSONString(b, s), ok
	case c == '{':
		if depth >= maxFastDepth {
			return b, false
		}
		d.i++
		d.space()
		if d.consume('}') {
			return append(b, "{}"...), true
		}
		type member struct {
			key string
			val []byte
		}
		var members []member
		for {
			k, ok := d.key()
			if !ok {
				return b, false
			}
			v, ok := d.appendCanonical(nil, depth+1)
			if !ok {
				return b, false
			}
			members = append(members, member{k, v})
			d.space()
			if d.consume('}') {
				break
			}
			if !d.consume(',') {
				return b, false
			}
			d.space()
		}
		sort.SliceStable(members, func(i, j int) bool { return members[i].key < members[j].key })
		b = append(b, '{')
		first := true
		for i, m := range members {
			if i+1 < len(members) && members[i+1].key == m.key {
				return b, false // a repeated key: parseSlow says which
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, m.key)
			b = append(b, ':')
			b = append(b, m.val...)
		}
		return append(b, '}'), true
	case c == '[':
		if depth >= maxFastDepth {
			return b, false
		}
		d.i++
		d.space()
		b = append(b, '[')
		if d.consume(']') {
			return append(b, ']'), true
		}
		for {
			var ok bool
			if b, ok = d.appendCanonical(b, depth+1); !ok {
				return b, false
			}
			d.space()
			if d.consume(']') {
				return append(b, ']'), true
			}
			if !d.consume(',') {
				return b, false
			}
			b = append(b, ',')
			d.space()
		}
	case c == 't':
		return append(b, "true"...), d.literal("true")
	case c == 'f':
		return append(b, "false"...), d.literal("false")
	case c == 'n':
		return append(b, "null"...), d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		start := d.i
		if !d.number() {
			return b, false
		}
		return append(b, d.s[start:d.i]...), true
	}
	return b, false
}

// number skips a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) number() bool {
	d.consume('-')
	switch {
	case d.consume('0'):
	case d.i < len(d.s) && '1' <= d.s[d.i] && d.s[d.i] <= '9':
		d.digits()
	default:
		return false
	}
	if d.consume('.') && !d.digits() {
		return false
	}
	if d.consume('e') || d.consume('E') {
		if !d.consume('+') {
			d.consume('-')
		}
		if !d.digits() {
			return false
		}
	}
	return true
}

// digits skips [0-9]* and reports whether it skipped any.
func (d *decoder) digits() bool {
	start := d.i
	for d.i < len(d.s) && '0' <= d.s[d.i] && d.s[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}
