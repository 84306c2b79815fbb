package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

// lockedBuffer is a buffer a running command writes while a test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The web view listens beyond loopback only with a token, whichever
// command serves it; an empty token file is no token.
func TestUIRefusesNonLoopbackWithoutToken(t *testing.T) {
	repo := initRepo(t, "alice")
	empty := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"ui every interface", []string{"ui", "--repo", repo, "--addr", "0.0.0.0:0"}, "only with a token"},
		{"ui empty host", []string{"ui", "--repo", repo, "--addr", ":0"}, "only with a token"},
		{"ui empty token file", []string{"ui", "--repo", repo, "--addr", "0.0.0.0:0", "--token-file", empty}, "empty"},
		{"run --ui", []string{"run", "--repo", repo, "--ui", "0.0.0.0:0"}, "only with a token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, c.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d stderr %q; want exit 2 saying %q", r.code, r.stderr, c.want)
			}
		})
	}
}

var servingRE = regexp.MustCompile(`serving (http://[^/\s]+)/`)

// openRE finds the token in the link memsync ui prints.
var openRE = regexp.MustCompile(`memsync ui: open http://[^/\s]+/\?token=([0-9a-f]+)`)

// memsync ui serves the repository's pages until its context ends, reading
// through the graph or the journals and saying which.
func TestUIServesUntilStopped(t *testing.T) {
	repo := initRepo(t, "alice", "bob")
	if r := cli(t, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--scope", "shared", "the billing queue drains nightly"); r.code != 0 {
		t.Fatalf("append: %s", r.stderr)
	}
	if r := cli(t, "sync", "--repo", repo); r.code != 0 {
		t.Fatalf("sync: %s", r.stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
		Getenv: func(string) string { return "" }, Now: time.Now, Getwd: os.Getwd}
	done := make(chan int, 1)
	go func() { done <- Main(ctx, env, []string{"ui", "--repo", repo, "--addr", "127.0.0.1:0"}) }()
	var base string
	deadline := time.Now().Add(30 * time.Second)
	for base == "" {
		if m := servingRE.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("ui exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("ui never said where it serves: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the server's start, not synchronising on time
	}
	var token string
	for deadline := time.Now().Add(30 * time.Second); token == ""; {
		if m := openRE.FindStringSubmatch(stderr.String()); m != nil {
			token = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ui never printed its link with the token: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st, err := os.Stat(filepath.Join(repo, ".memsync", "ui-token")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf(".memsync/ui-token: %v %v, want mode 0600", st, err)
	}
	// Without the token: 401, whatever the page.
	for _, path := range []string{"/", "/agents/bob?as=bob"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "needs its token") {
			t.Errorf("GET %s without the token: %d\n%s", path, resp.StatusCode, body)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/", `data-page="fleet"`},
		{"/search?q=billing+queue", "the billing queue drains nightly"},
		{"/agents/bob?as=bob", `data-viewer="agent:bob"`},
	} {
		req, _ := http.NewRequest("GET", base+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), c.want) || !regexp.MustCompile(`data-source="(graph|journals)"`).Match(body) {
			t.Errorf("GET %s: %d, want %q and a data-source:\n%s", c.path, resp.StatusCode, c.want, body)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("ui exited %d after its context ended: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ui did not stop")
	}
}

// The web view keeps one open graph for its requests while the store is
// the same file, and opens the new one when the store is replaced (a
// rebuild), closing the old once its last request ends.
func TestUIHeldGraphFollowsTheStore(t *testing.T) {
	repo := initRepo(t, "alice")
	if r := cli(t, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--scope", "shared", "kept"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := cli(t, "sync", "--repo", repo); r.code != 0 {
		t.Fatal(r.stderr)
	}
	var cfg Config
	env := &Env{Getenv: func(string) string { return "" }, Now: time.Now, Stderr: io.Discard}
	if err := loadConfig(env, repo, newRepoCmd(env, "ui", "", "").FlagSet, &cfg); err != nil {
		t.Fatal(err)
	}
	h := &heldGraph{cfg: &cfg, repo: repo, lg: zap.NewNop()}
	defer h.close()
	r1, r2 := h.reader(context.Background()), h.reader(context.Background())
	if r1.Offline || r1.From != r2.From {
		t.Fatalf("two requests on the same store: %T %T (offline %v), want one open graph", r1.From, r2.From, r1.Offline)
	}
	// Replace the store's file, as a rebuild does.
	db := filepath.Join(layout(repo).LocalDir(), "graph.db")
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db+".new", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(db+".new", db); err != nil {
		t.Fatal(err)
	}
	r3 := h.reader(context.Background())
	if r3.From == r1.From {
		t.Fatal("the store was replaced, the old graph still served")
	}
	// The old one still answers the requests that hold it.
	if _, err := r1.From.Get(context.Background(), []string{"mem_probe"}); err != nil {
		t.Fatalf("a request's graph closed under it: %v", err)
	}
	r1.Close()
	r2.Close()
	if _, err := r1.From.Get(context.Background(), []string{"mem_probe"}); err == nil {
		t.Error("the replaced graph is still open after its last request")
	}
	r3.Close()
}

// Issue 51 §4 in the web view: while `memsync rebuild` holds the
// repository's lock, the embedded store is half built, so a request reads
// the journals (offline, the reason naming the rebuild), and a request
// that read the graph before the rebuild began is sent to the journals by
// its Check.
func TestUIReadsTheJournalsDuringARebuild(t *testing.T) {
	repo := initRepo(t, "alice")
	if r := cli(t, "append", "--repo", repo, "--agent", "alice", "--kind", "fact", "--scope", "shared", "kept"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := cli(t, "sync", "--repo", repo); r.code != 0 {
		t.Fatal(r.stderr)
	}
	var cfg Config
	env := &Env{Getenv: func(string) string { return "" }, Now: time.Now, Stderr: io.Discard}
	if err := loadConfig(env, repo, newRepoCmd(env, "ui", "", "").FlagSet, &cfg); err != nil {
		t.Fatal(err)
	}
	h := &heldGraph{cfg: &cfg, repo: repo, lg: zap.NewNop()}
	defer h.close()
	before := h.reader(context.Background())
	defer before.Close()
	if before.Offline || before.Check == nil || before.Check() != nil {
		t.Fatalf("no rebuild: offline %v, reason %q, check set %v", before.Offline, before.Reason, before.Check != nil)
	}
	lock, err := memsync.LockRepo(layout(repo), "rebuild", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if err := before.Check(); err == nil || !strings.Contains(err.Error(), "rebuild") {
		t.Errorf("a rebuild began: Check says %v", err)
	}
	during := h.reader(context.Background())
	if !during.Offline || !strings.Contains(during.Reason, "memsync rebuild") {
		t.Errorf("during a rebuild: offline %v, reason %q", during.Offline, during.Reason)
	}
	during.Close()
	lock.Release()
	after := h.reader(context.Background())
	defer after.Close()
	if after.Offline {
		t.Errorf("after the rebuild: offline, %s", after.Reason)
	}
}
