package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/hooks/ from the payloads the hosts send")

// The pinned clients.
const (
	claudePackage = "@anthropic-ai/claude-code@2.1.197"
	codexPackage  = "@openai/codex@0.171.0"
	claudeVersion = "2.1.197"
	codexVersion  = "0.171.0"
)

// agent is the memsync agent every session speaks for.
const agent = "planner"

// repoRoot is the memsync checkout this package sits in.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

// clientsDir is where the pinned clients are installed, reused across runs:
// $MEMSYNC_E2E_CACHE, else $XDG_CACHE_HOME/memsync-e2e, else
// ~/.cache/memsync-e2e.
func clientsDir(t *testing.T) string {
	if d := os.Getenv("MEMSYNC_E2E_CACHE"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no cache directory for the clients: %v (set MEMSYNC_E2E_CACHE)", err)
	}
	return filepath.Join(base, "memsync-e2e")
}

var installOnce struct {
	sync.Once
	bin, skip string
	err       error
}

// installClients installs the pinned clients once per test binary (see
// installClientsIn) and returns their node_modules/.bin directory; an
// unreachable registry skips the test, saying so, and any other failure
// fails it.
func installClients(t *testing.T) string {
	t.Helper()
	installOnce.Do(func() {
		installOnce.bin, installOnce.skip, installOnce.err = installClientsIn(clientsDir(t))
	})
	if installOnce.skip != "" {
		t.Skip("SKIPPED, not passed: " + installOnce.skip)
	}
	if installOnce.err != nil {
		t.Fatal(installOnce.err)
	}
	return installOnce.bin
}

// installClientsIn installs the pinned clients with npm into dir unless
// they are there at those versions, and returns dir's node_modules/.bin;
// or why the test must skip (the registry is unreachable); or the error.
func installClientsIn(dir string) (bin, skip string, err error) {
	bin = filepath.Join(dir, "node_modules", ".bin")
	if installedVersion(filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code")) == claudeVersion &&
		installedVersion(filepath.Join(dir, "node_modules", "@openai", "codex")) == codexVersion {
		return bin, "", nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", "", fmt.Errorf("npm is not installed (Node.js 18 or later installs the clients): %w", err)
	}
	if err := registryReachable(); err != nil {
		return "", "the npm registry is unreachable, so the real Claude Code and Codex cannot be installed: " + err.Error(), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--save-exact", claudePackage, codexPackage)
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		if registryReachable() != nil {
			return "", "the npm registry became unreachable during npm install: " + string(out), nil
		}
		return "", "", fmt.Errorf("npm install %s %s: %v\n%s", claudePackage, codexPackage, err, out)
	}
	for pkg, want := range map[string]string{"@anthropic-ai/claude-code": claudeVersion, "@openai/codex": codexVersion} {
		if got := installedVersion(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))); got != want {
			return "", "", fmt.Errorf("npm installed %s %q, want %s", pkg, got, want)
		}
	}
	return bin, "", nil
}

// The packages whose newest versions the registry serves are tested
// beside the pinned ones.
const (
	claudeLatestPackage = "@anthropic-ai/claude-code"
	codexLatestPackage  = "@openai/codex"
)

// latestClient is one client's latest version, installed once per test
// binary.
type latestClient struct {
	sync.Once
	bin, version, skip string
	err                error
}

var latestClaudeOnce, latestCodexOnce latestClient

// latest installs the newest version of pkg the registry serves, once
// (see installLatestIn), and returns its program name and version; an
// unreachable registry skips the test, saying so.
func (l *latestClient) latest(t *testing.T, pkg, dirPrefix, program string) (bin, version string) {
	t.Helper()
	l.Do(func() {
		l.bin, l.version, l.skip, l.err = installLatestIn(clientsDir(t), pkg, dirPrefix, program)
	})
	if l.skip != "" {
		t.Skip("SKIPPED, not passed: " + l.skip)
	}
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.bin, l.version
}

// latestClaude is the newest Claude Code the registry serves, installed.
func latestClaude(t *testing.T) (claude, version string) {
	t.Helper()
	return latestClaudeOnce.latest(t, claudeLatestPackage, "claude-code-", "claude")
}

