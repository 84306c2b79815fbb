package journal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

func mustParse(t *testing.T, line string) journal.Record {
	t.Helper()
	r, err := journal.Parse([]byte(line))
	if err != nil {
		t.Fatalf("Parse(%s): %v", line, err)
	}
	return r
}

func TestParseTimestampStoredAsUTC(t *testing.T) {
	r := mustParse(t, `{"ts":"2026-11-21T11:15:00+02:00","agent":"alice","kind":"fact","text":"x"}`)
	if r.TS.Location() != time.UTC {
		t.Errorf("ts location %v, want UTC", r.TS.Location())
	}
	if want := time.Date(2026, 11, 21, 9, 15, 0, 0, time.UTC); !r.TS.Equal(want) {
		t.Errorf("ts %v, want %v", r.TS, want)
	}
	if !strings.Contains(string(r.Canonical()), `"ts":"2026-11-21T09:15:00Z"`) {
		t.Errorf("canonical %s does not carry the UTC ts", r.Canonical())
	}
	if journal.FileName(r.TS) != "2026-11-21.jsonl" {
		t.Errorf("FileName %s", journal.FileName(r.TS))
	}
	late := mustParse(t, `{"ts":"2026-11-21T23:30:00-05:00","agent":"alice","kind":"fact","text":"x"}`)
	if journal.FileName(late.TS) != "2026-11-22.jsonl" {
		t.Errorf("a ts of the next UTC day goes to %s", journal.FileName(late.TS))
	}
}

func TestParseKeepsUnknownFields(t *testing.T) {
	r := mustParse(t, `{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"x","zeta":{"b":1,"a":[true, null, 1.50]},"model":"m"}`)
	if len(r.Extra) != 2 {
		t.Fatalf("Extra = %v, want zeta and model", r.Extra)
	}
	if got := string(r.Extra["zeta"]); got != `{"a":[true,null,1.50],"b":1}` {
		t.Errorf("zeta re-encoded as %s", got)
	}
	want := `{"uuid":"` + r.UUID + `","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","scope":"private","text":"x","model":"m","zeta":{"a":[true,null,1.50],"b":1}}`
	if string(r.Canonical()) != want {
		t.Errorf("canonical\n got %s\nwant %s", r.Canonical(), want)
	}
}

var derivedRE = regexp.MustCompile(`^mem_[0-9]{8}T[0-9]{6}Z_alice_h[0-9a-f]{16}$`)

// TestDerivedUUID: a line without uuid gets an id from its meaning, not its
// spelling: key order, whitespace, escapes, the ts offset and an explicit
// default scope do not change it; any change of content does.
func TestDerivedUUID(t *testing.T) {
	base := `{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"café","tags":["a"]}`
	id := mustParse(t, base).UUID
	if !derivedRE.MatchString(id) || !strings.HasPrefix(id, "mem_20261121T091500Z_alice_h") {
		t.Fatalf("derived uuid %q has the wrong shape", id)
	}
	same := []string{
		`{"tags":["a"],"text":"café","kind":"fact","agent":"alice","ts":"2026-11-21T09:15:00Z"}`,
		"{ \"ts\" : \"2026-11-21T09:15:00Z\" ,\n\t\"agent\":\"alice\",\"kind\":\"fact\",\"text\":\"café\",\"tags\":[ \"a\" ] }",
		`{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"caf\u00e9","tags":["a"]}`,
		`{"ts":"2026-11-21T10:15:00.000+01:00","agent":"alice","kind":"fact","text":"café","tags":["a"]}`,
		`{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","scope":"private","text":"café","tags":["a"],"links":[],"why":null}`,
	}
	for _, line := range same {
		if got := mustParse(t, line).UUID; got != id {
			t.Errorf("%s\n  got uuid %s, want %s", line, got, id)
		}
	}
	different := []string{
		`{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"cafe","tags":["a"]}`,
		`{"ts":"2026-11-21T09:15:00.001Z","agent":"alice","kind":"fact","text":"café","tags":["a"]}`,
		`{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"task","text":"café","tags":["a"]}`,
		`{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","scope":"shared","text":"café","tags":["a"]}`,
		`{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"café","tags":["b"]}`,
		`{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"café","tags":["a"],"x":1}`,
	}
	seen := map[string]string{id: base}
	for _, line := range different {
		got := mustParse(t, line).UUID
		if prev, dup := seen[got]; dup {
			t.Errorf("%s\n  shares uuid %s with %s", line, got, prev)
		}
		seen[got] = line
	}
	// An explicit uuid is kept as written; DerivedUUID ignores it.
	r := mustParse(t, `{"uuid":"mine","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"café","tags":["a"]}`)
	if r.UUID != "mine" {
		t.Errorf("explicit uuid became %q", r.UUID)
	}
	if journal.DerivedUUID(&r) != id {
		t.Errorf("DerivedUUID depends on the uuid field: %s vs %s", journal.DerivedUUID(&r), id)
	}
}

