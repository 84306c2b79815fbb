package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/cmd/internal/hooks"
	"github.com/memsync/memsync/memsync/packet"
)

// hookRun is one run of the built binary as a host runs a hook.
type hookRun struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func runHookBinary(t *testing.T, stdin []byte, env []string, args ...string) hookRun {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_AGENT=", "MEMSYNC_GRAPH=", "MEMSYNC_NEO4J_URI=",
		"CLAUDE_CODE_ENTRYPOINT="), env...) // tests run from inside Claude Code are not claude -p sessions
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	r := hookRun{stdout: out.String(), stderr: errOut.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// hookRepo is a repository where planner has a core preference, an open
// task, a private decision, and critic a private secret and a private core
// preference in task t-9 and session s-1; projected once.
func hookRepo(t *testing.T) string {
	t.Helper()
	return hookRepoOn(t, nil)
}

// hookRepoOn is hookRepo projected into the graph env names.
func hookRepoOn(t *testing.T, env []string) string {
	t.Helper()
	repo := newRepo(t, "planner", "critic")
	for _, args := range [][]string{
		{"--agent", "planner", "--kind", "preference", "--tier", "core", "Always write the failing test first"},
		{"--agent", "planner", "--kind", "task", "Follow up on the #billing migration with @Mira"},
		{"--agent", "planner", "--kind", "decision", "--why", "cheaper at our size", "Use #postgres for the billing service database"},
		{"--agent", "planner", "--kind", "observation", "--scope", "shared", "Deploys happen on Tuesdays"},
		{"--agent", "critic", "--kind", "fact", "critic-private: the billing service database password rotates monthly"},
		{"--agent", "critic", "--kind", "preference", "--tier", "core", "--task", "t-9", "--session", "s-1",
			"critic-private: always deploy the billing service straight to production"},
	} {
		if out, err := exec.Command(memsyncBinary(t), append([]string{"append", "--repo", repo, "--no-fsync"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("append: %v\n%s", err, out)
		}
	}
	sync := exec.Command(memsyncBinary(t), "sync", "--once", "--repo", repo)
	sync.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=", "MEMSYNC_NEO4J_URI="), env...)
	if out, err := sync.CombinedOutput(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	return repo
}

// uuidOf is the uuid of agent's journal record whose text holds text.
func uuidOf(t *testing.T, repo, agent, text string) string {
	t.Helper()
	for _, line := range strings.Split(journalsOf(t, repo, agent), "\n") {
		var r struct {
			UUID string `json:"uuid"`
			Text string `json:"text"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && strings.Contains(r.Text, text) {
			return r.UUID
		}
	}
	t.Fatalf("no record of %s holds %q", agent, text)
	return ""
}

// TestHookRecordedPayloads feeds every recorded payload (testdata/hooks,
// captured from the real hosts) to the built binary, each as the first
// event of its session, and checks the answer by the contract: the
// envelope, its content, privacy, the reminder as Stop's block-with-reason,
// no systemMessage, and the session boundary recorded. The event is the
// payload's own hook_event_name, whatever the file is called.
func TestHookRecordedPayloads(t *testing.T) {
	repo := hookRepo(t)
	l := layout(repo)
	sessions := hooks.SessionsFile(l, "planner")
	corePref, decision := uuidOf(t, repo, "planner", "Always write the failing test first"), uuidOf(t, repo, "planner", "Use #postgres")
	for _, host := range hooks.Hosts() {
		files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "hooks", host, "*.json"))
		if err != nil || len(files) < 4 {
			t.Fatalf("%s: recorded payloads: %v %v", host, files, err)
		}
		for _, file := range files {
			t.Run(host+"/"+strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
				payload, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				in, err := hooks.ReadInput(t.Context(), bytes.NewReader(payload))
				if err != nil || !slices.Contains(hooks.Events(), in.HookEventName) || in.SessionID == "" {
					t.Fatalf("payload %s: %v %+v", file, err, in)
				}
				event := in.HookEventName
				// Each payload is the first event of its session.
				os.RemoveAll(hooks.StateDir(l, "planner"))
				os.Remove(sessions)
				r := runHookBinary(t, payload, nil, "hook", host, event, "--repo", repo, "--agent", "planner")
				if r.code != 0 || r.took >= time.Second {
					t.Fatalf("exit %d after %v; stderr %s", r.code, r.took, r.stderr)
				}
				if strings.Contains(r.stdout, "critic-private") {
					t.Fatalf("planner's hook shows critic's private memory: %s", r.stdout)
				}
				if strings.Contains(r.stdout, "systemMessage") {
					t.Fatalf("a systemMessage (the user sees it, the model does not): %s", r.stdout)
				}
				var out struct {
					Decision           string        `json:"decision"`
					Reason             string        `json:"reason"`
					HookSpecificOutput *hookSpecific `json:"hookSpecificOutput"`
				}
				isJSON := r.stdout != "" && json.Unmarshal([]byte(r.stdout), &out) == nil && strings.Count(r.stdout, "\n") == 1
				switch event {
				case "SessionStart", "UserPromptSubmit":
					if event == "UserPromptSubmit" && !strings.Contains(in.Prompt, "billing") {
						break // a prompt the store may not bear on: nothing is a right answer
					}
					if !isJSON || out.HookSpecificOutput == nil || out.HookSpecificOutput.HookEventName != event || out.Decision != "" {
						t.Fatalf("not the hookSpecificOutput envelope: %q", r.stdout)
					}
					ctx := out.HookSpecificOutput.AdditionalContext
					if n := utf8.RuneCountInString(ctx); n == 0 || n > hooks.ContextBudget(host) {
						t.Fatalf("additionalContext of %d characters (%s's budget %d)", n, host, hooks.ContextBudget(host))
					}
					// The prompt's executor packet holds the decision it
					// asks about; the session's planner packet holds the
					// core preference (by its uuid), is scoped to the
					// session and looks for what the session is about:
					// the project (the cwd's name) and the agent's open
					// follow-up and decision, never its own template.
					want := []string{"# Working memory: executor for planner", "Use #postgres for the billing service",
						"[" + decision + " decision]", "Scope: session " + in.SessionID}
					if event == "SessionStart" {
						want = []string{"# Working memory: planner for planner", "Goal: " + filepath.Base(in.Cwd) + " · Follow up on the #billing migration",
							"Scope: session " + in.SessionID, "## Core", "Always write the failing test first [" + corePref + " preference]",
							"#billing migration", "[" + decision + " decision]", "--agent planner --session " + in.SessionID}
						if strings.Contains(ctx, "start of session") || strings.Count(ctx, "#billing migration") != 2 {
							t.Errorf("the goal is the template, or the follow-up is not shown once (the goal, then its item):\n%s", ctx)
						}
					}
					if strings.Count(ctx, "Always write the failing test first") > 1 {
						t.Errorf("the core preference shows twice:\n%s", ctx)
					}
					for _, w := range want {
						if !strings.Contains(ctx, w) {
							t.Errorf("additionalContext lacks %q:\n%s", w, ctx)
						}
					}
				case "Stop":
					if in.StopHookActive {
						if r.stdout != "" {
							t.Fatalf("stop_hook_active, yet: %q", r.stdout)
						}
						break
					}
					// Claude Code: the Stop's additionalContext (no
					// "blocking error"); Codex: block-with-reason.
					reminder := out.Reason
					if host == "claude-code" {
						reminder = ""
						if out.HookSpecificOutput != nil && out.Decision == "" {
							reminder = out.HookSpecificOutput.AdditionalContext
						}
					} else if out.Decision != "block" {
						reminder = ""
					}
					if !isJSON || !strings.Contains(reminder, "memsync append --agent planner --session "+cmdline.ShellQuote(in.SessionID)) {
						t.Fatalf("no journaling reminder in %s's Stop answer: %q", host, r.stdout)
					}
				case "PreCompact":
					if want := map[string]string{"claude-code": hooks.CompactSummaryNote + "\n", "codex": ""}[host]; r.stdout != want {
						t.Fatalf("PreCompact printed %q, want %q", r.stdout, want)
					}
				case "SessionEnd":
					if r.stdout != "" {
						t.Fatalf("SessionEnd printed %q", r.stdout)
					}
				}
				added, _ := os.ReadFile(sessions)
				if event == "UserPromptSubmit" || event == "Stop" && in.StopHookActive {
					if len(added) != 0 {
						t.Fatalf("%s recorded a session boundary: %s", event, added)
					}
					return
				}
				var ev hooks.SessionEvent
				if err := json.Unmarshal(added, &ev); err != nil || ev.Event != event || ev.Session != in.SessionID || ev.Host != host {
					t.Fatalf("session boundary %q: %v", added, err)
				}
			})
		}
	}
}

// TestHookFailsOpen: whatever goes wrong, the hook exits 0 within a
// second, prints nothing on stdout, and says why on stderr.
func TestHookFailsOpen(t *testing.T) {
	repo := hookRepo(t)
	start, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", "claude-code", "SessionStart.json"))
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", "claude-code", "UserPromptSubmit.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		stdin  []byte
		env    []string
		args   []string
		stderr string
	}{
		{"no repository", start, nil, []string{"claude-code", "SessionStart", "--agent", "planner", "--repo", filepath.Join(t.TempDir(), "none")}, "does not exist"},
		{"not a memory repository", start, nil, []string{"claude-code", "SessionStart", "--agent", "planner", "--repo", t.TempDir()}, "not a memory repository"},
		{"malformed JSON", []byte(`{"session_id": "x", `), nil, []string{"claude-code", "SessionStart", "--agent", "planner", "--repo", repo}, "not the host's hook JSON"},
		{"not JSON at all", []byte("hello\n"), nil, []string{"codex", "SessionStart", "--agent", "planner", "--repo", repo}, "not the host's hook JSON"},
		{"unknown event", start, nil, []string{"claude-code", "PreToolUse", "--agent", "planner", "--repo", repo}, "not one memsync answers"},
		{"unknown host", start, nil, []string{"cursor", "SessionStart", "--agent", "planner", "--repo", repo}, "unknown host"},
		{"no event", start, nil, []string{"claude-code", "--agent", "planner", "--repo", repo}, "want HOST EVENT"},
		{"event differs from stdin", start, nil, []string{"claude-code", "PreCompact", "--agent", "planner", "--repo", repo}, "not PreCompact"},
		{"no agent", start, nil, []string{"claude-code", "SessionStart", "--repo", repo}, "no agent"},
		{"unknown agent", start, nil, []string{"claude-code", "SessionStart", "--agent", "nobody", "--repo", repo}, "with agent nobody"},
		{"bad flag", start, nil, []string{"claude-code", "SessionStart", "--frob", "--repo", repo}, "frob"},
		{"bad configuration", start, []string{"MEMSYNC_GRAPH=bogus"}, []string{"claude-code", "SessionStart", "--agent", "planner", "--repo", repo}, "graph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runHookBinary(t, tc.stdin, tc.env, append([]string{"hook"}, tc.args...)...)
			if r.code != 0 || r.took >= time.Second || r.stdout != "" {
				t.Fatalf("exit %d after %v, stdout %q (want 0, under 1s, empty)", r.code, r.took, r.stdout)
			}
			if !strings.Contains(r.stderr, tc.stderr) || !strings.HasPrefix(r.stderr, "memsync hook") {
				t.Fatalf("stderr %q does not say %q", r.stderr, tc.stderr)
			}
		})
	}

	// The graph down: a prompt is answered from the journals.
	r := runHookBinary(t, prompt, []string{"MEMSYNC_NEO4J_URI=bolt://127.0.0.1:1"}, "hook", "claude-code", "UserPromptSubmit", "--agent", "planner", "--repo", repo)
	if r.code != 0 || r.took >= time.Second || !strings.Contains(r.stdout, "Use #postgres") {
		t.Fatalf("graph down: exit %d after %v stdout %q stderr %q", r.code, r.took, r.stdout, r.stderr)
	}

	// The graph down: a session starts with a packet from the journals.
	r = runHookBinary(t, start, []string{"MEMSYNC_NEO4J_URI=bolt://127.0.0.1:1"}, "hook", "claude-code", "SessionStart", "--agent", "planner", "--repo", repo)
	if r.code != 0 || r.took >= time.Second || !strings.Contains(r.stdout, "(offline: from the journals)") ||
		!strings.Contains(r.stdout, "Always write the failing test first") || !strings.Contains(r.stdout, "#billing migration") ||
		strings.Contains(r.stdout, "critic-private") || !strings.Contains(r.stderr, "answering offline") {
		t.Fatalf("graph down: exit %d after %v stdout %q stderr %q", r.code, r.took, r.stdout, r.stderr)
	}

	// A host that never closes stdin: the hook gives up in time.
	cmd := exec.Command(memsyncBinary(t), "hook", "claude-code", "SessionStart", "--agent", "planner", "--repo", repo)
	cmd.Env = append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_AGENT=")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	cmd.Stdin = pr
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	began := time.Now()
	err = cmd.Run()
	pr.Close()
	if took := time.Since(began); err != nil || took >= time.Second || out.Len() != 0 || !strings.Contains(errOut.String(), "gave up") {
		t.Fatalf("stdin held open: %v after %v, stdout %q stderr %q", err, took, out.String(), errOut.String())
	}
}

// TestHookInstall: installing twice leaves one memsync entry per event,
// keeps every foreign entry and setting, backs the file up once, and
// --dry-run writes nothing.
func TestHookInstall(t *testing.T) {
	foreign := `{
  "model": "opus",
  "permissions": {"allow": ["Bash(git status)"]},
  "hooks": {
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard"}]}]
  },
  "zeta": 1
}
`
	for _, tc := range []struct {
		host, file string
		args       []string
		events     []string
	}{
		{"claude-code", ".claude/settings.json", []string{"--user"}, []string{"SessionStart", "PreCompact", "Stop", "SessionEnd"}},
		{"claude-code", "proj/.claude/settings.json", []string{"--project", "proj", "--prompt"}, []string{"SessionStart", "PreCompact", "Stop", "SessionEnd", "UserPromptSubmit"}},
		{"codex", ".codex/hooks.json", nil, []string{"SessionStart", "PreCompact", "Stop", "SessionEnd"}},
		{"codex", "proj/.codex/hooks.json", []string{"--project", "proj", "--prompt"}, []string{"SessionStart", "PreCompact", "Stop", "SessionEnd", "UserPromptSubmit"}},
	} {
		t.Run(tc.host+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, tc.file)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(foreign), 0o600); err != nil {
				t.Fatal(err)
			}
			install := func(extra ...string) hookRun {
				args := append([]string{"hook", "install", tc.host, "--agent", "planner"}, tc.args...)
				for i, a := range args {
					if a == "proj" {
						args[i] = filepath.Join(home, "proj")
					}
				}
				r := runHookBinary(t, nil, []string{"HOME=" + home, "CODEX_HOME="}, append(args, extra...)...)
				if r.code != 0 {
					t.Fatalf("install: exit %d: %s", r.code, r.stderr)
				}
				return r
			}
			dry := install("--dry-run")
			if got, _ := os.ReadFile(path); string(got) != foreign {
				t.Fatal("--dry-run wrote the file")
			}
			inst := install()
			// Codex skips hooks nobody trusted: install says how to trust
			// them, and never sends the user to the old codex_hooks flag.
			if strings.Contains(inst.stdout, "codex_hooks") || (tc.host == "codex") != strings.Contains(inst.stdout, "/hooks") {
				t.Fatalf("install said:\n%s", inst.stdout)
			}
			first, _ := os.ReadFile(path)
			if dry.stdout != string(first) {
				t.Fatalf("--dry-run printed\n%s\nbut install wrote\n%s", dry.stdout, first)
			}
			install()
			second, _ := os.ReadFile(path)
			if !bytes.Equal(first, second) {
				t.Fatalf("installing twice changed the file:\n%s\n---\n%s", first, second)
			}
			backups, _ := filepath.Glob(path + ".memsync-backup-*")
			if len(backups) != 1 {
				t.Fatalf("backups %v, want one", backups)
			}
			if b, _ := os.ReadFile(backups[0]); string(b) != foreign {
				t.Fatal("the backup is not the original")
			}
			var s struct {
				Model       string                       `json:"model"`
				Permissions map[string][]string          `json:"permissions"`
				Zeta        int                          `json:"zeta"`
				Hooks       map[string][]json.RawMessage `json:"hooks"`
			}
			if err := json.Unmarshal(second, &s); err != nil {
				t.Fatal(err)
			}
			if s.Model != "opus" || s.Zeta != 1 || len(s.Permissions["allow"]) != 1 {
				t.Fatalf("other settings lost:\n%s", second)
			}
			text := string(second)
			for _, f := range []string{`"echo hello"`, `"/usr/local/bin/guard"`, `"matcher": "startup"`} {
				if strings.Count(text, f) != 1 {
					t.Fatalf("foreign entry %s not kept once:\n%s", f, text)
				}
			}
			if strings.Index(text, `"model"`) > strings.Index(text, `"zeta"`) {
				t.Fatalf("keys reordered:\n%s", text)
			}
			for _, ev := range tc.events {
				if n := strings.Count(text, " hook "+tc.host+" "+ev+" --agent planner"); n != 1 {
					t.Fatalf("%s: %d memsync entries, want 1:\n%s", ev, n, text)
				}
			}
			if n := strings.Count(text, " hook "+tc.host+" "); n != len(tc.events) {
				t.Fatalf("%d memsync entries, want %d:\n%s", n, len(tc.events), text)
			}
			// SessionStart's group leaves resume out (its transcript holds
			// the context); no other memsync group has a matcher.
			var ss []struct {
				Matcher *string `json:"matcher"`
				Hooks   []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			}
			raw, _ := json.Marshal(s.Hooks["SessionStart"])
			if err := json.Unmarshal(raw, &ss); err != nil {
				t.Fatal(err)
			}
			last := ss[len(ss)-1]
			if last.Matcher == nil || *last.Matcher != "startup|clear|compact" || !strings.Contains(last.Hooks[0].Command, " hook "+tc.host+" SessionStart") {
				t.Fatalf("memsync's SessionStart group: %+v", last)
			}
			if strings.Count(text, `"matcher": "startup|clear|compact"`) != 1 {
				t.Fatalf("want exactly one memsync matcher:\n%s", text)
			}
		})
	}
}

// TestHookSessionStartWholeCoreTier: the session's packet carries the
// first of the core tier (packet.CapCore; facts, which a planner packet
// reads nowhere else); the rest follows it, and no core memory shows twice.
func TestHookSessionStartWholeCoreTier(t *testing.T) {
	repo := newRepo(t, "planner")
	const n = 8
	for i := range n {
		args := []string{"append", "--repo", repo, "--no-fsync", "--agent", "planner", "--kind", "fact", "--tier", "core",
			fmt.Sprintf("core rule number %d", i)}
		if out, err := exec.Command(memsyncBinary(t), args...).CombinedOutput(); err != nil {
			t.Fatalf("append: %v\n%s", err, out)
		}
	}
	sync := exec.Command(memsyncBinary(t), "sync", "--once", "--repo", repo)
	sync.Env = append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH=", "MEMSYNC_NEO4J_URI=") // the embedded graph, as runHookBinary
	if out, err := sync.CombinedOutput(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	start, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", "claude-code", "SessionStart.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := runHookBinary(t, start, nil, "hook", "claude-code", "SessionStart", "--agent", "planner", "--repo", repo)
	var env struct {
		HookSpecificOutput hookSpecific `json:"hookSpecificOutput"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &env) != nil {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	ctx := env.HookSpecificOutput.AdditionalContext
	for i := range n {
		if c := strings.Count(ctx, fmt.Sprintf("core rule number %d", i)); c != 1 {
			t.Errorf("core rule %d shows %d times", i, c)
		}
	}
	packetPart, rest, ok := strings.Cut(ctx, "## More core")
	if !ok || !strings.Contains(packetPart, "# Working memory: planner for planner") || strings.Count(rest, "core rule number") != n-packet.CapCore {
		t.Fatalf("want %d core memories in the packet and the rest after it:\n%s", packet.CapCore, ctx)
	}
}

// TestHookStopRemindsOnceUnderConcurrentStops is issue 51 §5: many Stop
// events of one session at once give the journaling reminder once; the
// session's state is loaded, changed and saved under its lock.
func TestHookStopRemindsOnceUnderConcurrentStops(t *testing.T) {
	repo := hookRepo(t)
	payload := `{"session_id":"s-concurrent","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"Stop","stop_hook_active":false}`
	const n = 16
	var wg sync.WaitGroup
	outs := make([]result, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			outs[i] = invocation{stdin: payload, now: time.Now()}.run(t, "hook", "claude-code", "Stop", "--repo", repo, "--agent", "planner")
		}()
	}
	close(start)
	wg.Wait()
	reminded := 0
	for _, r := range outs {
		if r.code != 0 {
			t.Fatalf("hook: exit %d: %s", r.code, r.stderr)
		}
		if strings.Contains(r.stdout, "memsync reminder") { // as additionalContext (interactive) or block-with-reason
			reminded++
		}
	}
	if reminded != 1 {
		t.Fatalf("%d of %d concurrent Stop events reminded, want 1", reminded, n)
	}
}
