package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// terminalDriver runs a program in a pseudo-terminal of 50 by 200: it
// waits for the screen to show READY, types PROMPT and Enter, waits until
// DONE_GLOB matches at least DONE_COUNT files (the hook wrapper's
// captures), lets the screen settle, presses Ctrl-C twice and saves all
// the program wrote in OUT. With $TERMINAL_PEEK set it first types those
// keys (a key that opens a panel) and Escape.
const terminalDriver = `
import fcntl, glob, os, pty, select, struct, sys, termios, time
out, ready, prompt, done_glob, done_count = sys.argv[1:6]
argv = sys.argv[6:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
buf = b""
def pump(seconds, until=None):
    global buf
    end = time.time() + seconds
    while time.time() < end:
        if until and until():
            return True
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            buf += data
    return False
ok = pump(60, lambda: ready.encode() in buf)
if ok:
    time.sleep(1)
    peek = os.environ.get("TERMINAL_PEEK", "").encode()
    if peek:
        os.write(fd, peek); pump(2); os.write(fd, b"\x1b"); pump(1)
    os.write(fd, prompt.encode())
    pump(1)
    os.write(fd, b"\r")
    ok = pump(90, lambda: len(glob.glob(done_glob)) >= int(done_count))
    pump(3)
os.write(fd, b"\x03"); pump(1); os.write(fd, b"\x03"); pump(3)
open(out, "wb").write(buf)
try:
    os.kill(pid, 9)
except OSError:
    pass
sys.exit(0 if ok else 3)
`