// latestCodex is the newest Codex the registry serves, installed.
func latestCodex(t *testing.T) (codex, version string) {
	t.Helper()
	return latestCodexOnce.latest(t, codexLatestPackage, "codex-", "codex")
}

// installLatestIn asks the registry for pkg's latest version (npm view)
// and installs it into dir/PREFIXVERSION unless it is there, removing the
// other PREFIX* directories (a client is some 100 to 400 MB); it returns
// the path of its program and its version, or why the test must skip
// (the registry is unreachable), or the error.
func installLatestIn(dir, pkg, dirPrefix, program string) (bin, version, skip string, err error) {
	if _, err := exec.LookPath("npm"); err != nil {
		return "", "", "", fmt.Errorf("npm is not installed (Node.js 18 or later installs the clients): %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "view", pkg, "version", "--fetch-retries=1", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=2000").Output()
	version = strings.TrimSpace(string(out))
	if err != nil || version == "" {
		if perr := registryReachable(); perr != nil {
			return "", "", "the npm registry is unreachable, so the latest " + pkg + " cannot be resolved: " + perr.Error(), nil
		}
		return "", "", "", fmt.Errorf("npm view %s version: %v: %q", pkg, err, out)
	}
	sub := filepath.Join(dir, dirPrefix+version)
	bin = filepath.Join(sub, "node_modules", ".bin", program)
	installed := filepath.Join(sub, "node_modules", filepath.FromSlash(pkg))
	if installedVersion(installed) == version {
		return bin, version, "", nil
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return "", "", "", err
	}
	old, _ := filepath.Glob(filepath.Join(dir, dirPrefix+"[0-9]*"))
	for _, d := range old {
		if d != sub {
			os.RemoveAll(d)
		}
	}
	ictx, icancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer icancel()
	at := pkg + "@" + version
	cmd := exec.CommandContext(ictx, "npm", "install", "--prefix", sub, "--no-audit", "--no-fund", "--save-exact", at)
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		if registryReachable() != nil {
			return "", "", "the npm registry became unreachable during npm install: " + string(out), nil
		}
		return "", "", "", fmt.Errorf("npm install %s: %v\n%s", at, err, out)
	}
	if got := installedVersion(installed); got != version {
		return "", "", "", fmt.Errorf("npm installed %s %q, want %s", pkg, got, version)
	}
	return bin, version, "", nil
}

// claudeVersions are the Claude Code versions a test runs against: the
// pinned one, and the latest the registry serves when it is another
// (subtests "pinned" and "latest"; latest skips, saying why, when the
// registry cannot be reached).
func claudeVersions(t *testing.T, test func(t *testing.T, w *world)) {
	t.Helper()
	for _, v := range []string{"pinned", "latest"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			claude, version := "", claudeVersion
			if v == "latest" {
				if claude, version = latestClaude(t); version == claudeVersion {
					t.Skipf("the latest Claude Code is the pinned %s: the pinned subtest ran it", version)
				}
			}
			w := newWorld(t, "claude-code")
			if claude != "" {
				w.claude = claude
			}
			w.label = v
			w.t.Logf("Claude Code %s", version)
			test(t, w)
		})
	}
}

// codexVersions are the Codex versions a test runs against, as
// claudeVersions: "pinned", and "latest" when the registry serves
// another.
func codexVersions(t *testing.T, test func(t *testing.T, w *world)) {
	t.Helper()
	for _, v := range []string{"pinned", "latest"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			codex, version := "", codexVersion
			if v == "latest" {
				if codex, version = latestCodex(t); version == codexVersion {
					t.Skipf("the latest Codex is the pinned %s: the pinned subtest ran it", version)
				}
			}
			w := newWorld(t, "codex")
			if codex != "" {
				w.codex = codex
			}
			w.label = v
			w.t.Logf("Codex %s", version)
			test(t, w)
		})
	}
}

// installedVersion is the version in a package's package.json, "" if none.
func installedVersion(pkg string) string {
	data, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	json.Unmarshal(data, &p)
	return p.Version
}

// registryReachable asks npm for the registry's ping endpoint.
func registryReachable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "ping", "--fetch-retries=1", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=2000").CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ping: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

var buildOnce struct {
	sync.Once
	dir string
	err error
}

