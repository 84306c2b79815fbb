package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/net/netutil"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/webui"
)

const uiDescription = `Serve the web view of the memory on ADDR (default 127.0.0.1:9470): the
fleet (/), an agent (/agents/A), search with explain's factors
(/search?q=...), a memory with its edges, history and flag buttons
(/memory/UUID), its two-hop graph (/graph/UUID, /graph/entity/NAME) and the
packet each role would get (/packet?role=...&goal=...). Without ?as= a page
is the operator's view (every agent, each memory labelled with its group);
with ?as=A it is exactly what agent A may see. Reads go through the graph,
else the journals, and every page says which. A flag is journaled as
memsync flag writes it; the daemon (memsync run) projects it. memsync run
--ui ADDR serves the same view from the daemon.

Every request needs the view's token: --token-file F (its first line),
else $MEMSYNC_UI_TOKEN (never on the command line), else the one memsync
keeps in .memsync/ui-token (made at the first start, readable by its owner
only). memsync ui prints the link to open, http://ADDR/?token=T; the browser
keeps the token as a cookie, or a client sends Authorization: Bearer T. A
request without it gets 401. The server listens on loopback only, unless
--addr names another interface and a token is configured (--token-file or
$MEMSYNC_UI_TOKEN).`

// uiTokenEnv names the environment variable holding the web view's token.
const uiTokenEnv = "MEMSYNC_UI_TOKEN"

func runUI(ctx context.Context, env *Env, args []string) int {
	c := newRepoCmd(env, "ui", "ui [--addr 127.0.0.1:9470] [--token-file F] [--repo DIR] [flags]", uiDescription)
	addr := c.String("addr", "127.0.0.1:9470", "listen on `HOST:PORT` (loopback unless a token is configured)")
	tokenFile := c.String("token-file", "", "read the access token from `F` (its first line); else $"+uiTokenEnv)
	repo, positional, code, done := c.load(args)
	if done {
		return code
	}
	if len(positional) > 0 {
		return c.usageErr("unexpected argument %q", positional[0])
	}
	token, err := uiToken(env, *tokenFile)
	if err != nil {
		return c.usageErr("--token-file: %v", err)
	}
	if err := webui.CheckAddr(*addr, token); err != nil {
		return c.usageErr("%v", err)
	}
	if token == "" {
		if token, err = ensureUIToken(repo); err != nil {
			return c.fail("%v", err)
		}
	}
	lg, err := newLogger(&c.cfg, env.Stderr)
	if err != nil {
		return c.usageErr("%v", err)
	}
	defer lg.Sync() //nolint:errcheck // stderr
	held := &heldGraph{cfg: &c.cfg, repo: repo, lg: lg}
	defer held.close()
	srv, err := newUIServer(env, repo, &c.cfg, token, lg, held.reader, nil)
	if err != nil {
		return c.fail("%v", err)
	}
	link := func(url string) {
		// The operator opens this link once; the browser keeps the token
		// as a cookie.
		fmt.Fprintf(env.Stderr, "memsync ui: open %s?token=%s\n", url, token)
	}
	if err := serveUI(ctx, env, *addr, srv, lg, link); err != nil {
		return c.fail("%v", err)
	}
	return exitOK
}

// uiTokenFile is where the web view keeps its token when none is given:
// .memsync/ui-token, readable by its owner only.
func uiTokenFile(repo string) string { return filepath.Join(layout(repo).LocalDir(), "ui-token") }

// ensureUIToken is the repository's web view token, created at the first
// start of the view (32 random bytes, hex) in uiTokenFile with mode 0600.
// The view never answers without a token: on loopback any local process
// could otherwise read every agent's private memories.
func ensureUIToken(repo string) (string, error) {
	path := uiTokenFile(repo)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("web view token: %w", err)
	}
	for {
		f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
		if err == nil {
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				return "", fmt.Errorf("web view token: %w", err)
			}
			if !st.Mode().IsRegular() {
				return "", fmt.Errorf("web view token %s: not a regular file", path)
			}
			if st.Mode().Perm()&0o077 != 0 {
				if err := f.Chmod(0o600); err != nil {
					return "", fmt.Errorf("web view token %s: readable by others, and: %w", path, err)
				}
			}
			b, err := io.ReadAll(io.LimitReader(f, 4096))
			if err != nil {
				return "", fmt.Errorf("web view token: %w", err)
			}
			if t := strings.TrimSpace(string(b)); t != "" {
				return t, nil
			}
			return "", fmt.Errorf("web view token %s: empty (remove it to have a new one made)", path)
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("web view token: %w", err)
		}
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return "", fmt.Errorf("web view token: %w", err)
		}
		t := hex.EncodeToString(raw)
		nf, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue // another start made it first: read that one
		}
		if err != nil {
			return "", fmt.Errorf("web view token: %w", err)
		}
		_, err = nf.WriteString(t + "\n")
		if err == nil {
			err = nf.Sync()
		}
		if cerr := nf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return "", fmt.Errorf("web view token: %w", err)
		}
		return t, nil
	}
}