func TestCanonicalRoundTrip(t *testing.T) {
	for name := range cases {
		lines, _ := readAll(t, loadCase(t, name), 0, 0)
		for _, l := range lines {
			if l.Err != nil {
				continue
			}
			c := l.Record.Canonical()
			again, err := journal.Parse(c)
			if err != nil {
				t.Errorf("%s:%d: canonical %s does not parse: %v", name, l.Number, c, err)
				continue
			}
			if !bytes.Equal(again.Canonical(), c) || again.UUID != l.Record.UUID || again.Hash() != l.Record.Hash() {
				t.Errorf("%s:%d: canonical is not a fixed point:\n%s\n%s", name, l.Number, c, again.Canonical())
			}
			if !json.Valid(c) || bytes.ContainsAny(c, "\n\r") {
				t.Errorf("%s:%d: canonical is not one JSON line: %s", name, l.Number, c)
			}
		}
	}
}

func TestHash(t *testing.T) {
	a := mustParse(t, `{"uuid":"u1","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"x"}`)
	b := mustParse(t, `{"text":"x","kind":"fact","agent":"alice","ts":"2026-11-21T11:15:00+02:00","uuid":"u1"}`)
	c := mustParse(t, `{"uuid":"u1","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"y"}`)
	if a.Hash() != b.Hash() {
		t.Errorf("same record, different hashes")
	}
	if a.Hash() == c.Hash() {
		t.Errorf("same uuid, different text, same hash: a changed record would go unnoticed")
	}
}

func TestValidate(t *testing.T) {
	ok := func() journal.Record {
		return journal.Record{TS: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), Agent: "alice",
			Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: "x"}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*journal.Record)
		field  string
	}{
		{"valid", func(*journal.Record) {}, ""},
		{"zero ts", func(r *journal.Record) { r.TS = time.Time{} }, "ts"},
		{"year 10000", func(r *journal.Record) { r.TS = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "ts"},
		{"negative year", func(r *journal.Record) { r.TS = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }, "ts"},
		{"no agent", func(r *journal.Record) { r.Agent = "" }, "agent"},
		{"agent too long", func(r *journal.Record) { r.Agent = strings.Repeat("a", 65) }, "agent"},
		{"agent 64", func(r *journal.Record) { r.Agent = strings.Repeat("a", 64) }, ""},
		{"no kind", func(r *journal.Record) { r.Kind = "" }, "kind"},
		{"bad kind", func(r *journal.Record) { r.Kind = "bogus" }, "kind"},
		{"no scope", func(r *journal.Record) { r.Scope = "" }, "scope"},
		{"blank text", func(r *journal.Record) { r.Text = " \n" }, "text"},
		{"bad uuid", func(r *journal.Record) { r.UUID = "a b" }, "uuid"},
		{"bad link", func(r *journal.Record) { r.Links = []string{""} }, "links"},
		{"self supersedes", func(r *journal.Record) { r.UUID = "u"; r.Supersedes = []string{"u"} }, "supersedes"},
		{"bad conflict", func(r *journal.Record) { r.ConflictsWith = []string{"?"} }, "conflicts_with"},
		{"first bad id field wins", func(r *journal.Record) {
			r.Links, r.Supersedes, r.ConflictsWith = []string{"?"}, []string{"?"}, []string{"?"}
		}, "links"},
		{"source type", func(r *journal.Record) { r.Source = &journal.Source{Type: "x"} }, "source"},
		{"empty source", func(r *journal.Record) { r.Source = &journal.Source{} }, ""},
		{"confidence", func(r *journal.Record) { r.Confidence = "HIGH" }, "confidence"},
		{"max_age", func(r *journal.Record) { r.MaxAge = "1y" }, "max_age"},
		{"tier", func(r *journal.Record) { r.Tier = "x" }, "tier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok()
			tc.mutate(&r)
			err := r.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var fe *journal.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate = %v, want a FieldError on %q", err, tc.field)
			}
		})
	}
}

