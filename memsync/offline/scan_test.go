package offline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

var scanSeeds = []string{
	`{"ts":"2026-11-20T09:00:00Z","agent":"alice","kind":"fact","text":"plain"}`,
	`{"uuid":"u1","ts":"2026-11-20T09:00:00+02:00","agent":"alice","kind":"decision","scope":"shared","text":"caf\u00e9 \"quoted\" \\ back","entities":["@Shaun","Acme Corp"],"tags":["t"],"supersedes":["u0"],"extra":{"nested":[1,2,{"a":null}],"n":-1.5e3,"b":true}}`,
	`  { "text" : "spaces" , "agent" : "alice" , "kind" : "fact" , "ts" : "2026-11-20T09:00:00Z" , "tags" : null }  `,
	`{"te\u0078t":"escaped key","agent":"alice","kind":"fact","ts":"2026-11-20T09:00:00Z"}`,
	`{"text":"dup","text":"last wins","agent":"alice","kind":"fact","ts":"2026-11-20T09:00:00Z"}`,
	"\u00a0\v{\"ts\":\"2026-11-20T09:00:00Z\",\"agent\":\"alice\",\"kind\":\"fact\",\"text\":\"nbsp\"}\u0085",
	`{"text":"x"}}`, `{"text":5}`, `[]`, `{`, `{"a":tru}`, `{"text":"\ud83d\ude00 emoji"}`,
}

// FuzzLightRecord checks that the light scanner never loses a record that
// journal.Parse accepts, and reads the same values from it.
func FuzzLightRecord(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var lr lightRecord
		ok := lr.parse([]byte(line))
		rec, err := journal.Parse([]byte(line))
		if err != nil {
			return
		}
		if !ok {
			t.Fatalf("light scanner refused a valid record: %q", line)
		}
		if string(lr.agent) != rec.Agent || journal.Kind(lr.kind) != rec.Kind || string(lr.text) != rec.Text {
			t.Fatalf("light %q/%q/%q, parse %q/%q/%q", lr.agent, lr.kind, lr.text, rec.Agent, rec.Kind, rec.Text)
		}
		if scope := string(lr.scope); scope == "" && rec.Scope != journal.ScopePrivate || scope != "" && scope != string(rec.Scope) {
			t.Fatalf("scope %q, parse %q", scope, rec.Scope)
		}
		if lr.uuid != nil && string(lr.uuid) != rec.UUID {
			t.Fatalf("uuid %q, parse %q", lr.uuid, rec.UUID)
		}
		for _, f := range []struct {
			light [][]byte
			rec   []string
		}{{lr.entities, rec.Entities}, {lr.tags, rec.Tags}, {lr.supersedes, rec.Supersedes}} {
			got := make([]string, len(f.light))
			for i, b := range f.light {
				got[i] = string(b)
			}
			if len(got) != len(f.rec) || len(got) > 0 && !slices.Equal(got, f.rec) {
				t.Fatalf("list %q, parse %q", got, f.rec)
			}
		}
	})
}

func TestLightRecordRefuses(t *testing.T) {
	for _, line := range []string{`{"text":"x"}}`, `{"text":5}`, `[]`, `{`, `{"a":tru}`, `{"tags":"x"}`, `{"a":1,}`, `{"a" 1}`} {
		var lr lightRecord
		if lr.parse([]byte(line)) {
			t.Errorf("accepted %q", line)
		}
	}
}

func TestEachLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	long := strings.Repeat("x", journal.MaxLineBytes+10)
	content := "one\r\n\n   \n" + long + "\n" + strings.Repeat("y", 100<<10) + "\nsix\npartial"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	type got struct {
		text   string
		number int
		off    int64
	}
	var lines []got
	err := eachLine(path, func(line []byte, number int, off int64) error {
		lines = append(lines, got{string(line), number, off})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []got{
		{"one", 1, 0},
		{strings.Repeat("y", 100<<10), 5, int64(10 + len(long) + 1)},
		{"six", 6, int64(10 + len(long) + 1 + 100<<10 + 1)},
	}
	if !slices.Equal(lines, want) {
		for _, l := range lines {
			t.Logf("%d @%d: %.20q (%d bytes)", l.number, l.off, l.text, len(l.text))
		}
		t.Fatal("lines differ")
	}
	data, _ := os.ReadFile(path)
	for _, l := range lines {
		if string(data[l.off:l.off+int64(len(l.text))]) != l.text {
			t.Fatalf("offset %d does not hold line %d", l.off, l.number)
		}
	}
}