// uiToken is the token from file (its first line), else from the
// environment; "" when neither holds one.
func uiToken(env *Env, file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(env.Getenv(uiTokenEnv)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if t := strings.TrimSpace(line); t != "" {
		return t, nil
	}
	return "", fmt.Errorf("%s: empty", file)
}

// The web view's bounds on its clients: a client that sends its request
// slowly, reads its answer slowly or keeps an idle connection is cut off,
// and at most uiMaxConns connections are open at once (the others wait in
// the kernel's backlog). In the daemon (run --ui) the view shares the
// process's file descriptors with the projection; these bounds keep any
// number of slow clients from taking them (issue 51 §2).
const (
	uiReadHeaderTimeout = 5 * time.Second
	uiReadTimeout       = 30 * time.Second
	uiWriteTimeout      = time.Minute
	uiIdleTimeout       = 30 * time.Second
	uiMaxHeaderBytes    = 64 << 10
	uiMaxConns          = 64
)

// newUIHTTPServer is the http.Server of the web view, with its bounds.
func newUIHTTPServer(h http.Handler, lg *zap.Logger) *http.Server {
	return &http.Server{
		Handler: h, ReadHeaderTimeout: uiReadHeaderTimeout, ReadTimeout: uiReadTimeout,
		WriteTimeout: uiWriteTimeout, IdleTimeout: uiIdleTimeout, MaxHeaderBytes: uiMaxHeaderBytes,
		ErrorLog: zap.NewStdLog(lg),
	}
}

// serveUI listens on addr and serves srv until ctx ends. listening, when
// set, is told where it serves once it listens.
func serveUI(ctx context.Context, env *Env, addr string, srv http.Handler, lg *zap.Logger, listening func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("web view: %w", err)
	}
	fmt.Fprintf(env.Stderr, "memsync ui: serving http://%s/\n", ln.Addr())
	if listening != nil {
		listening(fmt.Sprintf("http://%s/", ln.Addr()))
	}
	ln = netutil.LimitListener(ln, uiMaxConns)
	hs := newUIHTTPServer(srv, lg)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("web view: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("web view: shut down: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web view: %w", err)
	}
	return nil
}

// heldGraph gives the web view's requests their reader: the graph opened
// for reading (openReader: read-only, probed) and kept while its store is
// the same file and younger than heldFor, shared by the requests (each
// holds a reference; a replaced graph closes when its last request ends);
// the journals when the graph cannot be opened. Keeping it spares each
// page the open and a cold connection (the search page's p95 at 100,000
// memories halved; docs/benchmarks.md).
type heldGraph struct {
	cfg  *Config
	repo string
	lg   *zap.Logger
	mu   sync.Mutex
	cur  *heldRef
}

// heldFor bounds how long one open serves: a store rebuilt under the
// same path is caught by its file's identity, anything else by age.
const heldFor = time.Minute

// heldRef is one open graph and the requests using it.
type heldRef struct {
	r       memsync.Searcher
	close   func()
	st      os.FileInfo // the embedded store's file at open; nil for Neo4j
	at      time.Time
	refs    int
	retired bool
}

func (h *heldGraph) storeFile() os.FileInfo {
	if h.cfg.graph() == graphNeo4j {
		return nil
	}
	st, err := os.Stat(filepath.Join(layout(h.repo).LocalDir(), embedded.FileName))
	if err != nil {
		return nil
	}
	return st
}