var terminalEscapes = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?|[\s\x00-\x1f]+`)

// screenText is what a program wrote to its terminal, less escape
// sequences and all white space (the renderer moves the cursor instead of
// writing spaces).
func screenText(raw []byte) string {
	return terminalEscapes.ReplaceAllString(string(raw), "")
}

// TestClaudeCodeTerminal runs Claude Code interactively, in a
// pseudo-terminal, as a person does: the hooks see CLAUDE_CODE_ENTRYPOINT
// cli, memsync gives the reminder at Stop as additionalContext, the model
// gets it once, and the terminal shows no "Stop hook error" (2.1.197) or
// "Stop hook reported a problem" (2.1.332), which a block-with-reason
// shows (issue 53).
func TestClaudeCodeTerminal(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIPPED, not passed: python3 (its pty module drives the terminal) is not installed")
	}
	claudeVersions(t, func(t *testing.T, w *world) {
		defer w.saveArtifacts("claude-code-terminal-" + w.label)
		claudeSetup(t, w)
		w.editJSON(filepath.Join(w.home, ".claude.json"), func(cfg map[string]any) {
			cfg["customApiKeyResponses"] = map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}}
			cfg["hasCompletedOnboarding"] = true
			cfg["theme"] = "dark"
			cfg["projects"] = map[string]any{w.project: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}
		})
		w.api.setPhase("terminal")
		screen := filepath.Join(t.TempDir(), "screen")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		// Two Stops: the one that reminds, and the one ending the
		// continuation (stop_hook_active).
		cmd := exec.CommandContext(ctx, python, "-c", terminalDriver, screen, "shortcuts", databasePrompt,
			filepath.Join(w.capture, "*-Stop.out"), "2", w.claude, "--allowedTools", "mcp__memsync__search")
		cmd.Dir = w.project
		cmd.Env = append(w.env[:len(w.env):len(w.env)], "TERM=xterm-256color")
		out, err := cmd.CombinedOutput()
		raw, _ := os.ReadFile(screen)
		text := screenText(raw)
		if err != nil {
			t.Fatalf("the terminal session did not reach its second Stop: %v %s\nscreen: %.3000s", err, out, text)
		}
		for _, bad := range []string{"Stophookerror", "reportedaproblem", "hookerroroccurred"} {
			if strings.Contains(text, bad) {
				t.Errorf("the terminal shows %q", bad)
			}
		}
		if !strings.Contains(text, "memsyncreminder(oncepersession)") {
			t.Errorf("the terminal does not show the Stop hook's reminder")
		}
		w.checkReminders("claude-code terminal", 1, "terminal")
		for _, r := range w.api.requests() {
			if strings.Contains(string(r.Body), "Stop hook blocking error") {
				t.Errorf("a request carries a Stop hook blocking error")
			}
		}
		for _, c := range w.hookCalls() {
			if c.Event == "Stop" && !slices.Contains(c.Env, "CLAUDE_CODE_ENTRYPOINT=cli") {
				t.Errorf("an interactive Stop hook ran without CLAUDE_CODE_ENTRYPOINT=cli")
			}
		}
	})
}

// TestCodexTerminal runs Codex interactively, its TUI in a
// pseudo-terminal, as a person does: the session's rollout says source
// "cli", so memsync gives the reminder at Stop (a block whose reason
// Codex makes a continuation prompt), the model gets it once with the
// session's context, and the screen shows no warning or error at start
// (issue 53: a SessionEnd timeout over Codex's limit was a warning at
// every start).
func TestCodexTerminal(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIPPED, not passed: python3 (its pty module drives the terminal) is not installed")
	}
	codexVersions(t, func(t *testing.T, w *world) {
		defer w.saveArtifacts("codex-terminal-" + w.label)
		codex := codexSetup(t, w)
		// The TUI offers to switch the configured model to a newer one at
		// start (a dialog that would take the prompt): say it was seen.
		f, err := os.OpenFile(filepath.Join(w.home, ".codex", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString("\n[notice.model_migrations]\n\"gpt-5.5\" = \"gpt-6-sol\"\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		w.api.setPhase("terminal")
		screen := filepath.Join(t.TempDir(), "screen")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, python, "-c", terminalDriver, screen, "shortcuts", databasePrompt,
			filepath.Join(w.capture, "*-Stop.out"), "2", codex)
		cmd.Dir = w.project
		// F2 opens the TUI's warnings panel, for the screen to show them.
		cmd.Env = append(w.env[:len(w.env):len(w.env)], "TERM=xterm-256color", "TERMINAL_PEEK=\x1bOQ")
		out, err := cmd.CombinedOutput()
		raw, _ := os.ReadFile(screen)
		text := screenText(raw)
		if err != nil {
			t.Fatalf("the terminal session did not reach its second Stop: %v %s\nscreen: %.3000s", err, out, text)
		}
		// The start: all the screen showed before the prompt was typed,
		// and the warnings panel F2 opened (the TUI lists a warning at start
		// there, "⚠ N warning · f2 to view" in the footer).
		start := text
		if i := strings.Index(text, strings.Join(strings.Fields(databasePrompt), "")); i >= 0 {
			start = text[:i]
		}
		lower := strings.ToLower(start)
		for _, bad := range []string{"hook", "mcp", "memsync", "timeout", "config", "error", "failed"} {
			if strings.Contains(lower, bad) {
				t.Errorf("the screen shows %q at start: %.3000s", bad, start)
			}
		}
		// Warnings of the machine, not memsync's: this host has no
		// bubblewrap (Codex's Linux sandbox) on PATH.
		machine := 0
		for _, w := range []string{"couldnotfindbubblewraponPATH"} {
			if strings.Contains(start, w) {
				machine++
			}
		}
		if m := startWarnings.FindAllStringSubmatch(start, -1); m != nil {
			if n, _ := strconv.Atoi(m[len(m)-1][1]); n > machine {
				t.Errorf("Codex shows %d warnings at start, %d of them the machine's: %.3000s", n, machine, start)
			}
		}
		if strings.Contains(strings.ToLower(text), "error") {
			t.Errorf("the terminal shows an error: %.6000s", text)
		}
		if !strings.Contains(text, "Blockedbyhook└memsyncreminder(oncepersession)") {
			t.Errorf("the terminal does not show the Stop hook's reminder")
		}
		w.checkReminders("codex terminal", 1, "terminal")
		e := expectFor(agent)
		turns := mainConversation(w.api.requests())
		if len(turns) == 0 {
			t.Fatal("no request carried the session's conversation")
		}
		n := 0
		for _, b := range turns[len(turns)-1].Blocks {
			if b.Kind == "text" {
				n += strings.Count(b.Text, e.SessionMarker)
			}
		}
		if n != 1 {
			t.Errorf("session packet: %d times in the conversation at the end, want 1", n)
		}
		if !anyBlock(promptTurn(turns, databasePrompt), func(b block) bool {
			return b.Kind == "text" && strings.Contains(b.Text, e.PromptMarker) && strings.Contains(b.Text, e.Memory)
		}) {
			t.Errorf("prompt packet: none with %q for the prompt %q", e.Memory, databasePrompt)
		}
		// The TUI fetches its announcement tip from
		// raw.githubusercontent.com/openai/codex at every start whatever the
		// config says (0.171: [tui] show_tooltips = false does not stop it);
		// the proxy refused it. Anything else is not Codex's own.
		tried := slices.DeleteFunc(w.egress.tried(), func(s string) bool {
			return strings.HasPrefix(s, "CONNECT raw.githubusercontent.com:443 ")
		})
		if len(tried) > 0 {
			t.Errorf("codex tried to reach beyond loopback (refused by the test's proxy): %q", tried)
		}
	})
}

// startWarnings is how many warnings the Codex TUI's warnings panel
// lists ("Warnings · 1 of N", white space removed).
var startWarnings = regexp.MustCompile(`Warnings·\d+of(\d+)`)
