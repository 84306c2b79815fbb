package surprise_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/surprise"
)

var recent = []surprise.Prior{
	{UUID: "mem_1", Text: "Deploys happen on Tuesdays after the standup", Entities: []string{"#deploys"}},
	{UUID: "mem_2", Text: "The billing service uses #postgres and runs in eu-west-1", Entities: []string{"#postgres"}},
	{UUID: "mem_3", Text: "@Mira owns the billing service", Entities: []string{"@Mira"}},
	{UUID: "mem_4", Text: "The cache is warmed every night at 02:00"},
}

func learning(text string, opts ...func(*journal.Record)) *journal.Record {
	r := &journal.Record{Agent: "a", Kind: journal.KindObservation, Tier: "learning", Text: text}
	for _, o := range opts {
		o(r)
	}
	return r
}

func kind(k journal.Kind) func(*journal.Record) { return func(r *journal.Record) { r.Kind = k } }
func tier(t string) func(*journal.Record)       { return func(r *journal.Record) { r.Tier = t } }
func entity(e string) func(*journal.Record) {
	return func(r *journal.Record) { r.Entities = append(r.Entities, e) }
}
func conflicts(u string) func(*journal.Record) {
	return func(r *journal.Record) { r.ConflictsWith = []string{u} }
}
func remember(r *journal.Record) {
	r.Extra = map[string]json.RawMessage{"remember": json.RawMessage("true")}
}

// TestGate is SPEC §9's table: duplicates and near-duplicates are
// skipped, new records stored, corrections and contradictions always
// stored, each always-stored case bypasses the score, and only the
// learning tier is gated.
func TestGate(t *testing.T) {
	cases := []struct {
		name     string
		rec      *journal.Record
		decision surprise.Decision
		always   string
		gated    bool
	}{
		{"exact duplicate", learning("Deploys happen on Tuesdays after the standup"), surprise.Skip, "", true},
		{"duplicate, other case and punctuation", learning("deploys happen on TUESDAYS, after the standup!"), surprise.Skip, "", true},
		{"near-duplicate", learning("Deploys happen on Tuesdays after standup"), surprise.Skip, "", true},
		{"near-duplicate, one word more", learning("Deploys usually happen on Tuesdays after the standup"), surprise.Skip, "", true},
		{"new", learning("The load balancer drops idle connections after 60 seconds"), surprise.Store, "", true},
		{"half new: stored with low confidence", learning("Deploys happen on Tuesdays, rollbacks need approval from ops"), surprise.StoreLow, "", true},
		{"correction kind", learning("Deploys happen on Tuesdays after the standup", kind(journal.KindCorrection)), surprise.Store, "correction", true},
		{"correction language", learning("No, actually deploys happen on Tuesdays after the standup"), surprise.Store, "correction", true},
		{"correction language, curly apostrophe", learning("That’s wrong: the cache is warmed every night at 02:00"), surprise.Store, "correction", true},
		{"contradiction by negation", learning("Deploys never happen on Tuesdays after the standup"), surprise.Store, "contradiction", true},
		{"contradiction declared", learning("Deploys happen on Tuesdays after the standup", conflicts("mem_1")), surprise.Store, "contradiction", true},
		{"outcome", learning("Deploys happen on Tuesdays after the standup", kind(journal.KindOutcome)), surprise.Store, "outcome", true},
		{"remember: true", learning("Deploys happen on Tuesdays after the standup", remember), surprise.Store, "remember", true},
		{"core is never gated", learning("Deploys happen on Tuesdays after the standup", tier("core")), surprise.Store, "", false},
		{"working is never gated", learning("Deploys happen on Tuesdays after the standup", tier("working")), surprise.Store, "", false},
		{"no tier is never gated", learning("Deploys happen on Tuesdays after the standup", tier("")), surprise.Store, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := surprise.Score(c.rec, recent)
			if r.Decision != c.decision || r.Always != c.always || r.Gated != c.gated {
				t.Errorf("got %s always=%q gated=%v (score %.2f: %s), want %s always=%q gated=%v",
					r.Decision, r.Always, r.Gated, r.Score, r.Reason, c.decision, c.always, c.gated)
			}
			if c.gated && (r.Score < 0 || r.Score > 1 || r.Reason == "") {
				t.Errorf("score %v reason %q", r.Score, r.Reason)
			}
			// Deterministic: the same inputs, the same verdict.
			if again := surprise.Score(c.rec, recent); !reflect.DeepEqual(again, r) {
				t.Errorf("second score %+v, first %+v", again, r)
			}
		})
	}
}