// memsyncBinaries builds memsync and memsync-core into one directory, or
// is $MEMSYNC_E2E_BIN when set (a directory holding both, e.g. a release
// or another branch's build).
func memsyncBinaries(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("MEMSYNC_E2E_BIN"); dir != "" {
		return dir
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "memsync-e2e-bin-")
		if err != nil {
			buildOnce.err = err
			return
		}
		root := repoRoot(t)
		for _, pkg := range []string{"memsync", "memsync-core"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, pkg), "./cmd/"+pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildOnce.err = fmt.Errorf("go build ./cmd/%s: %v\n%s", pkg, err, out)
				return
			}
		}
		buildOnce.dir = dir
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
	return buildOnce.dir
}

// world is one hermetic machine for a host: its home, the memory
// repository, the project the session works in, and the fake model API.
type world struct {
	t       *testing.T
	host    string // claude-code or codex
	home    string
	repo    string
	project string
	capture string // where the capture wrapper writes payloads
	bin     string // memsync's binaries
	clients string // node_modules/.bin of the pinned clients
	claude  string // the Claude Code the session runs: the pinned one unless a test picks another
	codex   string // the Codex the session runs: the pinned one unless a test picks another
	label   string // which client version: pinned or latest
	api     *modelAPI
	egress  *egressTrap
	env     []string
}

func newWorld(t *testing.T, host string) *world {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the end-to-end client tests run the real hosts")
	}
	clients := installClients(t)
	bin := memsyncBinaries(t)
	root := t.TempDir()
	w := &world{t: t, host: host, home: filepath.Join(root, "home"), repo: filepath.Join(root, "memory"),
		project: filepath.Join(root, "webapp"), capture: filepath.Join(root, "capture"), bin: bin, clients: clients,
		claude: filepath.Join(clients, "claude"), codex: filepath.Join(clients, "codex")}
	for _, d := range []string{w.home, w.project, w.capture, filepath.Join(w.home, ".config"), filepath.Join(w.home, ".cache"),
		filepath.Join(w.home, ".local", "share"), filepath.Join(w.home, ".local", "state"), filepath.Join(w.home, ".codex")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.api = startModelAPI(t)
	w.egress = startEgressTrap(t)
	w.env = hermeticEnv(w.home, bin, w.api.url, w.egress.port)
	// The decision the related prompt is about is another agent's, and
	// the project is not named for it: the session packet (built from
	// the project and the agent's own recent records and open decisions)
	// has no word of it, so it is the prompt packet that must bring it.
	w.memsync("init", "--repo", w.repo, "--agent", agent, "--agent", "coder")
	w.memsync("append", "--repo", w.repo, "--agent", "coder", "--kind", "decision", "--scope", "shared",
		"--why", "cheaper at our size", "Use #postgres for the billing service")
	w.memsync("append", "--repo", w.repo, "--agent", agent, "--kind", "fact", "--scope", "shared", "Deploys happen on Tuesdays")
	w.memsync("append", "--repo", w.repo, "--agent", agent, "--kind", "preference", "Always write the failing test first")
	w.memsync("sync", "--repo", w.repo)
	return w
}

// egressTrap is the proxy every host request off loopback is sent to: it
// refuses each one (403) and notes what it was for, so that nothing leaves
// the machine and the test can say what tried to.
type egressTrap struct {
	port     int
	mu       sync.Mutex
	attempts []string
}

func startEgressTrap(t *testing.T) *egressTrap {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	trap := &egressTrap{port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				trap.mu.Lock()
				trap.attempts = append(trap.attempts, strings.TrimSpace(line))
				trap.mu.Unlock()
				io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return trap
}

// tried is every request a host tried to send off loopback.
func (e *egressTrap) tried() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.attempts)
}

// apiKey is the fake model API's key for Claude Code.
const apiKey = "sk-ant-e2e-not-a-key"

