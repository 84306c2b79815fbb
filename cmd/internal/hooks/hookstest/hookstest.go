// Package hookstest holds what the hooks' tests and the command's share:
// host files as the real hosts write them.
package hookstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CodexRollout writes a Codex rollout whose first line is the
// session_meta Codex 0.171 writes, with source (a JSON value: `"exec"`,
// `"cli"`, `{"subagent":"review"}`), and returns its path.
func CodexRollout(t testing.TB, source string) string {
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
