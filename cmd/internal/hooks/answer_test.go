package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codexRollout writes a Codex rollout whose first line is the
// session_meta Codex 0.171 writes, with source, and returns its path.
func codexRollout(t *testing.T, source string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout-2026-11-24T09-00-00-s.jsonl")
	meta := `{"timestamp":"2026-11-24T09:00:00.000Z","ordinal":0,"type":"session_meta","payload":{"session_id":"s","originator":"codex_exec","cli_version":"0.171.0","source":` +
		source + `,"base_instructions":{"text":"` + strings.Repeat("You are Codex. ", 2000) + `"}}}` + "\n" +
		`{"type":"response_item","payload":{}}` + "\n"
	if err := os.WriteFile(path, []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCodexSessionSource reads the source of a rollout's session_meta,
// and nothing from a file that does not begin with one.
func TestCodexSessionSource(t *testing.T) {
	for _, tc := range []struct{ source, want string }{{`"exec"`, "exec"}, {`"cli"`, "cli"}, {`{"subagent":"review"}`, ""}} {
		got, err := codexSessionSource(codexRollout(t, tc.source))
		if err != nil || got != tc.want {
			t.Errorf("source %s: got %q, %v; want %q", tc.source, got, err, tc.want)
		}
	}
	other := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(other, []byte(`{"type":"response_item"}`+"\n"), 0o644)
	if got, err := codexSessionSource(other); got != "" || err != nil {
		t.Errorf("no session_meta: got %q, %v", got, err)
	}
}