// editJSON rewrites a JSON object file (created when missing) with edit.
func (w *world) editJSON(path string, edit func(map[string]any)) {
	w.t.Helper()
	obj := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &obj); err != nil {
			w.t.Fatalf("%s: %v", path, err)
		}
	}
	edit(obj)
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// hermeticEnv is the environment of every host and memsync command: the
// machine's PATH (for node and git) and nothing else of the caller's, a
// home of its own, no telemetry, updates or other traffic off loopback.
func hermeticEnv(home, bin, apiURL string, deadPort int) []string {
	proxy := fmt.Sprintf("http://127.0.0.1:%d", deadPort)
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"USER=e2e", "LOGNAME=e2e", "SHELL=/bin/sh", "TERM=dumb", "LANG=C.UTF-8", "TZ=UTC",
		"TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"CODEX_HOME=" + filepath.Join(home, ".codex"),
		"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "http_proxy=" + proxy, "https_proxy=" + proxy, "ALL_PROXY=" + proxy,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com",
		// Claude Code.
		"ANTHROPIC_BASE_URL=" + apiURL,
		"ANTHROPIC_API_KEY=" + apiKey,
		"ANTHROPIC_MODEL=claude-sonnet-4-5",
		"ANTHROPIC_SMALL_FAST_MODEL=claude-haiku-4-5",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1",
		"DISABLE_NON_ESSENTIAL_MODEL_CALLS=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1", "CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1", "CLAUDE_CODE_ENABLE_TELEMETRY=0",
		"CLAUDE_CODE_DISABLE_AUTO_MEMORY=1", "CLAUDE_CODE_DISABLE_CLAUDE_MDS=1", "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL=1",
		"DO_NOT_TRACK=1",
		// Codex: the fake provider's key (config.toml names it); no OpenAI key.
		"MEMSYNC_E2E_KEY=e2e-not-a-key",
		"CODEX_DISABLE_UPDATE_CHECK=1",
	}
	return env
}