func (h *heldGraph) reader(ctx context.Context) *read.Reader {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := embeddedRebuilding(h.cfg, h.repo); err != nil {
		// The store is half built: the journals answer until it is done,
		// and the store is opened again after.
		if h.cur != nil {
			h.retire(h.cur)
		}
		return read.Offline(uiJournals(h.cfg, h.repo)(), err.Error()+offlineVectors(h.cfg))
	}
	if c := h.cur; c != nil {
		st := h.storeFile()
		fresh := time.Since(c.at) < heldFor && (c.st == nil) == (st == nil) && (st == nil || os.SameFile(c.st, st))
		if !fresh {
			h.retire(c)
		}
	}
	if h.cur == nil {
		st := h.storeFile()
		r := openReader(ctx, h.cfg, h.repo, "ui", io.Discard)
		if r.Offline {
			// Not kept: the next request tries the graph again.
			return r
		}
		h.cur = &heldRef{r: r.From, close: r.Close, st: st, at: time.Now()}
	}
	c := h.cur
	c.refs++
	r := read.New(c.r, uiJournals(h.cfg, h.repo)(), func() { h.release(c) })
	r.Graph, r.Suffix = h.cfg.graph(), offlineVectors(h.cfg)
	r.Check = func() error { return embeddedRebuilding(h.cfg, h.repo) }
	return r
}

// retire stops handing c out; it closes once no request holds it.
func (h *heldGraph) retire(c *heldRef) {
	c.retired = true
	if h.cur == c {
		h.cur = nil
	}
	if c.refs == 0 {
		c.close()
	}
}

func (h *heldGraph) release(c *heldRef) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.refs--
	if c.retired && c.refs == 0 {
		c.close()
	}
}

func (h *heldGraph) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur != nil {
		h.retire(h.cur)
	}
}

// uiJournals makes the offline reader per request, as openReader makes
// it for every door (readJournals).
func uiJournals(cfg *Config, repo string) func() memsync.Searcher {
	return func() memsync.Searcher { return readJournals(cfg, repo) }
}

// newUIServer wires the web view to this repository: reads through open
// (the graph, else the journals), the fleet through memsync.Status (on
// daemon's graph g when the daemon serves it, else a graph opened per
// status), commits through git blame.
func newUIServer(env *Env, repo string, cfg *Config, token string, lg *zap.Logger, open func(context.Context) *read.Reader, g memsync.Graph) (*webui.Server, error) {
	fleet := func(ctx context.Context) (webui.Fleet, error) {
		sg := g
		if sg == nil {
			og, err := openReadGraph(ctx, cfg, repo, zap.NewNop())
			if err != nil {
				og = unreachable{err: err, identity: cfg.graph()}
			}
			defer og.Close()
			sg = og
		}
		rep, remote, err := readStatus(ctx, repo, sg, cfg, env.Now())
		if err != nil {
			return webui.Fleet{}, err
		}
		f := webui.Fleet{Report: rep}
		if remote != nil {
			f.Remote = &webui.Exchange{Remote: remote.Remote, Branch: remote.Branch, LastSuccess: remote.LastSuccess,
				LastError: remote.LastError, Conflicts: remote.Conflicts, Ahead: remote.Ahead, Behind: remote.Behind}
		}
		return f, nil
	}
	var projects func() bool
	if g != nil {
		projects = func() bool { return true } // run --ui: this process projects
	}
	return webui.New(webui.Config{
		Repo: repo, Open: open, Journals: uiJournals(cfg, repo), Fleet: fleet, Projects: projects,
		Commit: func(ctx context.Context, path string, line int) (string, error) {
			return blameCommit(ctx, repo, path, line)
		},
		FSync: cfg.Append.FSync, Token: token, Now: env.Now, Logger: lg,
	})
}

// blameCommit is the commit that added line of path (relative to repo),
// as git blame says; "" when the line is not committed yet or repo is not
// a git work tree.
func blameCommit(ctx context.Context, repo, path string, line int) (string, error) {
	if _, err := os.Stat(repo + "/.git"); err != nil {
		return "", nil
	}
	n := strconv.Itoa(line)
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "blame", "--porcelain", "-L", n+","+n, "--", path)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "no such path") {
			return "", nil // not committed yet
		}
		return "", fmt.Errorf("git blame %s:%d: %v", path, line, strings.TrimSpace(stderr.String()))
	}
	first, _, _ := bufio.NewReader(&out).ReadLine()
	sha, _, _ := strings.Cut(string(first), " ")
	if strings.Trim(sha, "0") == "" {
		return "", nil // git blame's "Not Committed Yet"
	}
	return sha, nil
}

// uiOptions is run --ui: where the daemon serves the web view, and its
// token ("" for none).
type uiOptions struct {
	addr, token string
}
