package journal

// The implementations ExtractEntities, Canonical and Parse had before they
// were rewritten for speed, kept verbatim (renamed old*) as oracles: the
// differential tests and fuzz targets in oracle_diff_test.go require the
// new code to give exactly their results on every input.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

var (
	oldMentionRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(^|[^\pL\pN_@#/&])([@#])([\pL\pN_][\pL\pN_.-]*)`)
	})
	oldWikiRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[\[([^\[\]\n|]{1,200})(?:\|[^\[\]\n]*)?\]\]`)
	})
)

func oldExtractEntities(text string) []string {
	type hit struct {
		at   int
		name string
	}
	var hits []hit
	for _, m := range oldMentionRE().FindAllStringSubmatchIndex(text, -1) {
		name := strings.TrimRight(text[m[6]:m[7]], ".-")
		if name != "" && strings.Trim(name, "0123456789") != "" {
			hits = append(hits, hit{m[4], text[m[4]:m[5]] + name})
		}
	}
	for _, m := range oldWikiRE().FindAllStringSubmatchIndex(text, -1) {
		if name := strings.TrimSpace(text[m[2]:m[3]]); name != "" {
			hits = append(hits, hit{m[0], name})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.name)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// oldParse is the old Parse. Its stringObject ranged over a map, so a refs
// item or source object with several bad keys was rejected for any one of
// them; sortedKeys makes it look at the keys in sorted order instead (one
// of the orders the map could produce), which is what the new Parse does.
func oldParse(line []byte, sortedKeys bool) (Record, error) {
	var r Record
	if len(line) > MaxLineBytes {
		return r, &FieldError{Reason: fmt.Sprintf("line is %d bytes, over the 1 MiB limit", len(line))}
	}
	if !utf8.Valid(line) {
		return r, &FieldError{Reason: "line is not valid UTF-8"}
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return r, &FieldError{Reason: "line is not a JSON object"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return r, &FieldError{Reason: "bad JSON: " + err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if path, ok := oldDuplicateKey(dec, ""); ok {
		return r, dupErr(path)
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	r.Scope = ScopePrivate
	for _, name := range names {
		raw := fields[name]
		if !knownFields[name] {
			c, err := oldCanonicalJSON(raw)
			if err != nil {
				return r, fieldErr(name, "bad JSON: %v", err)
			}
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[name] = c
			continue
		}
		if err := oldSetField(&r, name, raw, sortedKeys); err != nil {
			return r, err
		}
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	if r.UUID == "" {
		r.UUID = oldDerivedUUID(&r)
	}
	return r, nil
}

func oldSetField(r *Record, name string, raw json.RawMessage, sortedKeys bool) error {
	if string(raw) == "null" {
		return nil
	}
	str := func(dst *string) error {
		if err := json.Unmarshal(raw, dst); err != nil {
			return fieldErr(name, "must be a string")
		}
		return nil
	}
	strs := func(dst *[]string) error {
		if err := json.Unmarshal(raw, dst); err != nil {
			return fieldErr(name, "must be an array of strings")
		}
		return nil
	}
	switch name {
	case "uuid":
		if err := str(&r.UUID); err != nil {
			return err
		}
		if r.UUID == "" {
			return fieldErr(name, "must not be empty when present")
		}
	case "ts":
		var s string
		if err := str(&s); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fieldErr(name, "%q is not an RFC 3339 time", s)
		}
		r.TS = t.UTC()
		if r.TS.IsZero() {
			// Validate would take it for a missing ts.
			return fieldErr(name, "%q is the zero time (0001-01-01T00:00:00Z), not a record's time", s)
		}
		if !validYear(r.TS) {
			return fieldErr(name, "%q is outside the years 0000-9999 once in UTC", s)
		}
	case "agent":
		return str(&r.Agent)
	case "kind":
		var s string
		if err := str(&s); err != nil {
			return err
		}
		r.Kind = Kind(s)
	case "scope":
		var s string
		if err := str(&s); err != nil {
			return err
		}
		r.Scope = Scope(s)
	case "text":
		return str(&r.Text)
	case "refs":
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fieldErr(name, `must be an array of {"git": "...", "path": "..."}`)
		}
		r.Refs = make([]Ref, 0, len(items))
		for _, item := range items {
			m, err := oldStringObject(name, item, sortedKeys, "git", "path")
			if err != nil {
				return err
			}
			r.Refs = append(r.Refs, Ref{Git: m["git"], Path: m["path"]})
		}
	case "entities":
		return strs(&r.Entities)
	case "tags":
		return strs(&r.Tags)
	case "links":
		return strs(&r.Links)
	case "supersedes":
		return strs(&r.Supersedes)
	case "conflicts_with":
		return strs(&r.ConflictsWith)
	case "source":
		m, err := oldStringObject(name, raw, sortedKeys, "type", "actor", "context")
		if err != nil {
			return err
		}
		r.Source = &Source{Type: m["type"], Actor: m["actor"], Context: m["context"]}
	case "confidence":
		return str(&r.Confidence)
	case "max_age":
		return str(&r.MaxAge)
	case "tier":
		return str(&r.Tier)
	case "session":
		return str(&r.Session)
	case "task":
		return str(&r.Task)
	case "why":
		return str(&r.Why)
	}
	return nil
}

func oldStringObject(field string, raw json.RawMessage, sortedKeys bool, keys ...string) (map[string]string, error) {
	want := "an object with string keys " + strings.Join(keys, ", ")
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fieldErr(field, "must be %s", want)
	}
	order := make([]string, 0, len(obj))
	for k := range obj {
		order = append(order, k)
	}
	if sortedKeys {
		sort.Strings(order)
	}
	out := make(map[string]string, len(obj))
	for _, k := range order {
		v := obj[k]
		if !oneOf(k, keys) {
			return nil, fieldErr(field, "unknown key %q (want %s)", k, strings.Join(keys, ", "))
		}
		if string(v) == "null" {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fieldErr(field, "key %q must be a string", k)
		}
		out[k] = s
	}
	return out, nil
}

func oldCanonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return oldMarshal(v)
}

func oldMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func oldCanonical(r *Record) []byte { return oldEncode(r, true) }

func oldEncode(r *Record, withUUID bool) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	put := func(name string, v any) {
		enc, err := oldMarshal(v)
		if err != nil { // cannot happen: every value is a plain string, slice or struct
			panic(fmt.Sprintf("journal: encode %s: %v", name, err))
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		key, _ := oldMarshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(enc)
	}
	putStr := func(name, v string) {
		if v != "" {
			put(name, v)
		}
	}
	putList := func(name string, v []string) {
		if len(v) > 0 {
			put(name, v)
		}
	}
	if withUUID {
		putStr("uuid", r.UUID)
	}
	put("ts", r.TS.UTC().Format(time.RFC3339Nano))
	putStr("agent", r.Agent)
	putStr("kind", string(r.Kind))
	putStr("scope", string(r.Scope))
	putStr("text", r.Text)
	if len(r.Refs) > 0 {
		put("refs", r.Refs)
	}
	putList("entities", r.Entities)
	putList("tags", r.Tags)
	putList("links", r.Links)
	putList("supersedes", r.Supersedes)
	putList("conflicts_with", r.ConflictsWith)
	if r.Source != nil && *r.Source != (Source{}) {
		put("source", r.Source)
	}
	putStr("confidence", r.Confidence)
	putStr("max_age", r.MaxAge)
	putStr("tier", r.Tier)
	putStr("session", r.Session)
	putStr("task", r.Task)
	putStr("why", r.Why)
	keys := make([]string, 0, len(r.Extra))
	for k := range r.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		put(k, r.Extra[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func oldHash(r *Record) string {
	sum := sha256.Sum256(oldCanonical(r))
	return hex.EncodeToString(sum[:16])
}

func oldDerivedUUID(r *Record) string {
	sum := sha256.Sum256(oldEncode(r, false))
	return fmt.Sprintf("mem_%s_%s_h%s", UUIDTime(r.TS), r.Agent, hex.EncodeToString(sum[:8]))
}

// oldDuplicateKey is duplicateKey written recursively, as its oracle: the
// path of the first key repeated in an object of the value dec reads next.
func oldDuplicateKey(dec *json.Decoder, path string) (string, bool) {
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	switch tok {
	case json.Delim('{'):
		keys := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return "", false
			}
			key := k.(string)
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if keys[key] {
				return sub, true
			}
			keys[key] = true
			if p, ok := oldDuplicateKey(dec, sub); ok {
				return p, true
			}
		}
		dec.Token() // }
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if p, ok := oldDuplicateKey(dec, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
		dec.Token() // ]
	}
	return "", false
}
