package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxLineBytes is the largest journal line accepted, newline excluded.
const MaxLineBytes = 1 << 20

// Kind is what a record is about. Only the kinds listed in SPEC §3 are valid.
type Kind string

// The kinds agents write, then the kinds memsync itself writes.
const (
	KindDecision    Kind = "decision"
	KindPreference  Kind = "preference"
	KindObservation Kind = "observation"
	KindTask        Kind = "task"
	KindFact        Kind = "fact"
	KindConflict    Kind = "conflict"
	KindProcedure   Kind = "procedure"
	KindReflection  Kind = "reflection"
	KindSummary     Kind = "summary"
	KindOutcome     Kind = "outcome"
	KindCorrection  Kind = "correction"
	KindCompaction  Kind = "compaction"
	KindFeedback    Kind = "feedback"
	KindPromotion   Kind = "promotion"
)

// Kinds lists every valid kind in a stable order.
var Kinds = []Kind{
	KindDecision, KindPreference, KindObservation, KindTask, KindFact, KindConflict,
	KindProcedure, KindReflection, KindSummary, KindOutcome, KindCorrection,
	KindCompaction, KindFeedback, KindPromotion,
}

// MemsyncKinds are the kinds only memsync itself writes (SPEC §3):
// compaction summaries, human feedback (memsync flag) and promotions. An
// agent's own door (MCP remember) refuses them.
var MemsyncKinds = []Kind{KindCompaction, KindFeedback, KindPromotion}

// AgentKinds are the kinds an agent writes: Kinds less MemsyncKinds, in
// Kinds' order.
var AgentKinds = func() []Kind {
	var out []Kind
	for _, k := range Kinds {
		if !k.Memsync() {
			out = append(out, k)
		}
	}
	return out
}()

// Memsync reports whether k is one of MemsyncKinds.
func (k Kind) Memsync() bool {
	for _, v := range MemsyncKinds {
		if k == v {
			return true
		}
	}
	return false
}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// Scope decides which group a record belongs to.
type Scope string

// The two scopes: shared records are seen by every agent, private ones only by their author.
const (
	ScopePrivate Scope = "private"
	ScopeShared  Scope = "shared"
)

// SharedGroup is the group_id of shared records.
const SharedGroup = "CONSTELLATION"

// PrivateGroup returns the group_id of agent's private records.
func PrivateGroup(agent string) string { return "AGENT:" + agent }

// Ref is an evidence pointer.
type Ref struct {
	Git  string `json:"git,omitempty"`
	Path string `json:"path,omitempty"`
}

// Source attributes a record to how its author came to know it.
type Source struct {
	Type    string `json:"type,omitempty"`
	Actor   string `json:"actor,omitempty"`
	Context string `json:"context,omitempty"`
}

// Record is one journal line, validated. TS is always UTC. Extra holds every
// field memsync does not know, compacted, so nothing an agent wrote is dropped.
type Record struct {
	UUID          string
	TS            time.Time
	Agent         string
	Kind          Kind
	Scope         Scope
	Text          string
	Refs          []Ref
	Entities      []string
	Tags          []string
	Links         []string
	Supersedes    []string
	ConflictsWith []string
	Source        *Source
	Confidence    string
	MaxAge        string
	Tier          string
	Session       string
	Task          string
	Why           string
	Extra         map[string]json.RawMessage
}

// GroupID is the graph group the record belongs to.
func (r *Record) GroupID() string {
	if r.Scope == ScopeShared {
		return SharedGroup
	}
	return PrivateGroup(r.Agent)
}

// Enumerations of the optional fields, as SPEC §3 lists them.
var (
	SourceTypes = []string{"experienced", "told", "read", "inferred", "observed"}
	Confidences = []string{"low", "medium", "high"}
	MaxAges     = []string{"14d", "30d", "90d", "180d", "permanent"}
	Tiers       = []string{"core", "working", "learning"}
)

// ValidAgent reports whether name is a valid agent name:
// [A-Za-z0-9][A-Za-z0-9_-]{0,63}.
func ValidAgent(name string) bool { return validName(name, 64, "_-") }

// ReservedAgent reports whether name, a valid agent name, is one Windows
// reserves for a device (CON, PRN, AUX, NUL, COM0-9, LPT0-9, in any case):
// a directory agents/NAME cannot exist on Windows, and git (go-git) refuses
// to commit such a path, so no command creates such an agent. The journal
// itself still reads one: a repository that has one loses nothing.
func ReservedAgent(name string) bool {
	switch strings.ToUpper(name) {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	u := strings.ToUpper(name)
	return len(u) == 4 && (strings.HasPrefix(u, "COM") || strings.HasPrefix(u, "LPT")) && '0' <= u[3] && u[3] <= '9'
}

// ValidUUID reports whether id may be used as a record uuid:
// [A-Za-z0-9][A-Za-z0-9_.:-]{0,199}.
func ValidUUID(id string) bool { return validName(id, 200, "_.:-") }

// validName matches [A-Za-z0-9][A-Za-z0-9<punct>]{0,max-1}. Written out
// rather than as a regexp: a bounded repetition compiles to one copy per
// count, which every process start (each `memsync append`) would pay for.
func validName(s string, max int, punct string) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || strings.IndexByte(punct, c) < 0) {
			return false
		}
	}
	return true
}

