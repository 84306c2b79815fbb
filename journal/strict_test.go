package journal_test

import (
	"errors"
	"testing"

	"github.com/memsync/memsync/journal"
)

// TestParseSaysWhatIsWrong: a ts at the zero time is not "required" but
// named as the zero time; a key repeated in any object of the line is a
// reject naming the key (readers could disagree on which value wins). The
// old Parse called the first "required" and accepted the rest, keeping the
// last value.
func TestParseSaysWhatIsWrong(t *testing.T) {
	const head = `"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact"`
	cases := []struct {
		line, field, reason string
	}{
		{`{"ts":"0001-01-01T00:00:00Z","agent":"alice","kind":"fact","text":"x"}`, "ts",
			`"0001-01-01T00:00:00Z" is the zero time (0001-01-01T00:00:00Z), not a record's time`},
		{`{"ts":"0001-01-01T01:00:00+01:00","agent":"alice","kind":"fact","text":"x"}`, "ts",
			`"0001-01-01T01:00:00+01:00" is the zero time (0001-01-01T00:00:00Z), not a record's time`},
		{`{` + head + `,"text":"a","text":"b"}`, "text", `key "text" appears more than once (readers could disagree on which value wins)`},
		{`{` + head + `,"text":"a","\u0074ext":"b"}`, "text", `key "text" appears more than once (readers could disagree on which value wins)`},
		{`{` + head + `,"scope":"private","text":"a","scope":"shared"}`, "scope", `key "scope" appears more than once (readers could disagree on which value wins)`},
		{`{` + head + `,"text":"a","source":{"type":"told","type":"read"}}`, "source", `key "source.type" appears more than once (readers could disagree on which value wins)`},
		{`{` + head + `,"text":"a","refs":[{"git":"a"},{"git":"b","git":"c"}]}`, "refs", `key "refs[1].git" appears more than once (readers could disagree on which value wins)`},
		{`{` + head + `,"text":"a","x":{"y":[1,{"z":1,"z":2}]}}`, "x", `key "x.y[1].z" appears more than once (readers could disagree on which value wins)`},
		{`{` + head + `,"text":"a","x":1,"x":1}`, "x", `key "x" appears more than once (readers could disagree on which value wins)`},
	}
	for _, tc := range cases {
		_, err := journal.Parse([]byte(tc.line))
		var fe *journal.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || fe.Reason != tc.reason {
			t.Errorf("Parse(%s) = %v, want field %q: %s", tc.line, err, tc.field, tc.reason)
		}
	}
	// The same key in different objects is no repeat.
	for _, line := range []string{
		`{` + head + `,"text":"a","refs":[{"git":"a"},{"git":"b"}]}`,
		`{` + head + `,"text":"a","x":{"text":1},"y":[{"a":1},{"a":2}]}`,
	} {
		if _, err := journal.Parse([]byte(line)); err != nil {
			t.Errorf("Parse(%s): %v", line, err)
		}
	}
}
