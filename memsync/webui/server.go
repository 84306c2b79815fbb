// Package webui is memsync's web view: HTTP handlers and their templates,
// reading through the read path's functions (package read: Rank, Explain,
// History, packet.BuildPacket, the Listers) exactly as the CLI does, and
// journaling flags through package feedback as `memsync flag` does. It
// holds no rule of its own: what a viewer may see is journal.Sees, what
// ranks where is memsync/score and memsync/recall.
//
// Security: loopback only unless a token is configured (CheckAddr); a
// token is taken from a cookie, an Authorization: Bearer header or a first
// ?token= (then set as a cookie); every state-changing request is a POST
// carrying a per-server CSRF token, with Origin and Host checked; record
// text is escaped by html/template everywhere; Content-Security-Policy
// default-src 'self' and no asset from the network.
package webui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
	readpath "github.com/memsync/memsync/memsync/read"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Fleet is what the fleet page shows of the repository: memsync.Status's
// report and the git exchange's state (nil without a remote).
type Fleet struct {
	Report memsync.StatusReport
	Remote *Exchange
}

// Exchange is the state of the exchange with the git remote (SPEC §12),
// as ledger.RemoteStatus reads it; the command fills it in, so that this
// package does not link git.
type Exchange struct {
	Remote, Branch string
	LastSuccess    time.Time
	LastError      string
	Conflicts      []string
	Ahead, Behind  int
}

// Config is what a Server reads through and how it is protected.
type Config struct {
	// Repo is the repository's root.
	Repo string
	// Open returns a request's reader: the graph, else the journals.
	Open func(ctx context.Context) *readpath.Reader
	// Journals is the offline reader a request falls back on when the
	// graph fails while answering, or lacks a memory not projected yet;
	// nil means offline.NewJournals over Repo.
	Journals func() memsync.Searcher
	// Fleet reads the fleet page's status; nil shows none.
	Fleet func(ctx context.Context) (Fleet, error)
	// FleetTTL is how long a fleet status is reused (it reads every
	// journal); 0 means 5 s. An older status, up to FleetStale, is still
	// answered at once while a fresh one is read in the background, so
	// the auto-refreshing page never waits on the read.
	FleetTTL time.Duration
	// Commit names the commit that added line of path (relative to Repo);
	// "" when not committed yet. Nil shows none.
	Commit func(ctx context.Context, path string, line int) (string, error)
	// Projects reports whether a daemon projects the journals into the
	// graph this view reads, so that a flag shows within seconds (run
	// --ui: always). Nil asks the fleet status whether `memsync run` runs.
	Projects func() bool
	// FSync makes a flag's append fsync (append.fsync).
	FSync bool
	// Token is required of every request (New refuses an empty one): the
	// view shows every agent's private memories to whoever has it, so no
	// local process reads them without it.
	Token string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger logs failures; nil means none.
	Logger *zap.Logger
}

// ErrNoToken is New's error for a Config without a Token.
var ErrNoToken = errors.New("webui: Config.Token is required: the web view shows private memories and never answers without its token")

// ErrNeedsToken is CheckAddr's error for an address that is not loopback
// when no token is configured.
var ErrNeedsToken = errors.New("the web view listens beyond loopback only with a token (--token-file or MEMSYNC_UI_TOKEN)")

// CheckAddr reports whether the server may listen on addr (HOST:PORT):
// a loopback address always, any other (an empty host is every
// interface) only with a token.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if isLoopback(host) || token != "" {
		return nil
	}
	return fmt.Errorf("--addr %s: %w", addr, ErrNeedsToken)
}

// isLoopback reports whether host (no port) names the loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Server serves the web view. It is safe for concurrent use.
type Server struct {
	cfg     Config
	layout  memsync.Layout
	lg      *zap.Logger
	pages   map[string]*template.Template
	csrf    string
	handler http.Handler

	fleetMu   sync.Mutex
	fleet     Fleet
	fleetErr  error
	fleetAt   time.Time
	fleetRead bool
	fleetBusy bool // a background read is under way

	sums summaries // charts and queue counts per viewer (SummaryTTL)
	// recents are the viewers' recent windows (SummaryTTL), under recentMu.
	recentMu sync.Mutex
	recents  map[string]recent
}