// FieldError says which field of a line is at fault and why.
type FieldError struct {
	Field  string // empty when the line as a whole is at fault
	Reason string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return fmt.Sprintf("field %q: %s", e.Field, e.Reason)
}

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// The fields memsync knows; everything else is kept in Extra.
var knownFields = map[string]bool{
	"uuid": true, "ts": true, "agent": true, "kind": true, "scope": true, "text": true,
	"refs": true, "entities": true, "tags": true, "links": true, "supersedes": true,
	"conflicts_with": true, "source": true, "confidence": true, "max_age": true,
	"tier": true, "session": true, "task": true, "why": true,
}

// Validate checks every rule of SPEC §3 that a record alone can break.
func (r *Record) Validate() error {
	if r.TS.IsZero() {
		return fieldErr("ts", "required")
	}
	if !validYear(r.TS) {
		return fieldErr("ts", "%s is outside the years 0000-9999", r.TS.UTC().Format(time.RFC3339Nano))
	}
	if r.Agent == "" {
		return fieldErr("agent", "required")
	}
	if !ValidAgent(r.Agent) {
		return fieldErr("agent", "%q is not a valid agent name ([A-Za-z0-9][A-Za-z0-9_-]{0,63})", r.Agent)
	}
	if r.Kind == "" {
		return fieldErr("kind", "required")
	}
	if !r.Kind.Valid() {
		return fieldErr("kind", "unknown kind %q", r.Kind)
	}
	if r.Scope != ScopePrivate && r.Scope != ScopeShared {
		return fieldErr("scope", "unknown scope %q (shared or private)", r.Scope)
	}
	if strings.TrimSpace(r.Text) == "" {
		return fieldErr("text", "required and must not be blank")
	}
	if r.UUID != "" && !ValidUUID(r.UUID) {
		return fieldErr("uuid", "%q is not a valid uuid", r.UUID)
	}
	// A slice, not a map: the same record must always fail on the same field.
	for _, f := range []struct {
		name string
		ids  []string
	}{{"links", r.Links}, {"supersedes", r.Supersedes}, {"conflicts_with", r.ConflictsWith}} {
		for _, id := range f.ids {
			if !ValidUUID(id) {
				return fieldErr(f.name, "%q is not a valid uuid", id)
			}
			if id == r.UUID {
				return fieldErr(f.name, "a record cannot point at itself")
			}
		}
	}
	for _, e := range r.Entities {
		if strings.TrimSpace(e) == "" {
			return fieldErr("entities", "blank entity")
		}
	}
	if r.Source != nil && r.Source.Type != "" && !oneOf(r.Source.Type, SourceTypes) {
		return fieldErr("source", "unknown type %q (%s)", r.Source.Type, strings.Join(SourceTypes, "|"))
	}
	if r.Confidence != "" && !oneOf(r.Confidence, Confidences) {
		return fieldErr("confidence", "%q is not one of %s", r.Confidence, strings.Join(Confidences, "|"))
	}
	if r.MaxAge != "" && !oneOf(r.MaxAge, MaxAges) {
		return fieldErr("max_age", "%q is not one of %s", r.MaxAge, strings.Join(MaxAges, " "))
	}
	if r.Tier != "" && !oneOf(r.Tier, Tiers) {
		return fieldErr("tier", "%q is not one of %s", r.Tier, strings.Join(Tiers, "|"))
	}
	return nil
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// Parse decodes and validates one journal line (without its newline). A line
// with no uuid gets the deterministic one DerivedUUID gives. The error is a
// *FieldError.
func Parse(line []byte) (Record, error) {
	if len(line) <= MaxLineBytes && utf8.Valid(line) {
		if r, ok := parseFast(bytes.TrimSpace(line)); ok {
			return r, nil
		}
	}
	return parseSlow(line)
}

// parseSlow is Parse written with encoding/json: the reference for what
// Parse accepts and the source of every error it returns.
func parseSlow(line []byte) (Record, error) {
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
	// Unmarshal, unlike a Decoder, insists on exactly one value: a stray
	// "}" or "]" after the object is bad JSON, not ignored.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return r, &FieldError{Reason: "bad JSON: " + err.Error()}
	}
	if path, ok := duplicateKey(trimmed); ok {
		return r, dupErr(path)
	}
	// Fields are looked at in name order so that a line with several faults
	// is always rejected for the same one.
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	r.Scope = ScopePrivate
	for _, name := range names {
		raw := fields[name]
		if !knownFields[name] {
			c, err := canonicalJSON(raw)
			if err != nil {
				return r, fieldErr(name, "bad JSON: %v", err)
			}
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[name] = c
			continue
		}
		if err := r.setField(name, raw); err != nil {
			return r, err
		}
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	if r.UUID == "" {
		r.UUID = DerivedUUID(&r)
	}
	return r, nil
}

func (r *Record) setField(name string, raw json.RawMessage) error {
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
			m, err := stringObject(name, item, "git", "path")
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
		m, err := stringObject(name, raw, "type", "actor", "context")
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

// stringObject decodes raw as an object whose keys are exactly among keys
// and whose values are strings (or null). encoding/json would match keys
// case-insensitively and silently drop unknown ones; a record must not lose
// what its author wrote, so both are rejected instead.
func stringObject(field string, raw json.RawMessage, keys ...string) (map[string]string, error) {
	want := "an object with string keys " + strings.Join(keys, ", ")
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fieldErr(field, "must be %s", want)
	}
	// In name order, so that an object with several bad keys is always
	// rejected for the same one.
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(map[string]string, len(obj))
	for _, k := range names {
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

// validYear reports whether t (in UTC) has a four-digit year, the only
// years RFC 3339 can write: anything else could not be read back.
func validYear(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// canonicalJSON re-encodes a JSON value with sorted object keys, no
// insignificant space and numbers kept exactly as written.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return marshal(v)
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Canonical is the record's one encoding: fixed field order, empty fields
// omitted, ts in UTC with RFC 3339 nanosecond precision, unknown fields sorted
// after the known ones. Two lines that mean the same record encode the same.
func (r *Record) Canonical() []byte {
	return r.appendEncoding(make([]byte, 0, r.encodedSize()), true)
}

// Hash is a digest of the canonical encoding: equal hashes mean equal records.
func (r *Record) Hash() string {
	var buf [1024]byte
	return hashOf(r.appendEncoding(buf[:0], true))
}

// CanonicalHash returns r.Canonical() and r.Hash() for the cost of one
// encoding, for callers that store both.
func (r *Record) CanonicalHash() (canonical []byte, hash string) {
	c := r.Canonical()
	return c, hashOf(c)
}

// CanonicalStringHash is CanonicalHash with the encoding as a string, for
// callers that store it as text: one allocation where Canonical and a
// conversion take two.
func (r *Record) CanonicalStringHash() (canonical, hash string) {
	var buf [1024]byte
	b := r.appendEncoding(buf[:0], true)
	return string(b), hashOf(b)
}

func hashOf(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:16])
}

// UUIDTime formats ts the way uuids carry it: to the second, UTC.
func UUIDTime(ts time.Time) string { return ts.UTC().Format(uuidTimeLayout) }

const uuidTimeLayout = "20060102T150405Z"

// DerivedUUID is the identity of a line written without a uuid: the same
// content always yields the same id, so replaying the line is a no-op.
func DerivedUUID(r *Record) string {
	var buf [1024]byte
	sum := sha256.Sum256(r.appendEncoding(buf[:0], false))
	id := make([]byte, 0, len("mem_20060102T150405Z__h")+len(r.Agent)+16)
	id = append(id, "mem_"...)
	id = r.TS.UTC().AppendFormat(id, uuidTimeLayout)
	id = append(id, '_')
	id = append(id, r.Agent...)
	id = append(id, "_h"...)
	id = hex.AppendEncode(id, sum[:8])
	return string(id)
}

// duplicateKey finds the first key that appears twice in one object of the
// JSON value b, at any depth, and gives its path ("text", "source.type",
// "x[2].y"). Two readers of such a line may disagree on which value wins,
// so a line that has one is rejected. b that is not valid JSON is not its
// business: ok is false.
func duplicateKey(b []byte) (path string, ok bool) {
	type frame struct {
		obj     bool
		keys    map[string]bool
		path    string // of the object or array
		cur     string // the path of the member being read (objects)
		index   int    // the element being read (arrays)
		wantKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*frame
	valuePath := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.obj {
			return top.cur
		}
		return fmt.Sprintf("%s[%d]", top.path, top.index)
	}
	// valueDone moves the enclosing object or array past a finished value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		if top := stack[len(stack)-1]; top.obj {
			top.wantKey = true
		} else {
			top.index++
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			top := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				if len(stack) == 0 {
					return "", false
				}
				valueDone()
				continue
			}
			key, _ := tok.(string)
			top.cur = key
			if top.path != "" {
				top.cur = top.path + "." + key
			}
			if top.keys[key] {
				return top.cur, true
			}
			top.keys[key] = true
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, path: valuePath(), wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{path: valuePath()})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", false
			}
			valueDone()
		default:
			if len(stack) == 0 {
				return "", false
			}
			valueDone()
		}
	}
}

// dupErr is the reject of a line with a repeated key at path; the field is
// the top-level key the path starts with.
func dupErr(path string) *FieldError {
	field := path
	if i := strings.IndexAny(field, ".["); i >= 0 {
		field = field[:i]
	}
	return fieldErr(field, "key %q appears more than once (readers could disagree on which value wins)", path)
}