// run runs a program in the world's environment and returns its stdout;
// a failure fails the test with both streams.
func (w *world) run(dir string, stdin string, name string, args ...string) string {
	w.t.Helper()
	out, errOut, err := w.try(dir, stdin, name, args...)
	if err != nil {
		w.t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func (w *world) try(dir string, stdin string, name string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = w.env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func (w *world) memsync(args ...string) string {
	w.t.Helper()
	return w.run(w.project, "", filepath.Join(w.bin, "memsync"), args...)
}

// captureScript is the wrapper each installed hook command runs in: it
// saves the payload on stdin and the environment the host gave the hook,
// runs the hook (if any) on it, saves and prints its stdout, or drops it
// when DIR/drop-EVENT exists.
const captureScript = `#!/bin/sh
# capture DIR EVENT [HOOK COMMAND...]
dir=$1; ev=$2; shift 2
f="$dir/$(date +%s%N)-$$-$ev"
env > "$f.env"
cat > "$f.in"
[ $# -eq 0 ] && exit 0
"$@" < "$f.in" > "$f.out"
rc=$?
if [ -e "$dir/drop-$ev" ]; then mv "$f.out" "$f.dropped"; else cat "$f.out"; fi
exit $rc
`

// hostEvents are the events whose payloads are captured, per host.
var hostEvents = map[string][]string{
	"claude-code": {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"},
	"codex":       {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"},
}

// wrapHooks rewrites a settings file memsync's hook install wrote: every
// memsync hook command runs inside the capture wrapper, and every event of
// hostEvents that memsync does not hook gets a capture-only hook.
func (w *world) wrapHooks(settings string) {
	w.t.Helper()
	script := filepath.Join(filepath.Dir(w.capture), "capture-hook")
	if err := os.WriteFile(script, []byte(captureScript), 0o755); err != nil {
		w.t.Fatal(err)
	}
	data, err := os.ReadFile(settings)
	if err != nil {
		w.t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		w.t.Fatalf("%s: %v", settings, err)
	}
	hooks, _ := top["hooks"].(map[string]any)
	if hooks == nil {
		w.t.Fatalf("%s has no hooks: %s", settings, data)
	}
	own := " hook " + w.host + " "
	for _, ev := range hostEvents[w.host] {
		prefix := shellQuote(script) + " " + shellQuote(w.capture) + " " + ev
		wrapped := false
		groups, _ := hooks[ev].([]any)
		for _, g := range groups {
			gm, _ := g.(map[string]any)
			hs, _ := gm["hooks"].([]any)
			for _, h := range hs {
				hm, _ := h.(map[string]any)
				if cmd, _ := hm["command"].(string); strings.Contains(cmd, own) {
					hm["command"] = prefix + " " + cmd
					wrapped = true
				}
			}
		}
		if !wrapped {
			hooks[ev] = append(groups, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": prefix, "timeout": 5}}})
		}
	}
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(settings, out, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// dropOutput makes the capture wrapper drop memsync's stdout for event.
func (w *world) dropOutput(event string) {
	if err := os.WriteFile(filepath.Join(w.capture, "drop-"+event), nil, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// dropping is whether the wrapper drops some event's output.
func (w *world) dropping() bool {
	drops, _ := filepath.Glob(filepath.Join(w.capture, "drop-*"))
	return len(drops) > 0
}

// checkReminders fails the test unless the journaling reminder reached
// the model want times in the requests of phases (one session).
func (w *world) checkReminders(name string, want int, phases ...string) {
	w.t.Helper()
	var turns []turn
	for _, t := range mainConversation(w.api.requests()) {
		if slices.Contains(phases, t.Phase) {
			turns = append(turns, t)
		}
	}
	if n := reminders(turns, expectFor(agent)); n != want {
		w.t.Errorf("%s: the journaling reminder reached the model %d times in phases %q, want %d", name, n, phases, want)
	}
}

// hookCall is one hook run the wrapper captured.
type hookCall struct {
	Event   string
	Payload []byte
	Env     []string // the hook's environment, as the host set it
	Output  []byte   // what memsync printed (also when it was dropped)
	Dropped bool
}

// hookCalls is every captured hook run, oldest first.
func (w *world) hookCalls() []hookCall {
	w.t.Helper()
	ins, err := filepath.Glob(filepath.Join(w.capture, "*.in"))
	if err != nil {
		w.t.Fatal(err)
	}
	sort.Strings(ins)
	var calls []hookCall
	for _, in := range ins {
		base := strings.TrimSuffix(in, ".in")
		payload, err := os.ReadFile(in)
		if err != nil {
			w.t.Fatal(err)
		}
		c := hookCall{Event: base[strings.LastIndex(base, "-")+1:], Payload: payload}
		if env, err := os.ReadFile(base + ".env"); err == nil {
			c.Env = strings.Split(strings.TrimRight(string(env), "\n"), "\n")
		}
		if out, err := os.ReadFile(base + ".out"); err == nil {
			c.Output = out
		} else if out, err := os.ReadFile(base + ".dropped"); err == nil {
			c.Output, c.Dropped = out, true
		}
		calls = append(calls, c)
	}
	return calls
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// saveArtifacts writes the request log and the hook calls beside the
// test's output when it fails, for a person to read.
func (w *world) saveArtifacts(name string) {
	dir := os.Getenv("MEMSYNC_E2E_ARTIFACTS")
	if dir == "" && !w.t.Failed() {
		return
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "memsync-e2e-artifacts")
	}
	os.MkdirAll(dir, 0o755)
	reqs, _ := json.MarshalIndent(w.api.requests(), "", "  ")
	os.WriteFile(filepath.Join(dir, name+"-requests.json"), reqs, 0o644)
	var b bytes.Buffer
	for _, c := range w.hookCalls() {
		fmt.Fprintf(&b, "== %s dropped=%v\n%s\n-- env\n%s\n-- out\n%s\n", c.Event, c.Dropped, c.Payload, strings.Join(c.Env, "\n"), c.Output)
	}
	os.WriteFile(filepath.Join(dir, name+"-hooks.txt"), b.Bytes(), 0o644)
	w.t.Logf("requests and hook calls saved in %s/%s-*", dir, name)
}

// finish checks what the model received in the world's session, records
// the requests or the hook payloads when asked to, and fails the test on
// every problem the checker found.
func (w *world) finish(name string) {
	w.t.Helper()
	reqs := w.api.requests()
	if *recordRequests {
		recordedRequests(w.t, name, reqs)
	}
	if *update {
		w.writeHookTestdata()
	}
	if tried := w.egress.tried(); len(tried) > 0 {
		w.t.Errorf("%s tried to reach beyond loopback (refused by the test's proxy): %q", name, tried)
	}
	for _, p := range checkSession(reqs, expectFor(agent)) {
		w.t.Errorf("%s: %s", name, p)
	}
}
