package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// codexConfig is the test's $CODEX_HOME/config.toml: the fake model
// provider on loopback, memsync's MCP server, no update checks, analytics
// or feedback, the project trusted.
func (w *world) codexConfig() string {
	return fmt.Sprintf(`model = "gpt-5.5"
model_provider = "e2e"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false
model_auto_compact_token_limit = 50000

[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
tool_suggest = false
skill_mcp_dependency_install = false
api_key_model_discovery = false
api_key_cyber_access_programs = false
in_app_updates = false
daemon_auto_start = false

[analytics]
enabled = false

[feedback]
enabled = false

[history]
persistence = "none"

[model_providers.e2e]
name = "fake model API on loopback"
base_url = %q
wire_api = "responses"
env_key = "MEMSYNC_E2E_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[mcp_servers.memsync]
command = %q
args = ["mcp", "--agent", %q, "--repo", %q]
default_tools_approval_mode = "approve"

[projects.%q]
trust_level = "trusted"
`, w.api.url+"/v1", filepath.Join(w.bin, "memsync"), agent, w.repo, w.project)
}

// trustCodexHooks trusts every hook Codex finds for the project, as its
// /hooks screen does: it asks `codex app-server` (hooks/list) for each
// hook's key and current hash and writes them to config.toml as
// [hooks.state."KEY"] trusted_hash = "HASH".
func (w *world) trustCodexHooks(codex string) {
	w.t.Helper()
	hooks := w.codexHooks(codex)
	var b strings.Builder
	for _, h := range hooks {
		if h.TrustStatus == "trusted" {
			continue
		}
		fmt.Fprintf(&b, "\n[hooks.state.%q]\ntrusted_hash = %q\n", h.Key, h.CurrentHash)
	}
	cfg := filepath.Join(w.home, ".codex", "config.toml")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		w.t.Fatal(err)
	}
	for _, h := range w.codexHooks(codex) {
		if h.TrustStatus != "trusted" {
			w.t.Fatalf("codex still does not trust hook %s (%s): %+v", h.Key, h.TrustStatus, h)
		}
	}
}

// codexHook is one hook as `codex app-server` lists it.
type codexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// codexHooks lists the hooks Codex sees for the project.
func (w *world) codexHooks(codex string) []codexHook {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "app-server")
	cmd.Dir = w.project
	cmd.Env = w.env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	send := func(v any) {
		data, _ := json.Marshal(v)
		in.Write(append(data, '\n'))
	}
	send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "memsync-e2e", "version": "0"}}})
	send(map[string]any{"method": "initialized"})
	send(map[string]any{"id": 2, "method": "hooks/list", "params": map[string]any{"cwds": []string{w.project}}})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Error  json.RawMessage `json:"error"`
			Result struct {
				Data []struct {
					Hooks  []codexHook      `json:"hooks"`
					Errors []map[string]any `json:"errors"`
				} `json:"data"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || string(msg.ID) != "2" {
			continue
		}
		if msg.Error != nil {
			w.t.Fatalf("codex app-server hooks/list: %s", msg.Error)
		}
		var hooks []codexHook
		for _, d := range msg.Result.Data {
			if len(d.Errors) > 0 {
				w.t.Fatalf("codex reports hook errors: %v", d.Errors)
			}
			hooks = append(hooks, d.Hooks...)
		}
		return hooks
	}
	w.t.Fatalf("codex app-server gave no hooks/list answer: %v\nstderr: %s", sc.Err(), stderr.String())
	return nil
}

// codexSetup connects Codex to memsync as the README's "Connect your
// agent" does (config.toml with the MCP server, memsync hook install
// codex), wraps the hooks in the capture wrapper, trusts them, and
// returns the codex to run.
func codexSetup(t *testing.T, w *world) string {
	t.Helper()
	codex := w.codex
	if err := os.WriteFile(filepath.Join(w.home, ".codex", "config.toml"), []byte(w.codexConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	w.memsync("hook", "install", "codex", "--agent", agent, "--repo", w.repo, "--prompt")
	w.wrapHooks(filepath.Join(w.home, ".codex", "hooks.json"))
	w.trustCodexHooks(codex)
	return codex
}

var threadStarted = regexp.MustCompile(`"thread_id"\s*:\s*"([^"]+)"`)

// codexSession runs the first steps (all for 0) of one Codex session with `codex exec` and `codex exec
// resume`: a prompt memory bears on, an unrelated one, a turn whose usage
// passes the auto-compaction limit (codex exec has no /compact), and a
// last prompt.
func codexSession(t *testing.T, w *world, steps int) {
	t.Helper()
	codex := codexSetup(t, w)
	common := []string{"--skip-git-repo-check", "--json"}
	w.api.setPhase("start")
	out := w.run(w.project, "", codex, append([]string{"exec"}, append(common, databasePrompt)...)...)
	m := threadStarted.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("codex exec printed no thread id:\n%s", out)
	}
	thread := m[1]
	if !w.dropping() {
		if got := lastAgentMessage(out); got != databaseAnswer {
			t.Errorf("codex exec --json: the last agent_message is %q, want the answer %q", got, databaseAnswer)
		}
	}
	rest := []struct{ phase, prompt string }{
		{"unrelated", unrelatedPrompt},
		{"compact", "Please go on."},
		{"resume", "Thanks, that is all."},
	}
	if steps == 0 || steps > len(rest) {
		steps = len(rest) + 1
	}
	for _, s := range rest[:steps-1] {
		w.api.setPhase(s.phase)
		w.run(w.project, "", codex, append([]string{"exec", "resume"}, append(common, thread, s.prompt)...)...)
	}
}

// TestCodex runs a Codex session against memsync and checks what the
// model received.
func TestCodex(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	defer w.saveArtifacts("codex")
	codexSession(t, w, 0)
	w.finish("codex")
}

// lastAgentMessage is the text of the last agent_message codex exec
// --json printed.
func lastAgentMessage(out string) string {
	last := ""
	for _, line := range strings.Split(out, "\n") {
		var ev struct {
			Type string `json:"type"`
			Item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "item.completed" && ev.Item.Type == "agent_message" {
			last = ev.Item.Text
		}
	}
	return last
}

// TestCodexExecKeepsAnswer: codex exec prints the answer to the prompt
// as its last message, not the model's reply to the journaling reminder
// (--json is TestCodex's); the reminder reached the model once, with the
// session's context (issue 53).
func TestCodexExecKeepsAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	defer w.saveArtifacts("codex-exec")
	codex := codexSetup(t, w)
	w.api.setPhase("exec")
	out := w.run(w.project, "", codex, "exec", "--skip-git-repo-check", databasePrompt)
	if got := strings.TrimSpace(out); got != databaseAnswer {
		t.Errorf("codex exec printed %q, want the answer %q", got, databaseAnswer)
	}
	w.checkReminders("codex exec", 1, "exec")
}