func TestParseIsDeterministic(t *testing.T) {
	// Several faults on one line: the reject reason must not depend on map order.
	line := []byte(`{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"x","tier":1,"confidence":2,"why":3,"tags":4}`)
	_, first := journal.Parse(line)
	for i := 0; i < 50; i++ {
		if _, err := journal.Parse(line); err.Error() != first.Error() {
			t.Fatalf("reasons differ between runs: %v vs %v", err, first)
		}
	}
	if !strings.Contains(first.Error(), `"confidence"`) {
		t.Errorf("first fault by name is confidence, got %v", first)
	}
}

func TestParseLimits(t *testing.T) {
	big := `{"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"` + strings.Repeat("x", journal.MaxLineBytes) + `"}`
	_, err := journal.Parse([]byte(big))
	var fe *journal.FieldError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "1 MiB") {
		t.Errorf("over-long line: %v", err)
	}
}

func TestGroupAndKinds(t *testing.T) {
	r := journal.Record{Agent: "alice", Scope: journal.ScopePrivate}
	if r.GroupID() != "AGENT:alice" {
		t.Errorf("private group %s", r.GroupID())
	}
	r.Scope = journal.ScopeShared
	if r.GroupID() != journal.SharedGroup {
		t.Errorf("shared group %s", r.GroupID())
	}
	if len(journal.Kinds) != 14 {
		t.Errorf("%d kinds, SPEC §3 lists 14", len(journal.Kinds))
	}
	for _, k := range journal.Kinds {
		if !k.Valid() {
			t.Errorf("%s not valid", k)
		}
	}
	// SPEC §3: eleven kinds agents write, three only memsync writes.
	var agentKinds, memsyncKinds []string
	for _, k := range journal.AgentKinds {
		agentKinds = append(agentKinds, string(k))
	}
	for _, k := range journal.MemsyncKinds {
		memsyncKinds = append(memsyncKinds, string(k))
	}
	if got := strings.Join(agentKinds, " "); got != "decision preference observation task fact conflict procedure reflection summary outcome correction" {
		t.Errorf("AgentKinds %s", got)
	}
	if got := strings.Join(memsyncKinds, " "); got != "compaction feedback promotion" || !journal.KindFeedback.Memsync() || journal.KindOutcome.Memsync() {
		t.Errorf("MemsyncKinds %s", got)
	}
	if journal.Kind("Fact").Valid() {
		t.Error("kinds are case-sensitive")
	}
	fe := &journal.FieldError{Field: "kind", Reason: "unknown"}
	if fe.Error() != `field "kind": unknown` {
		t.Errorf("Error() = %q", fe.Error())
	}
}

// TestValidNames checks the hand-written name checks against the grammar
// SPEC §2 and §3 state as regular expressions.
func TestValidNames(t *testing.T) {
	agentRE := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	uuidRE := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$`)
	inputs := []string{"", "a", "A9", "_a", "-a", "a-b_c", "a.b", "a:b", "a b", "é", "a\n", "mem_20261121T091500Z_alice_0001",
		strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("b", 200), strings.Repeat("b", 201), "a/b", "..", "a\x00"}
	alphabet := "aZ09_-.:/ é\n"
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 5000; i++ {
		b := make([]byte, rng.Intn(8))
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		inputs = append(inputs, string(b))
	}
	for _, s := range inputs {
		if got, want := journal.ValidAgent(s), agentRE.MatchString(s); got != want {
			t.Errorf("ValidAgent(%q) = %v, want %v", s, got, want)
		}
		if got, want := journal.ValidUUID(s), uuidRE.MatchString(s); got != want {
			t.Errorf("ValidUUID(%q) = %v, want %v", s, got, want)
		}
	}
}
