package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzMergeHooks: whatever the settings file holds, merging memsync's
// hooks either refuses it or writes valid JSON holding each memsync
// command once, and merging the result again changes nothing.
func FuzzMergeHooks(f *testing.F) {
	for _, seed := range []string{
		"", "{}", "[]", "null", `{"hooks":{}}`, `{"hooks":null}`, `{"hooks":{"SessionStart":[]}}`,
		`{"model":"x","hooks":{"SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"echo hi"}]}]}}`,
		`{"hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"/usr/bin/memsync hook claude-code PreCompact --agent old"}]}]}}`,
		`{"hooks":{"Stop":[{"hooks":"nope"}]}}`, `{"a":1} trailing`, `{"hooks":{"SessionStart":[1,2]}}`,
	} {
		f.Add([]byte(seed))
	}
	cmds := hookCommands("/opt/bin/memsync", "claude-code", []string{"SessionStart", "PreCompact", "SessionEnd"}, "planner", "")
	f.Fuzz(func(t *testing.T, settings []byte) {
		out, err := mergeHooks(settings, "claude-code", cmds)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON out of %q:\n%s", settings, out)
		}
		for ev, cmd := range cmds {
			quoted, _ := json.Marshal(cmd)
			if n := bytes.Count(out, quoted); n != 1 {
				t.Fatalf("%s: %d copies of %s in\n%s", ev, n, quoted, out)
			}
		}
		again, err := mergeHooks(out, "claude-code", cmds)
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("merging twice differs (%v):\n%s\n---\n%s", err, out, again)
		}
	})
}

// TestMergeHooksReplacesOldEntries: an entry installed earlier with other
// flags is replaced, not added to; another host's entries stay.
func TestMergeHooksReplacesOldEntries(t *testing.T) {
	old := `{"hooks":{"SessionStart":[
  {"hooks":[{"type":"command","command":"'/old path/memsync' hook claude-code SessionStart --agent old"}]},
  {"hooks":[{"type":"command","command":"memsync hook codex SessionStart"},{"type":"command","command":"echo keep"}]}]}}`
	out, err := mergeHooks([]byte(old), "claude-code", map[string]string{"SessionStart": "memsync hook claude-code SessionStart --agent new"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "--agent old") || !strings.Contains(s, "--agent new") || !strings.Contains(s, "hook codex SessionStart") || !strings.Contains(s, "echo keep") {
		t.Fatalf("merged:\n%s", s)
	}
}
