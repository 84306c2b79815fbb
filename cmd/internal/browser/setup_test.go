package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var update = flag.Bool("update", false, "also write one screenshot per page into docs/ui/ (at the repository root)")

// The agents of the seeded repository; the view-as tests look through
// viewer's eyes.
const viewer = "coder"

var agents = []string{"planner", "coder", "critic"}

// injection is the text of the script-injection record.
const injection = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`

// fixture is what every test of the binary shares: the binaries, one
// seeded repository, the `memsync ui` serving it and one Chromium.
type fixture struct {
	root    string            // the memsync checkout
	bin     string            // memsync and memsync-core
	repo    string            // the seeded memory repository
	env     []string          // every memsync and git command's environment
	base    string            // http://127.0.0.1:PORT of memsync ui
	uuids   map[string]string // seeded memory's name → uuid
	browser context.Context   // the chromedp context that holds Chromium
	shots   string            // where screenshots go
	links   sync.Map          // link URL → HTTP status, of links already followed
	tokens  sync.Map          // base URL → the token its server made (.memsync/ui-token)
}

// tokenFor is the token of the server at base, when it made its own
// (started without --token-file); "" otherwise.
func (f *fixture) tokenFor(base string) string {
	t, _ := f.tokens.Load(base)
	s, _ := t.(string)
	return s
}

// authorize sets the token of the server at base on req, when it has one.
func (f *fixture) authorize(req *http.Request, base string) {
	if t := f.tokenFor(base); t != "" {
		req.Header.Set("Authorization", "Bearer "+t)
	}
}

// uuid is the uuid of the seeded memory called name.
func (f *fixture) uuid(t *testing.T, name string) string {
	t.Helper()
	u, ok := f.uuids[name]
	if !ok {
		t.Fatalf("no seeded memory %q", name)
	}
	return u
}

var shared struct {
	once sync.Once
	f    *fixture
	skip string
	err  error

	mu       sync.Mutex
	teardown []func() // run in reverse when the binary's tests are done
}

// atExit runs fn when the test binary's tests are done, before the
// functions registered earlier.
func atExit(fn ...func()) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.teardown = append(shared.teardown, fn...)
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	for i := len(shared.teardown) - 1; i >= 0; i-- {
		shared.teardown[i]()
	}
	os.Exit(code)
}

// setup is the shared fixture, made by the first test that asks: it skips
// the test (saying so) when no Chromium can be found and
// MEMSYNC_REQUIRE_BROWSER is not 1, and fails it when the fixture could not
// be made.
func setup(t *testing.T) *fixture {
	t.Helper()
	shared.once.Do(func() {
		shared.f, shared.skip, shared.err = newFixture()
	})
	if shared.skip != "" {
		t.Skip("SKIPPED, not passed: " + shared.skip)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.f
}

func newFixture() (*fixture, string, error) {
	chromium, skip, err := chromiumOrSkip()
	if skip != "" || err != nil {
		return nil, skip, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", err
	}
	f := &fixture{root: filepath.Clean(filepath.Join(wd, "..", "..", ".."))}
	dir, err := os.MkdirTemp("", "memsync-browser-")
	if err != nil {
		return nil, "", err
	}
	atExit(func() { os.RemoveAll(dir) })
	if f.shots = os.Getenv("MEMSYNC_SCREENSHOTS"); f.shots == "" {
		// Not under dir: the screenshots outlive the test binary so a
		// reviewer can look at them.
		if f.shots, err = os.MkdirTemp("", "memsync-ui-screenshots-"); err != nil {
			return nil, "", err
		}
	}
	if err := os.MkdirAll(f.shots, 0o755); err != nil {
		return nil, "", err
	}
	if f.bin, err = buildBinaries(f.root, filepath.Join(dir, "bin")); err != nil {
		return nil, "", err
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, "", err
	}
	f.env = []string{
		"PATH=" + f.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "USER=browser-test", "LANG=C.UTF-8", "TZ=UTC", "TMPDIR=" + os.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=browser-test", "GIT_AUTHOR_EMAIL=browser-test@example.com",
		"GIT_COMMITTER_NAME=browser-test", "GIT_COMMITTER_EMAIL=browser-test@example.com",
	}
	f.repo = filepath.Join(dir, "memory")
	if f.uuids, err = f.seed(time.Now().UTC()); err != nil {
		return nil, "", err
	}
	if err := f.startDaemon(); err != nil {
		return nil, "", err
	}
	if err := f.startUI(); err != nil {
		return nil, "", err
	}
	if err := f.startChromium(chromium, filepath.Join(dir, "chromium")); err != nil {
		return nil, "", err
	}
	return f, "", nil
}

// chromiumOrSkip is the Chromium to drive; or, when none is found, why the
// tests skip, or the error that fails them under MEMSYNC_REQUIRE_BROWSER=1.
func chromiumOrSkip() (path, skip string, err error) {
	path, err = findChromium()
	switch {
	case err == nil:
		return path, "", nil
	case os.Getenv("MEMSYNC_REQUIRE_BROWSER") == "1":
		return "", "", fmt.Errorf("MEMSYNC_REQUIRE_BROWSER=1: %w", err)
	default:
		return "", err.Error(), nil
	}
}

// findChromium is $MEMSYNC_CHROMIUM, else the first Chromium or Chrome on
// PATH.
func findChromium() (string, error) {
	if p := os.Getenv("MEMSYNC_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("MEMSYNC_CHROMIUM=%s: %w", p, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found to drive the web view (apt-get install chromium, or set MEMSYNC_CHROMIUM to a Chromium or Chrome binary)")
}

// buildBinaries builds memsync and memsync-core from the checkout at root
// into dir.
func buildBinaries(root, dir string) (string, error) {
	for _, pkg := range []string{"memsync", "memsync-core"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, pkg), "./cmd/"+pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build ./cmd/%s: %v\n%s", pkg, err, out)
		}
	}
	return dir, nil
}

// run runs a program in the fixture's environment and returns its stdout.
func (f *fixture) run(dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, f.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// memsync runs the memsync binary on the seeded repository.
func (f *fixture) memsync(args ...string) (string, error) {
	return f.run(filepath.Dir(f.repo), filepath.Join(f.bin, "memsync"), args...)
}

// seedRecord is one memory the seed appends.
type seedRecord struct {
	name  string
	agent string
	age   time.Duration // how long before the seed's now it was written
	text  string
	args  []string // append's flags besides --agent, --ts, --json; @name is a seeded uuid
}

// seedRecords is the seeded repository, oldest first where one names another.
var seedRecords = []seedRecord{
	{"core", "planner", 40 * day, "Every billing change ships with a failing test first",
		[]string{"--kind", "procedure", "--scope", "shared", "--tier", "core", "--max-age", "14d"}},
	// 16 days old with max_age 14d: past it, importance decayed to 0.4,
	// so in review (below 0.4 it would be archived).
	{"stale", "planner", 16 * day, "The staging cluster is called blue-7",
		[]string{"--kind", "fact", "--scope", "shared", "--max-age", "14d"}},
	{"old", "planner", 20 * day, "Billing deploys happen on Tuesdays", []string{"--kind", "fact", "--scope", "shared"}},
	{"decision-open", "planner", 10 * day, "Use #postgres for the billing service",
		[]string{"--kind", "decision", "--scope", "shared", "--why", "cheaper at our size"}},
	{"decision-done", "planner", 9 * day, "Ship the invoice exporter behind a feature flag",
		[]string{"--kind", "decision", "--scope", "shared", "--why", "the finance team tests it first"}},
	{"planner-private", "planner", 8 * day, "Planner's own note: the billing roadmap draft lives in scratch/roadmap-q3.md, after the #postgres upgrade",
		[]string{"--kind", "observation", "--scope", "private", "--link", "@decision-open"}},
	{"link", "coder", 7 * day, "Billing migrations run with goose against #postgres",
		[]string{"--kind", "procedure", "--scope", "shared", "--link", "@decision-open"}},
	{"fact", "coder", 6 * day, "The billing service listens on port 8443", []string{"--kind", "fact", "--scope", "shared"}},
	{"support", "critic", 5 * day, "The deploy manifest confirms billing on port 8443",
		[]string{"--kind", "observation", "--scope", "shared", "--supports", "@fact"}},
	{"conflict", "critic", 4 * day, "The billing service listens on port 9443 since the proxy change",
		[]string{"--kind", "observation", "--scope", "shared", "--conflicts-with", "@fact"}},
	{"coder-private", "coder", 3 * day, "Coder's own note: billing staging runs with DEBUG=1 on my branch",
		[]string{"--kind", "observation", "--scope", "private"}},
	{"critic-private", "critic", 3 * day, "Critic's own note: the billing review checklist still lacks load tests",
		[]string{"--kind", "observation", "--scope", "private", "--link", "@fact"}},
	{"promote-me", "coder", 3 * day, "Coder's tip: run the billing tests with -count=1 to skip the test cache",
		[]string{"--kind", "procedure", "--scope", "private"}},
	{"outcome", "coder", 2 * day, "The invoice exporter shipped behind its flag without incident",
		[]string{"--result", "success", "--scope", "shared", "--link", "@decision-done"}},
	{"flag-me", "coder", 2 * day, "The flaky cache test is caused by clock skew on the runners",
		[]string{"--kind", "fact", "--scope", "shared"}},
	{"new", "planner", 1 * day, "Billing deploys happen on Wednesdays",
		[]string{"--kind", "fact", "--scope", "shared", "--supersedes", "@old"}},
	{"inject", "critic", 1 * day, injection, []string{"--kind", "observation", "--scope", "shared"}},
}

const day = 24 * time.Hour

// privates are the seeded private memories and a phrase only each one's
// text holds.
var privates = []struct{ name, agent, phrase string }{
	{"planner-private", "planner", "roadmap-q3"},
	{"coder-private", "coder", "DEBUG=1"},
	{"critic-private", "critic", "lacks load tests"},
}

// seed makes the memory repository with the real commands: init, one
// append per seedRecord, a commit of the journals (so each memory has a
// commit), then sync into the embedded store.
func (f *fixture) seed(now time.Time) (map[string]string, error) {
	args := []string{"init", "--repo", f.repo}
	for _, a := range agents {
		args = append(args, "--agent", a)
	}
	if _, err := f.memsync(args...); err != nil {
		return nil, err
	}
	uuids := map[string]string{}
	for _, r := range seedRecords {
		args := []string{"append", "--repo", f.repo, "--agent", r.agent, "--json",
			"--ts", now.Add(-r.age).Format(time.RFC3339)}
		for _, a := range r.args {
			if strings.HasPrefix(a, "@") {
				a = uuids[a[1:]]
			}
			args = append(args, a)
		}
		out, err := f.memsync(append(args, r.text)...)
		if err != nil {
			return nil, err
		}
		var res struct{ UUID string }
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.UUID == "" {
			return nil, fmt.Errorf("append %s printed %q: %v", r.name, out, err)
		}
		uuids[r.name] = res.UUID
	}
	if _, err := f.run(f.repo, "git", "add", "-A"); err != nil {
		return nil, err
	}
	if _, err := f.run(f.repo, "git", "commit", "-q", "-m", "seed the browser tests' memory"); err != nil {
		return nil, err
	}
	if _, err := f.memsync("sync", "--repo", f.repo); err != nil {
		return nil, err
	}
	return uuids, nil
}

// daemon is a long-running memsync process of the fixture.
type daemon struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan error
}

// start starts memsync with args in the repository; teardown stops it.
func (f *fixture) start(args ...string) (*daemon, error) {
	d := &daemon{cmd: exec.Command(filepath.Join(f.bin, "memsync"), args...), out: &syncBuffer{}, exited: make(chan error, 1)}
	d.cmd.Dir, d.cmd.Env = filepath.Dir(f.repo), f.env
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("memsync %s: %w", strings.Join(args, " "), err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	atExit(d.stop)
	return d, nil
}

// stop interrupts the process and waits for it to exit (killing it after
// ten seconds); stopping a stopped process does nothing.
func (d *daemon) stop() {
	d.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-d.exited:
		d.exited <- err
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
	}
}

// startDaemon starts `memsync run` on the repository, as it runs beside
// `memsync ui` (which journals a flag and leaves its projection to the
// daemon), without its git commits and compaction so the repository stays
// as seeded.
func (f *fixture) startDaemon() error {
	_, err := f.start("run", "--repo", f.repo, "--no-commit", "--no-compact")
	return err
}

// startUI starts `memsync ui` on the seeded repository.
func (f *fixture) startUI() error {
	base, _, err := f.serve(f.repo)
	f.base = base
	return err
}

// serve starts `memsync ui` on repo (with more flags) on a free loopback
// port and waits until it answers; a port taken between choosing and
// binding is tried again.
func (f *fixture) serve(repo string, flags ...string) (string, *daemon, error) {
	return f.serveWith(func(addr string) []string {
		return append([]string{"ui", "--repo", repo, "--addr", addr}, flags...)
	})
}

// serveWith starts memsync with the arguments args gives for a free
// loopback address, and waits until it answers HTTP there.
func (f *fixture) serveWith(args func(addr string) []string) (string, *daemon, error) {
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		addr := ln.Addr().String()
		ln.Close()
		tok, err := fixtureToken(args(addr))
		if err != nil {
			return "", nil, err
		}
		d, err := f.start(args(addr)...)
		if err != nil {
			return "", nil, err
		}
		base := "http://" + addr
		if err := awaitServer(base, d.exited); err != nil {
			d.stop()
			if strings.Contains(d.out.String(), "address already in use") && attempt < 2 {
				continue // another process took the port first
			}
			return "", nil, fmt.Errorf("memsync %s: %w\noutput:\n%s", strings.Join(args(addr), " "), err, d.out.String())
		}
		if tok != "" {
			f.tokens.Store(base, tok)
		}
		return base, d, nil
	}
}

// theFixtureToken is the token of every server the tests start without
// --token-file: one value, because a browser keeps one cookie per host
// whatever the port, and the tests' servers share 127.0.0.1.
const theFixtureToken = "browser-fixture-token-7d41c0e9"

// fixtureToken puts theFixtureToken in the .memsync/ui-token of the
// repository that argv serves (the view answers nothing without a token,
// and uses the one it finds there) unless argv gives --token-file, which
// is then the test's own; it returns the token tabs are to send.
func fixtureToken(argv []string) (string, error) {
	i := slices.Index(argv, "--repo")
	if slices.Contains(argv, "--token-file") || i < 0 || i+1 >= len(argv) {
		return "", nil
	}
	dir := filepath.Join(argv[i+1], ".memsync")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "ui-token"), []byte(theFixtureToken+"\n"), 0o600); err != nil {
		return "", err
	}
	return theFixtureToken, nil
}

// awaitServer polls base until it answers an HTTP request, the process
// exits or a minute passes.
func awaitServer(base string, exited chan error) error {
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err // for stop
			return fmt.Errorf("exited before serving: %v", err)
		default:
		}
		if resp, err := client.Get(base + "/"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("did not answer within a minute")
}

// syncBuffer is a bytes.Buffer safe for a process's two streams.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startChromium starts the one headless Chromium of the test binary, with a
// 1280 px wide window and a profile of its own. The sandbox is off: the
// browser runs as root in CI containers, where Chromium's sandbox cannot
// start, and it only ever opens the test's own loopback server.
func (f *fixture) startChromium(path, profile string) error {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	atExit(cancelAlloc, cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil {
		return fmt.Errorf("start Chromium %s: %w", path, err)
	}
	f.browser = browserCtx
	return nil
}