// FleetStale is how old a fleet status may be and still be answered while
// a fresh one is read in the background; older, a request reads it itself.
const FleetStale = time.Minute

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Open == nil {
		return nil, errors.New("webui: Config.Open is required")
	}
	if cfg.Token == "" {
		return nil, ErrNoToken
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.FleetTTL == 0 {
		cfg.FleetTTL = 5 * time.Second
	}
	s := &Server{cfg: cfg, layout: memsync.Layout{Root: cfg.Repo}, lg: cfg.Logger}
	if s.lg == nil {
		s.lg = zap.NewNop()
	}
	if cfg.Journals == nil {
		s.cfg.Journals = func() memsync.Searcher { return offline.NewJournals(s.layout) }
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("webui: csrf secret: %w", err)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("memsync ui csrf"))
	s.csrf = hex.EncodeToString(mac.Sum(nil))
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s.pages = pages
	s.handler = s.protect(s.routes())
	return s, nil
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.fleetPage)
	mux.HandleFunc("GET /agents/{agent}", s.agentPage)
	mux.HandleFunc("GET /search", s.searchPage)
	mux.HandleFunc("GET /memory/{uuid}", s.memoryPage)
	mux.HandleFunc("POST /memory/{uuid}/flag", s.flag)
	mux.HandleFunc("/memory/{uuid}/flag", func(w http.ResponseWriter, r *http.Request) {
		// A flag changes state: POST only (the catch-all below would
		// otherwise answer 404).
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: a flag is a POST with the form's CSRF token", http.StatusMethodNotAllowed)
	})
	mux.HandleFunc("GET /graph/entity/{name}", s.entityGraphPage)
	mux.HandleFunc("GET /graph/{uuid}", s.graphPage)
	mux.HandleFunc("GET /packet", s.packetPage)
	mux.HandleFunc("GET /timeline", s.timelinePage)
	mux.HandleFunc("GET /queue", s.queuePage)
	mux.HandleFunc("GET /entities", s.entitiesPage)
	static, _ := fs.Sub(assets, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.notFound(w, r, "no such page") })
	return mux
}

// Unauthorized is the answer to a request without the token.
const Unauthorized = "401 unauthorized: the web view needs its token. Open the link memsync ui printed at start " +
	"(http://HOST:PORT/?token=...; the token is in .memsync/ui-token, readable by its owner only, unless --token-file " +
	"or MEMSYNC_UI_TOKEN gave another), or send Authorization: Bearer TOKEN."

// cookieName holds the token after a first ?token=.
const cookieName = "memsync_ui_token"

// protect sets the security headers and requires the token of every
// request (a page, a flag, an asset): any local process can reach a
// loopback port, and the view shows every agent's private memories. A
// page of another origin (DNS rebinding) has no token either.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if t := r.URL.Query().Get("token"); t != "" && s.tokenOK(t) {
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(cookieName); err == nil && s.tokenOK(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenOK(strings.TrimSpace(b)) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, Unauthorized, http.StatusUnauthorized)
	})
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.cfg.Token)) == 1
}

// csrfOK checks a state-changing request: the form's csrf field, and
// Origin (else Referer), when sent, naming this server's Host.
func (s *Server) csrfOK(r *http.Request) bool {
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.csrf)) != 1 {
		return false
	}
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	if from == "" {
		return true
	}
	u, err := url.Parse(from)
	return err == nil && u.Host == r.Host
}

// viewer is whose eyes a request sees with: the operator (every group) or
// one agent (journal.Sees).
type viewer struct {
	As     string   // "" for the operator
	Agents []string // the repository's agents
}

// groups is every group the viewer may see.
func (v viewer) groups() []string {
	if v.As != "" {
		return journal.ReaderGroups(v.As)
	}
	out := []string{journal.SharedGroup}
	for _, a := range v.Agents {
		out = append(out, journal.PrivateGroup(a))
	}
	return out
}

// sees reports whether the viewer may see a memory of group.
func (v viewer) sees(group string) bool {
	if v.As != "" {
		return journal.Sees(v.As, group)
	}
	if group == journal.SharedGroup {
		return true
	}
	a, ok := journal.GroupAgent(group)
	return ok && slices.Contains(v.Agents, a)
}