// TestNewEntityRaisesTheScore: the same text scores higher when it names
// an entity the agent never mentioned, and not when the entity is known.
func TestNewEntityRaisesTheScore(t *testing.T) {
	text := "The billing service runs in eu-west-1 on postgres"
	plain := surprise.Score(learning(text), recent)
	known := surprise.Score(learning(text, entity("#postgres")), recent)
	fresh := surprise.Score(learning(text, entity("Acme Corp")), recent)
	inText := surprise.Score(learning(text+" for @Zoltan"), recent)
	if known.Score != plain.Score {
		t.Errorf("known entity: %v, plain %v", known.Score, plain.Score)
	}
	if fresh.Score <= plain.Score || inText.Score <= plain.Score {
		t.Errorf("new entity: %v and %v in text, plain %v", fresh.Score, inText.Score, plain.Score)
	}
}

// TestNothingRecent: an agent's first learning record is new.
func TestNothingRecent(t *testing.T) {
	r := surprise.Score(learning("anything at all"), nil)
	if r.Decision != surprise.Store || r.Score < surprise.StoreAt || r.Match != "" {
		t.Errorf("%+v", r)
	}
}

// TestRecent reads the newest records of a journal directory, newest
// first, skipping bookkeeping and unreadable lines.
func TestRecent(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("2026-11-20.jsonl", `{"uuid":"u1","kind":"fact","text":"old one"}`+"\n")
	write("2026-11-21.jsonl", `{"uuid":"u2","kind":"fact","text":"a \"quoted\" one","tags":["x","y]"]}`+"\n"+
		`not json`+"\n"+
		`{"uuid":"u3","kind":"compaction","text":"absorbed"}`+"\n"+
		`{ "text" : "spaced", "uuid" : "u4", "entities" : ["@Mira"] }`+"\n")
	got, err := surprise.Recent(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []surprise.Prior{
		{UUID: "u4", Text: "spaced", Entities: []string{"@Mira"}},
		{UUID: "u2", Text: `a "quoted" one`, Entities: []string{"x", "y]"}},
		{UUID: "u1", Text: "old one"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got, _ := surprise.Recent(dir, 2); len(got) != 2 || got[1].UUID != "u2" {
		t.Errorf("n=2: %+v", got)
	}
	if got, err := surprise.Recent(filepath.Join(dir, "none"), 2); err != nil || got != nil {
		t.Errorf("missing dir: %v %v", got, err)
	}
}

// FuzzParsePrior: on any line that is a JSON object, ParsePrior agrees
// with encoding/json on the text and uuid (when they are strings).
func FuzzParsePrior(f *testing.F) {
	for _, s := range []string{
		`{"uuid":"u","kind":"fact","text":"hello"}`,
		`{"text":"a \"text\": b","uuid":"x"}`,
		`{"why":"\"text\":\"no\"","text":"yes"}`,
		`{"text":"\u00e9t\u00e9","entities":["@a","b"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		p, ok := surprise.ParsePrior([]byte(line))
		if !utf8.ValidString(line) {
			// The journal rejects such a line; the gate must not score it.
			if ok && !utf8.ValidString(p.Text) {
				t.Errorf("ParsePrior(%q) = %+v: text that is not UTF-8", line, p)
			}
			return
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			return
		}
		text, isString := m["text"].(string)
		if !isString || text == "" {
			return
		}
		if k, _ := m["kind"].(string); k == "compaction" || k == "feedback" || k == "promotion" {
			return
		}
		if !valueIsTopLevel(line) || repeatsTopLevelKey(line) {
			return
		}
		if !ok || p.Text != text {
			t.Errorf("ParsePrior(%q) = %+v %v, json says text %q", line, p, ok, fmt.Sprint(text))
		}
	})
}

// valueIsTopLevel leaves out lines where a nested object holds a "text"
// key before the top-level one (ParsePrior reads the first).
func valueIsTopLevel(line string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return false
	}
	for k, v := range m {
		if k != "text" && bytesContains(v, `"text"`) {
			return false
		}
	}
	return true
}

func bytesContains(b []byte, s string) bool { return strings.Contains(string(b), s) }

// repeatsTopLevelKey says whether line's object names a key twice. Such a
// line is a reject (journal.Parse), never a record, so what ParsePrior
// makes of it does not matter; encoding/json keeps the last value where
// ParsePrior reads the first.
func repeatsTopLevelKey(line string) bool {
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := tok.(string)
		if seen[key] {
			return true
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}
