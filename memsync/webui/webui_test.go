package webui_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"github.com/memsync/memsync/memsync/read"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/webui"
)

// The secret no one but bob may see: bob's private memory holds it.
const bobSecret = "zebracorn"

// rig is a repository of two agents projected into a real embedded store,
// served by a webui.Server.
type rig struct {
	t      *testing.T
	repo   string
	g      memsync.Graph
	srv    *webui.Server
	now    time.Time
	ids    map[string]string
	engine *memsync.Engine
	// auth is the token do sends as a bearer unless the request names
	// its own Authorization or Cookie ("" for none).
	auth string
}

// rigToken is the token of a rig made without one of its own.
const rigToken = "rig-token"

func newRig(t *testing.T, token string) *rig { t.Helper(); return newRigToken(t, token, nil) }

// newRigWith is newRig with the server's Config changed by edit.
func newRigWith(t *testing.T, edit func(*webui.Config)) *rig {
	t.Helper()
	return newRigToken(t, "", edit)
}

func newRigToken(t *testing.T, token string, edit func(*webui.Config)) *rig {
	t.Helper()
	r := &rig{t: t, repo: t.TempDir(), now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC), ids: map[string]string{}}
	if token == "" {
		token, r.auth = rigToken, rigToken
	}
	l := memsync.Layout{Root: r.repo}
	for _, a := range []string{"alice", "bob"} {
		if err := os.MkdirAll(l.JournalDir(a), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := r.now.Add(-30 * 24 * time.Hour)
	r.add("decision", journal.Record{Agent: "alice", Kind: journal.KindDecision, Scope: journal.ScopeShared, TS: old,
		Text: "Use postgres for the billing service", Entities: []string{"Postgres"}})
	r.add("alicePrivate", journal.Record{Agent: "alice", Kind: journal.KindFact, Scope: journal.ScopePrivate, TS: old.Add(time.Hour),
		Text: "alice keeps the staging password rotation notes", Tier: "core"})
	priv := memsync.Node{Memory: memsync.Memory{Record: journal.Record{UUID: r.ids["alicePrivate"], Agent: "alice", Kind: journal.KindFact,
		Scope: journal.ScopePrivate, TS: old.Add(time.Hour), Text: "alice keeps the staging password rotation notes"}}}
	r.add("promotion", memsync.PromotionRecord(&priv, old.Add(90*time.Minute)))
	r.add("shared", journal.Record{Agent: "bob", Kind: journal.KindFact, Scope: journal.ScopeShared, TS: old.Add(2 * time.Hour),
		Text: "Postgres replicas lag under heavy billing load", Entities: []string{"Postgres"}, Links: []string{r.ids["decision"]}})
	sup, _ := json.Marshal([]string{r.ids["decision"]})
	r.add("bobPrivate", journal.Record{Agent: "bob", Kind: journal.KindObservation, Scope: journal.ScopePrivate, TS: old.Add(3 * time.Hour),
		Text: "bob thinks the billing postgres plan is a " + bobSecret, Entities: []string{"Postgres"},
		Links: []string{r.ids["shared"]}, Extra: map[string]json.RawMessage{"supports": sup}})
	r.add("xss", journal.Record{Agent: "bob", Kind: journal.KindFact, Scope: journal.ScopeShared, TS: old.Add(4 * time.Hour),
		Text: "<script>alert(1)</script> injected billing note"})
	g, err := embedded.Open(r.repo+"/.memsync", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	r.g = g
	r.engine, err = memsync.New(memsync.Options{Root: r.repo, Graph: g, Now: r.clock})
	if err != nil {
		t.Fatal(err)
	}
	r.sync()
	cfg := webui.Config{
		Repo: r.repo, Token: token, Now: r.clock,
		Open: func(context.Context) *read.Reader { r := read.New(g, nil, nil); r.Graph = "embedded"; return r },
		Fleet: func(ctx context.Context) (webui.Fleet, error) {
			rep, err := memsync.Status(ctx, r.repo, g, "embedded", r.now)
			return webui.Fleet{Report: rep}, err
		},
	}
	if edit != nil {
		edit(&cfg)
	}
	r.srv, err = webui.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) clock() time.Time { return r.now }

// add journals rec as name.
func (r *rig) add(name string, rec journal.Record) {
	r.t.Helper()
	l := memsync.Layout{Root: r.repo}
	if _, err := journal.Append(l.JournalDir(rec.Agent), &rec, journal.AppendOptions{NoSync: true, Now: r.clock, Random: rand.Reader}); err != nil {
		r.t.Fatalf("append %s: %v", name, err)
	}
	r.ids[name] = rec.UUID
}

func (r *rig) sync() {
	r.t.Helper()
	if _, err := r.engine.SyncOnce(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	if f, ok := r.g.(memsync.Flusher); ok {
		if err := f.Flush(context.Background()); err != nil {
			r.t.Fatal(err)
		}
	}
}

// do serves one request on a loopback host.
func (r *rig) do(method, target string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
	r.t.Helper()
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	req.Host = "127.0.0.1:9470"
	_, ownAuth := header["Authorization"]
	_, ownCookie := header["Cookie"]
	if r.auth != "" && !ownAuth && !ownCookie {
		req.Header.Set("Authorization", "Bearer "+r.auth)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	r.srv.ServeHTTP(w, req)
	return w
}

func (r *rig) get(target string) *httptest.ResponseRecorder { return r.do("GET", target, nil, nil) }

// pages is every page, with what it must show the operator.
func (r *rig) pages() []struct{ name, path, page, want string } {
	return []struct{ name, path, page, want string }{
		{"fleet", "/", "fleet", `tr class="agent" data-agent="bob"`},
		{"agent alice", "/agents/alice", "agent", `id="promotions"`},
		{"agent alice's promotion", "/agents/alice", "agent", `<p class="note">promoted from ` + r.ids["alicePrivate"] + `</p>`},
		{"agent bob", "/agents/bob", "agent", `id="review"`},
		{"search", "/search?q=billing+postgres", "search", `<ol id="hits">`},
		{"search no hits", "/search?q=nothingmatchesthis", "search", `id="no-hits"`},
		{"search filtered", "/search?q=billing&kind=fact&status=active&since=90d", "search", `class="factors"`},
		{"memory", "/memory/" + r.ids["decision"], "memory", `<svg id="history"`},
		{"graph", "/graph/" + r.ids["decision"], "graph", `<svg id="graph"`},
		{"entity graph", "/graph/entity/Postgres", "graph", `data-entity="Postgres"`},
		{"packet form", "/packet", "packet", `<form id="packet"`},
		{"fleet timeline", "/", "fleet", `<svg id="timeline-chart"`},
		{"fleet queue counts", "/", "fleet", `<span class="count" data-section="waiting">1</span>`},
		{"timeline", "/timeline?since=60d", "timeline", `<div id="list"><ul class="memories">`},
		{"timeline this week", "/timeline", "timeline", `<p class="none">none</p>`},
		{"queue", "/queue", "queue", `<section class="queue" id="waiting"><h2>Decisions waiting for an outcome (1)</h2>`},
		{"entities", "/entities", "entities", `<tr class="entity" data-entity="Postgres">`},
		{"packet", "/packet?role=planner&goal=billing+postgres&agent=alice", "packet", `<section id="packet">`},
	}
}

func TestPagesAnswer(t *testing.T) {
	r := newRig(t, "")
	for _, as := range []string{"", "alice", "bob"} {
		for _, p := range r.pages() {
			t.Run(p.name+"/as="+as, func(t *testing.T) {
				path := p.path
				if as != "" {
					path += map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")] + "as=" + as
				}
				w := r.get(path)
				body := w.Body.String()
				if w.Code != http.StatusOK {
					t.Fatalf("GET %s: %d\n%s", path, w.Code, body)
				}
				viewer := "operator"
				if as != "" {
					viewer = "agent:" + as
				}
				head := `<body data-page="` + p.page + `" data-viewer="` + viewer + `" data-source="graph">`
				if !strings.Contains(body, head) {
					t.Errorf("GET %s: no %s", path, head)
				}
				if !strings.Contains(body, p.want) {
					t.Errorf("GET %s: no %s in\n%s", path, p.want, body)
				}
				for _, nav := range []string{`id="nav-fleet"`, `id="nav-search"`, `id="nav-packet"`} {
					if !strings.Contains(body, nav) {
						t.Errorf("GET %s: no %s", path, nav)
					}
				}
				if as != "" {
					checkLinksKeepAs(t, body, as)
				}
			})
		}
	}
}

// hrefRE finds the site's own links; the "view as" links (class view)
// change whose eyes on purpose.
var hrefRE = regexp.MustCompile(`(class="view[^"]*" )?(?:href|action)="(/[^"]*)"`)

func checkLinksKeepAs(t *testing.T, body, as string) {
	t.Helper()
	for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
		u := strings.ReplaceAll(m[2], "&amp;", "&")
		if m[1] != "" || strings.HasPrefix(u, "/static/") || u == "/search" || u == "/packet" || u == "/timeline" {
			continue // forms carry ?as= in a hidden field
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.Query().Get("as") != as {
			t.Errorf("link %s loses ?as=%s", u, as)
		}
	}
	for _, form := range []string{`<form id="search"`, `<form id="packet"`, `<form id="filter"`} {
		if strings.Contains(body, form) && !strings.Contains(body, `<input type="hidden" name="as" value="`+as+`">`) {
			t.Errorf("%s without a hidden as=%s", form, as)
		}
	}
}

// Another agent's private memory is never in a page seen as alice,
// whatever the page; the operator sees it, labelled with its group.
func TestViewAsHidesOthersPrivateMemory(t *testing.T) {
	r := newRig(t, "")
	paths := []string{"/", "/agents/alice", "/agents/bob", "/search?q=" + bobSecret, "/search?q=billing+postgres&status=all",
		"/memory/" + r.ids["decision"], "/memory/" + r.ids["shared"], "/graph/" + r.ids["decision"], "/graph/" + r.ids["shared"],
		"/graph/entity/Postgres", "/packet?role=critic&goal=billing+postgres+plan"}
	for _, p := range r.pages() {
		paths = append(paths, p.path)
	}
	for _, path := range paths {
		sep := map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")]
		t.Run(path, func(t *testing.T) {
			w := r.get(path + sep + "as=alice")
			if w.Code != http.StatusOK {
				t.Fatalf("%d", w.Code)
			}
			// The search form and the "view as" links echo the query itself.
			body := strings.ReplaceAll(strings.ReplaceAll(w.Body.String(), `value="`+bobSecret+`"`, ""), "q="+bobSecret, "")
			if strings.Contains(body, bobSecret) || strings.Contains(body, r.ids["bobPrivate"]) {
				t.Errorf("as alice, bob's private memory shows:\n%s", body)
			}
		})
	}
	// The operator sees it, with its group.
	body := r.get("/search?q=" + bobSecret).Body.String()
	if !strings.Contains(body, bobSecret) || !strings.Contains(body, `data-group="AGENT:bob"`) {
		t.Errorf("operator search lacks bob's private memory and its group:\n%s", body)
	}
	body = r.get("/memory/" + r.ids["decision"]).Body.String()
	if !strings.Contains(body, `data-type="SUPPORTS" data-dir="in"`) || !strings.Contains(body, bobSecret) {
		t.Errorf("operator memory page lacks bob's supporting record:\n%s", body)
	}
}

// A memory the viewer may not see answers exactly as an unknown uuid.
func TestInvisibleMemoryIsNotFound(t *testing.T) {
	r := newRig(t, "")
	hidden := r.ids["bobPrivate"]
	unknown := "mem_20261126T000000Z_bob_0001"
	for _, page := range []string{"/memory/", "/graph/"} {
		t.Run(page, func(t *testing.T) {
			a := r.get(page + hidden + "?as=alice")
			b := r.get(page + unknown + "?as=alice")
			if a.Code != http.StatusNotFound || b.Code != http.StatusNotFound {
				t.Fatalf("codes %d, %d; want 404, 404", a.Code, b.Code)
			}
			if got, want := strings.ReplaceAll(a.Body.String(), hidden, "X"), strings.ReplaceAll(b.Body.String(), unknown, "X"); got != want {
				t.Errorf("invisible and unknown differ:\n%s\n---\n%s", got, want)
			}
			if ok := r.get(page + hidden + "?as=bob"); ok.Code != http.StatusOK {
				t.Errorf("bob's own: %d", ok.Code)
			}
		})
	}
	if w := r.get("/?as=mallory"); w.Code != http.StatusNotFound {
		t.Errorf("unknown ?as=: %d, want 404", w.Code)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func (r *rig) csrf(uuid string) string {
	r.t.Helper()
	m := csrfRE.FindStringSubmatch(r.get("/memory/" + uuid).Body.String())
	if m == nil {
		r.t.Fatal("no csrf field on the memory page")
	}
	return m[1]
}

func TestFlagIsProtected(t *testing.T) {
	r := newRig(t, "")
	target := "/memory/" + r.ids["shared"] + "/flag"
	good := r.csrf(r.ids["shared"])
	for _, c := range []struct {
		name   string
		method string
		form   url.Values
		header map[string]string
		want   int
	}{
		{"GET", "GET", nil, nil, http.StatusMethodNotAllowed},
		{"no csrf", "POST", url.Values{"flag": {"wrong"}, "by": {"ann"}}, nil, http.StatusForbidden},
		{"wrong csrf", "POST", url.Values{"flag": {"wrong"}, "by": {"ann"}, "csrf": {strings.Repeat("0", len(good))}}, nil, http.StatusForbidden},
		{"another origin", "POST", url.Values{"flag": {"wrong"}, "by": {"ann"}, "csrf": {good}}, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"another referer", "POST", url.Values{"flag": {"wrong"}, "by": {"ann"}, "csrf": {good}}, map[string]string{"Referer": "http://evil.example/x"}, http.StatusForbidden},
		{"no name", "POST", url.Values{"flag": {"wrong"}, "csrf": {good}}, nil, http.StatusBadRequest},
		{"unknown flag", "POST", url.Values{"flag": {"delete"}, "by": {"ann"}, "csrf": {good}}, nil, http.StatusBadRequest},
		{"invisible as alice", "POST", url.Values{"flag": {"wrong"}, "by": {"ann"}, "csrf": {good}}, nil, http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := target
			if c.name == "invisible as alice" {
				path = "/memory/" + r.ids["bobPrivate"] + "/flag?as=alice"
			}
			w := r.do(c.method, path, c.form, c.header)
			if w.Code != c.want {
				t.Fatalf("%s %s: %d, want %d\n%s", c.method, path, w.Code, c.want, w.Body)
			}
		})
	}
	// Nothing was journaled by any of them.
	if n := feedbackRecords(t, r, "bob") + feedbackRecords(t, r, "alice"); n != 0 {
		t.Fatalf("%d feedback records written by refused requests", n)
	}
}

// TestFlagHugeNoteIs413 is issue 51 §7: a flag with a 2 MB note (or a
// note over MaxFlagNote) is refused with 413 naming the limit, never a
// 500, and nothing is journaled.
func TestFlagHugeNoteIs413(t *testing.T) {
	r := newRig(t, "")
	uuid := r.ids["shared"]
	good := r.csrf(uuid)
	for _, size := range []int{2 << 20, webui.MaxFlagNote + 1} {
		w := r.do("POST", "/memory/"+uuid+"/flag", url.Values{"flag": {"wrong"}, "by": {"ann"}, "note": {strings.Repeat("x", size)}, "csrf": {good}}, nil)
		if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "KiB") {
			t.Fatalf("a %d-byte note: %d, want 413 naming the limit\n%.300s", size, w.Code, w.Body)
		}
	}
	if n := feedbackRecords(t, r, "bob") + feedbackRecords(t, r, "alice"); n != 0 {
		t.Fatalf("%d feedback records written by refused requests", n)
	}
	w := r.do("POST", "/memory/"+uuid+"/flag", url.Values{"flag": {"wrong"}, "by": {"ann"}, "note": {strings.Repeat("x", 1000)}, "csrf": {good}}, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("a 1000-byte note: %d\n%.300s", w.Code, w.Body)
	}
}

// feedbackRecords counts agent's feedback records.
func feedbackRecords(t *testing.T, r *rig, agent string) int {
	t.Helper()
	n := 0
	err := memsync.EachRecord(memsync.Layout{Root: r.repo}, agent, func(m memsync.Memory) error {
		if m.Kind == journal.KindFeedback {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A flag is journaled as memsync flag writes it, the browser is sent back
// with a flash, and once projected a wrong memory leaves default search.
func TestFlagWrongJournalsAndLeavesSearch(t *testing.T) {
	r := newRig(t, "")
	uuid := r.ids["shared"]
	search := "/search?q=replicas+lag&as=alice"
	if body := r.get(search).Body.String(); !strings.Contains(body, `data-uuid="`+uuid+`"`) {
		t.Fatalf("not found before the flag:\n%s", body)
	}
	w := r.do("POST", "/memory/"+uuid+"/flag?as=alice", url.Values{"flag": {"wrong"}, "by": {"Ann Operator"}, "note": {"fixed since"}, "csrf": {r.csrf(uuid)}},
		map[string]string{"Origin": "http://127.0.0.1:9470"})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("flag: %d\n%s", w.Code, w.Body)
	}
	loc := w.Header().Get("Location")
	if !strings.HasPrefix(loc, "/memory/"+uuid+"?") || !strings.Contains(loc, "as=alice") {
		t.Fatalf("redirect to %q", loc)
	}
	var fb *memsync.Memory
	_ = memsync.EachRecord(memsync.Layout{Root: r.repo}, "alice", func(m memsync.Memory) error {
		if m.Kind == journal.KindFeedback {
			fb = &m
		}
		return nil
	})
	if fb == nil {
		t.Fatal("no feedback record in alice's journal (the viewer's)")
	}
	if fb.Feedback() != "wrong" || fb.Source == nil || fb.Source.Actor != "Ann Operator" || fb.Source.Type != "told" ||
		len(fb.Links) != 1 || fb.Links[0] != uuid || fb.Scope != journal.ScopeShared ||
		fb.Text != "Ann Operator flagged "+uuid+" wrong: fixed since" {
		t.Errorf("feedback record %+v", fb.Record)
	}
	page := r.get(loc).Body.String()
	if !strings.Contains(page, `<p id="flash" data-state="sync">`) || !strings.Contains(page, fb.UUID) || !strings.Contains(page, "at the next memsync sync") {
		t.Errorf("no flash naming %s and saying it shows at the next sync (no daemon):\n%s", fb.UUID, page)
	}
	r.sync()
	page = r.get(loc).Body.String()
	if !strings.Contains(page, `<p id="flash" data-state="shown">`) || !strings.Contains(page, `<dd class="status-why">flagged wrong</dd>`) {
		t.Errorf("projected: the flash does not say it shows, or no reason for the archived status:\n%s", page)
	}
	if body := r.get(search + "&status=all").Body.String(); !strings.Contains(body, `<span class="status-why">(flagged wrong)</span>`) {
		t.Errorf("search --all: no reason for the archived status:\n%s", body)
	}
	if body := r.get(search).Body.String(); strings.Contains(body, `data-uuid="`+uuid+`"`) || !strings.Contains(body, `id="no-hits"`) {
		t.Errorf("flagged wrong, still in default search:\n%s", body)
	}
	if body := r.get(search + "&status=wrong").Body.String(); !strings.Contains(body, `data-uuid="`+uuid+`"`) {
		t.Errorf("not found with status=wrong:\n%s", body)
	}
}

func TestRecordTextIsEscaped(t *testing.T) {
	r := newRig(t, "")
	for _, path := range []string{"/search?q=injected+billing+note", "/memory/" + r.ids["xss"], "/agents/bob", "/graph/" + r.ids["xss"],
		"/packet?role=planner&goal=injected+billing+note&agent=bob"} {
		body := r.get(path).Body.String()
		if strings.Contains(body, "<script>alert(1)</script>") {
			t.Errorf("%s renders the record's script tag", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s lacks the escaped text:\n%s", path, body)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	r := newRig(t, "")
	w := r.get("/")
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if body := w.Body.String(); strings.Contains(body, "http://") || strings.Contains(body, "https://") || strings.Contains(body, "<script") {
		t.Errorf("the page loads from the network or runs a script:\n%s", body)
	}
	// A page of another origin (DNS rebinding) has no token: 401.
	if w := r.do("GET", "/", nil, map[string]string{"Host": "evil.example", "Authorization": ""}); w.Code != http.StatusUnauthorized {
		t.Errorf("Host evil.example without the token: %d, want 401", w.Code)
	}
	if w := r.get("/static/style.css"); w.Code != http.StatusOK {
		t.Errorf("style.css: %d", w.Code)
	}
}

func TestToken(t *testing.T) {
	r := newRig(t, "s3cret-token")
	for _, c := range []struct {
		name   string
		path   string
		header map[string]string
		want   int
	}{
		{"none", "/", nil, http.StatusUnauthorized},
		{"wrong bearer", "/", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"bearer", "/", map[string]string{"Authorization": "Bearer s3cret-token"}, http.StatusOK},
		{"wrong query", "/?token=nope", nil, http.StatusUnauthorized},
		{"query", "/search?q=x&token=s3cret-token", nil, http.StatusSeeOther},
		{"cookie", "/", map[string]string{"Cookie": "memsync_ui_token=s3cret-token"}, http.StatusOK},
		{"any host with a token", "/", map[string]string{"Authorization": "Bearer s3cret-token", "Host": "memory.example:9470"}, http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := r.do("GET", c.path, nil, c.header)
			if w.Code != c.want {
				t.Fatalf("%d, want %d", w.Code, c.want)
			}
			if c.name == "query" {
				if loc := w.Header().Get("Location"); strings.Contains(loc, "token") || !strings.HasPrefix(loc, "/search?") {
					t.Errorf("redirect %q keeps the token or loses the page", loc)
				}
				if ck := w.Header().Get("Set-Cookie"); !strings.Contains(ck, "memsync_ui_token=s3cret-token") || !strings.Contains(ck, "HttpOnly") {
					t.Errorf("cookie %q", ck)
				}
			}
		})
	}
}

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:9470", "", true},
		{"localhost:9470", "", true},
		{"[::1]:9470", "", true},
		{"0.0.0.0:9470", "", false},
		{":9470", "", false},
		{"192.168.1.5:9470", "", false},
		{"192.168.1.5:9470", "t", true},
		{"0.0.0.0:9470", "t", true},
		{"9470", "", false},
	} {
		err := webui.CheckAddr(c.addr, c.token)
		if (err == nil) != c.ok {
			t.Errorf("CheckAddr(%q, token %q) = %v, want ok %v", c.addr, c.token, err, c.ok)
		}
		if !c.ok && c.addr != "9470" && !errors.Is(err, webui.ErrNeedsToken) {
			t.Errorf("CheckAddr(%q): %v, want ErrNeedsToken", c.addr, err)
		}
	}
}

// The memory page's chart is drawn from explain's events: one mark at
// the memory's ts, one per event the viewer may see, one now.
func TestHistoryChartFollowsEvents(t *testing.T) {
	r := newRig(t, "")
	marks := regexp.MustCompile(`<circle class="mark"`)
	op := r.get("/memory/" + r.ids["decision"]).Body.String()
	alice := r.get("/memory/" + r.ids["decision"] + "?as=alice").Body.String()
	// The operator sees bob's private support and bob's shared link;
	// alice sees the link only, and no time of the other (nor of a decay
	// counted from it).
	timed := regexp.MustCompile(`<li class="event" data-kind="[a-z]+"><time>`)
	for who, body := range map[string]string{"operator": op, "alice": alice} {
		if n, want := len(marks.FindAllString(body, -1)), len(timed.FindAllString(body, -1))+2; n != want {
			t.Errorf("%s's chart: %d marks, want %d (written, each timed event, now)\n%s", who, n, want, body)
		}
	}
	if !strings.Contains(op, `data-kind="observation"><time>`) || strings.Contains(alice, r.ids["bobPrivate"]) {
		t.Errorf("the operator's events lack bob's private support, or alice's name it")
	}
	if !strings.Contains(alice, "(time not shown)") {
		t.Errorf("alice's events should name the invisible one without its time:\n%s", alice)
	}
}

// TestNoTokenNoView is issue 51 §11: the web view is never served without
// a token (New refuses an empty one), and a loopback request without it,
// to the operator's view or to ?as=A, gets 401 saying how to get in.
func TestNoTokenNoView(t *testing.T) {
	if _, err := webui.New(webui.Config{Repo: t.TempDir(), Open: func(context.Context) *read.Reader { return read.New(nil, nil, nil) }}); !errors.Is(err, webui.ErrNoToken) {
		t.Fatalf("New without a token: %v, want ErrNoToken", err)
	}
	r := newRig(t, "")
	for _, path := range []string{"/", "/agents/bob", "/search?q=billing", "/memory/" + r.ids["bobPrivate"], "/memory/" + r.ids["bobPrivate"] + "?as=bob", "/packet?role=planner&goal=billing"} {
		w := r.do("GET", path, nil, map[string]string{"Authorization": ""})
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "needs its token") || strings.Contains(w.Body.String(), bobSecret) {
			t.Errorf("GET %s without the token: %d\n%.300s", path, w.Code, w.Body)
		}
	}
	if w := r.get("/memory/" + r.ids["bobPrivate"]); w.Code != http.StatusOK {
		t.Errorf("with the token: %d", w.Code)
	}
}
