package e2e

import (
	"path/filepath"
	"testing"
)

// claudeSession runs one Claude Code session: a prompt memory bears on, an
// unrelated one on resume, /compact, and a last prompt on resume; each
// step is one `claude -p` run, so each starts (or resumes) the session and
// ends it (Stop, SessionEnd).
func claudeSession(t *testing.T, w *world) {
	t.Helper()
	claude := filepath.Join(w.clients, "claude")
	w.memsync("hook", "install", "claude-code", "--project", w.project, "--agent", agent, "--repo", w.repo, "--prompt")
	w.wrapHooks(filepath.Join(w.project, ".claude", "settings.json"))
	w.run(w.project, "", claude, "mcp", "add", "memsync", "--", filepath.Join(w.bin, "memsync"), "mcp", "--agent", agent, "--repo", w.repo)
	const session = "5b0c9e2a-6f1d-4c8e-9a7b-3d2e1f0a9c8b"
	common := []string{"--output-format", "json", "--allowedTools", "mcp__memsync__search"}
	steps := []struct {
		phase string
		args  []string
	}{
		{"start", []string{"-p", databasePrompt, "--session-id", session}},
		{"unrelated", []string{"-p", unrelatedPrompt, "--resume", session}},
		{"compact", []string{"-p", "/compact", "--resume", session}},
		{"resume", []string{"-p", "Thanks, that is all.", "--resume", session}},
	}
	for _, s := range steps {
		w.api.setPhase(s.phase)
		w.run(w.project, "", claude, append(s.args, common...)...)
	}
}

func TestClaudeCode(t *testing.T) {
	w := newWorld(t, "claude-code")
	defer w.saveArtifacts("claude-code")
	claudeSession(t, w)
}
