package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"
	"unicode/utf8"
)

// The canonical encoding is written by hand, byte for byte what
// encoding/json (v1, SetEscapeHTML(false)) produced when it wrote each value
// on its own: record hashes and derived uuids are digests of these bytes, so
// any change here is a break of every stored journal. oracle_test.go keeps
// the encoding/json version and oracle_diff_test.go checks the two agree.

// appendEncoding appends the canonical encoding of r, with or without its
// uuid, to b.
func (r *Record) appendEncoding(b []byte, withUUID bool) []byte {
	b = append(b, '{')
	if withUUID && r.UUID != "" {
		b = append(b, `"uuid":`...)
		b = appendJSONString(b, r.UUID)
		b = append(b, ',')
	}
	// The ts is always written, so every later field follows a comma.
	var ts [64]byte
	b = append(b, `"ts":`...)
	b = appendJSONString(b, r.TS.UTC().AppendFormat(ts[:0], time.RFC3339Nano))
	b = appendField(b, `,"agent":`, r.Agent)
	b = appendField(b, `,"kind":`, string(r.Kind))
	b = appendField(b, `,"scope":`, string(r.Scope))
	b = appendField(b, `,"text":`, r.Text)
	if len(r.Refs) > 0 {
		b = append(b, `,"refs":[`...)
		for i, ref := range r.Refs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = appendMember(b, "git", ref.Git, false)
			b = appendMember(b, "path", ref.Path, ref.Git != "")
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendList(b, `,"entities":`, r.Entities)
	b = appendList(b, `,"tags":`, r.Tags)
	b = appendList(b, `,"links":`, r.Links)
	b = appendList(b, `,"supersedes":`, r.Supersedes)
	b = appendList(b, `,"conflicts_with":`, r.ConflictsWith)
	if s := r.Source; s != nil && *s != (Source{}) {
		b = append(b, `,"source":{`...)
		b = appendMember(b, "type", s.Type, false)
		b = appendMember(b, "actor", s.Actor, s.Type != "")
		b = appendMember(b, "context", s.Context, s.Type != "" || s.Actor != "")
		b = append(b, '}')
	}
	b = appendField(b, `,"confidence":`, r.Confidence)
	b = appendField(b, `,"max_age":`, r.MaxAge)
	b = appendField(b, `,"tier":`, r.Tier)
	b = appendField(b, `,"session":`, r.Session)
	b = appendField(b, `,"task":`, r.Task)
	b = appendField(b, `,"why":`, r.Why)
	if len(r.Extra) > 0 {
		b = r.appendExtra(b)
	}
	return append(b, '}')
}

// appendExtra appends the unknown fields, sorted by name. A value is
// compacted as encoding/json compacts a json.RawMessage (a nil one is null);
// one that is not JSON panics, as it did when encoding/json rejected it.
func (r *Record) appendExtra(b []byte) []byte {
	keys := make([]string, 0, len(r.Extra))
	for k := range r.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := r.Extra[k]
		if v == nil {
			v = json.RawMessage("null")
		}
		b = append(b, ',')
		b = appendJSONString(b, k)
		b = append(b, ':')
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, v); err != nil {
			err = &json.MarshalerError{Type: reflect.TypeFor[json.RawMessage](), Err: err}
			panic(fmt.Sprintf("journal: encode %s: %v", k, err))
		}
		b = buf.Bytes()
	}
	return b
}

// appendField appends key (`,"name":`) and s when s is not empty.
func appendField(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

// appendMember appends "name":s to an object when s is not empty, after a
// comma when comma is set.
func appendMember(b []byte, name, s string, comma bool) []byte {
	if s == "" {
		return b
	}
	if comma {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return appendJSONString(b, s)
}

// appendList appends key (`,"name":`) and list when list is not empty.
func appendList(b []byte, key string, list []string) []byte {
	if len(list) == 0 {
		return b
	}
	b = append(b, key...)
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it without HTML escaping: \" \\ \b \f \n \r \t, \u00XX for the
// other control characters, \ufffd for each byte of invalid UTF-8, \u2028
// and \u2029; everything else, <, > and & included, as is.
func appendJSONString[S []byte | string](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// encodedSize is a little more than the length of r's canonical encoding
// when nothing in it needs escaping: the capacity to start with.
func (r *Record) encodedSize() int {
	n := 256 + len(r.UUID) + len(r.Agent) + len(r.Kind) + len(r.Scope) + len(r.Text) + len(r.Confidence) +
		len(r.MaxAge) + len(r.Tier) + len(r.Session) + len(r.Task) + len(r.Why)
	for _, ref := range r.Refs {
		n += 20 + len(ref.Git) + len(ref.Path)
	}
	for _, list := range [...][]string{r.Entities, r.Tags, r.Links, r.Supersedes, r.ConflictsWith} {
		for _, s := range list {
			n += 3 + len(s)
		}
	}
	if r.Source != nil {
		n += 32 + len(r.Source.Type) + len(r.Source.Actor) + len(r.Source.Context)
	}
	for k, v := range r.Extra {
		n += 4 + len(k) + len(v)
	}
	return n
}
