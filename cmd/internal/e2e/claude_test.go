package e2e

import (
	"path/filepath"
	"testing"
)

// claudeSession runs the first steps (all for 0) of one Claude Code session: a prompt memory bears on, an
// unrelated one on resume, /compact, and a last prompt on resume; each
// step is one `claude -p` run, so each starts (or resumes) the session and
// ends it (Stop, SessionEnd).
func claudeSession(t *testing.T, w *world, steps int) {
	t.Helper()
	claude := filepath.Join(w.clients, "claude")
	w.memsync("hook", "install", "claude-code", "--project", w.project, "--agent", agent, "--repo", w.repo, "--prompt")
	w.wrapHooks(filepath.Join(w.project, ".claude", "settings.json"))
	w.run(w.project, "", claude, "mcp", "add", "memsync", "--", filepath.Join(w.bin, "memsync"), "mcp", "--agent", agent, "--repo", w.repo)
	const session = "5b0c9e2a-6f1d-4c8e-9a7b-3d2e1f0a9c8b"
	common := []string{"--output-format", "json", "--allowedTools", "mcp__memsync__search"}
	all := []struct {
		phase string
		args  []string
	}{
		{"start", []string{"-p", databasePrompt, "--session-id", session}},
		{"unrelated", []string{"-p", unrelatedPrompt, "--resume", session}},
		{"compact", []string{"-p", "/compact", "--resume", session}},
		{"resume", []string{"-p", "Thanks, that is all.", "--resume", session}},
	}
	if steps == 0 {
		steps = len(all)
	}
	for _, s := range all[:steps] {
		w.api.setPhase(s.phase)
		w.run(w.project, "", claude, append(s.args, common...)...)
	}
}

// TestClaudeCode runs a Claude Code session against memsync and checks
// what the model received.
func TestClaudeCode(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude-code")
	defer w.saveArtifacts("claude-code")
	claudeSession(t, w, 0)
	w.finish("claude-code")
}