// label is the body's data-viewer.
func (v viewer) label() string {
	if v.As == "" {
		return "operator"
	}
	return "agent:" + v.As
}

// errNoAgent is a ?as= naming no agent of the repository.
var errNoAgent = errors.New("no such agent")

// viewerOf reads ?as=.
func (s *Server) viewerOf(r *http.Request) (viewer, error) {
	agents, err := s.layout.Agents()
	if err != nil {
		return viewer{}, fmt.Errorf("list agents: %w", err)
	}
	v := viewer{As: r.URL.Query().Get("as"), Agents: agents}
	if v.As != "" && !slices.Contains(agents, v.As) {
		return v, fmt.Errorf("%q: %w", v.As, errNoAgent)
	}
	return v, nil
}

// open returns the request's reader: the configured opener's, falling
// back on the journals (Config.Journals) when the graph fails while
// answering, the fallback logged.
func (s *Server) open(ctx context.Context) *read {
	r := s.cfg.Open(ctx)
	if r == nil {
		r = readpath.Offline(s.cfg.Journals(), "no graph")
	}
	if !r.Offline && r.Journals == nil {
		r.Journals = s.cfg.Journals()
	}
	r.Note = func(err error) { s.lg.Warn("graph read failed: answering from the journals", zap.Error(err)) }
	return &read{r: r}
}

// read is one request's read path (memsync/read's Reader): the graph,
// else the journals, as every door reads.
type read struct {
	r *readpath.Reader
}

// notVisible is an answer, not a failure: the journals would give it too.
func notVisible(err error) bool { return errors.Is(err, readpath.ErrNotVisible) }

// do runs fn on the reader; a graph error (not the request's own end, not
// a memory the reader may not see) runs it again on the journals.
func (rd *read) do(ctx context.Context, fn func(memsync.Searcher) error) error {
	_, err := readpath.ReadUnless(ctx, rd.r, func(sr memsync.Searcher) (struct{}, error) { return struct{}{}, fn(sr) }, notVisible)
	return err
}

// doMissing is do, and then, when missing says the graph's answer lacks
// what was asked (not projected yet), fn again on the journals.
func (rd *read) doMissing(ctx context.Context, fn func(memsync.Searcher) error, missing func(error) bool) error {
	_, err := readpath.ReadMissingUnless(ctx, rd.r, func(sr memsync.Searcher) (struct{}, error) { return struct{}{}, fn(sr) },
		notVisible, func(_ struct{}, err error) bool { return missing(err) })
	return err
}

func (rd *read) close() { rd.r.Close() }

// source names what answered, and reason why the journals did.
func (rd *read) source() (string, string) {
	if rd.r.Offline {
		return "journals", rd.r.Reason
	}
	return "graph", ""
}

// fleetStatus is the fleet's status, read at most once per FleetTTL.
func (s *Server) fleetStatus(ctx context.Context) (Fleet, error) {
	s.fleetMu.Lock()
	defer s.fleetMu.Unlock()
	age := s.cfg.Now().Sub(s.fleetAt)
	if s.fleetRead && age < s.cfg.FleetTTL {
		return s.fleet, s.fleetErr
	}
	if s.fleetRead && age < FleetStale && s.fleetErr == nil {
		if !s.fleetBusy {
			s.fleetBusy = true
			go s.refreshFleet()
		}
		return s.fleet, s.fleetErr
	}
	s.fleet, s.fleetErr = s.cfg.Fleet(ctx)
	s.fleetAt, s.fleetRead = s.cfg.Now(), true
	return s.fleet, s.fleetErr
}

// projects reports whether a daemon projects new records into the graph.
func (s *Server) projects(ctx context.Context) bool {
	if s.cfg.Projects != nil {
		return s.cfg.Projects()
	}
	if s.cfg.Fleet == nil {
		return false
	}
	f, err := s.fleetStatus(ctx)
	return err == nil && f.Report.Daemon.Running && f.Report.Daemon.Command == "run"
}

// refreshFleet reads the fleet's status for the next request.
func (s *Server) refreshFleet() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := s.cfg.Fleet(ctx)
	s.fleetMu.Lock()
	defer s.fleetMu.Unlock()
	s.fleet, s.fleetErr, s.fleetAt, s.fleetBusy = f, err, s.cfg.Now(), false
}
