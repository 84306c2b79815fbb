package journal

import (
	"slices"
	"testing"
)

func TestSignalFields(t *testing.T) {
	for _, tc := range []struct {
		line     string
		supports []string
		result   string
		feedback string
	}{
		{`{"uuid":"a1","ts":"2026-11-20T09:00:00Z","agent":"a","kind":"fact","text":"x","supports":["b1","a1","bad id","c1"]}`, []string{"b1", "c1"}, "", ""},
		{`{"uuid":"a1","ts":"2026-11-20T09:00:00Z","agent":"a","kind":"outcome","text":"x","result":"success"}`, nil, "success", ""},
		{`{"uuid":"a1","ts":"2026-11-20T09:00:00Z","agent":"a","kind":"feedback","text":"x","feedback":"wrong"}`, nil, "", "wrong"},
		{`{"uuid":"a1","ts":"2026-11-20T09:00:00Z","agent":"a","kind":"fact","text":"x","supports":"b1","result":7,"feedback":["wrong"]}`, nil, "", ""},
	} {
		r, err := Parse([]byte(tc.line))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Supports(), tc.supports) || r.Result() != tc.result || r.Feedback() != tc.feedback {
			t.Errorf("%s: supports %q result %q feedback %q", tc.line, r.Supports(), r.Result(), r.Feedback())
		}
	}
}

// FuzzSignalFields: whatever a line holds, the signal accessors never
// panic and Supports names only valid uuids other than the record's own.
func FuzzSignalFields(f *testing.F) {
	f.Add(`["b1","a1"]`, `"success"`, `"wrong"`)
	f.Add(`"b1"`, `7`, `null`)
	f.Add(`[1,"x y",""]`, `{"a":1}`, `[]`)
	f.Fuzz(func(t *testing.T, supports, result, feedback string) {
		line := `{"uuid":"a1","ts":"2026-11-20T09:00:00Z","agent":"a","kind":"fact","text":"x","supports":` + supports +
			`,"result":` + result + `,"feedback":` + feedback + `}`
		r, err := Parse([]byte(line))
		if err != nil {
			return
		}
		for _, id := range r.Supports() {
			if !ValidUUID(id) || id == r.UUID {
				t.Fatalf("Supports() = %q", r.Supports())
			}
		}
		_, _ = r.Result(), r.Feedback()
	})
}
