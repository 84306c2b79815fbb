package browser

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// tab is one Chromium tab of a test. Every request the tab's pages make is
// watched: one to any address but 127.0.0.1 fails the test when it ends,
// and so does an error in the page's console (a script error, a resource
// that failed to load, a Content-Security-Policy violation) but for the
// failed requests the test expects.
type tab struct {
	t    *testing.T
	f    *fixture
	base string // the ui server's http://127.0.0.1:PORT
	ctx  context.Context

	mu       sync.Mutex
	offsite  []string
	console  []consoleError
	expected map[string]bool // URLs the test expects to fail
	authed   map[string]bool // bases whose token cookie the tab holds
}

// consoleError is an error the page's console showed.
type consoleError struct{ source, url, text string }

// newTab opens a tab in the shared Chromium, closed when the test ends.
func (f *fixture) newTab(t *testing.T) *tab {
	t.Helper()
	return f.newTabWith(t)
}

// newTabWith opens a tab with more chromedp context options, e.g. a
// browser context of its own (no cookies shared with other tabs).
func (f *fixture) newTabWith(t *testing.T, opts ...chromedp.ContextOption) *tab {
	t.Helper()
	tb := &tab{t: t, f: f, base: f.base, expected: map[string]bool{}, authed: map[string]bool{}}
	ctx, cancel := chromedp.NewContext(f.browser, append(opts, chromedp.WithListener(func(ev any) {
		// Runs in the tab's event loop: note, never block.
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if e.Request != nil && !loopback(e.Request.URL) {
				tb.offsite = append(tb.offsite, e.Request.URL)
			}
		case *cdplog.EventEntryAdded:
			if e.Entry != nil && e.Entry.Level == cdplog.EntryLevelError {
				tb.console = append(tb.console, consoleError{string(e.Entry.Source), e.Entry.URL, e.Entry.Text})
			}
		case *runtime.EventExceptionThrown:
			if d := e.ExceptionDetails; d != nil {
				tb.console = append(tb.console, consoleError{"exception", d.URL, d.Text})
			}
		}
	}))...)
	if err := chromedp.Do(ctx); err != nil { // opens the tab, bound to ctx alone
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	// Only after the tab is open may a deadline bound the test's actions.
	tctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
	tb.ctx = tctx
	t.Cleanup(func() {
		tcancel()
		cancel()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, u := range tb.offsite {
			t.Errorf("a page fetched %s: nothing may be fetched from an address other than 127.0.0.1", u)
		}
		for _, c := range tb.console {
			// The browser asks for /favicon.ico by itself; the pages name no
			// icon, and its 404 is no error of theirs.
			if c.source == string(cdplog.EntrySourceNetwork) && (tb.expected[c.url] || strings.HasSuffix(c.url, "/favicon.ico")) {
				continue
			}
			t.Errorf("the console of %s shows a %s error: %s", c.url, c.source, c.text)
		}
	})
	return tb
}

// loopback reports whether a request's URL stays on 127.0.0.1; data:,
// blob:, about: and javascript: URLs fetch nothing from an address.
func loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "blob", "about", "javascript":
		return true
	}
	return u.Hostname() == "127.0.0.1"
}

// open navigates to path (with its query) on the ui server and returns the
// HTTP status of the page; a navigation that fails fails the test.
func (tb *tab) open(path string) int64 {
	tb.t.Helper()
	tb.authorize()
	resp, err := chromedp.Run(tb.ctx, chromedp.NavigateResponse(tb.base+path))
	if err != nil {
		tb.t.Fatalf("open %s: %v", path, err)
	}
	if resp == nil {
		tb.t.Fatalf("open %s: no response", path)
	}
	if resp.Status >= 400 {
		// The caller asserts the status; the console's note of it is no
		// error of the page.
		tb.expectFailure(tb.base + path)
	}
	return resp.Status
}

// authorize gives the tab the token cookie of its server, once, as the
// first ?token= link would (the view answers nothing without it), when the
// server made its own token.
func (tb *tab) authorize() {
	tb.t.Helper()
	tok := tb.f.tokenFor(tb.base)
	if tok == "" || tb.authed[tb.base] {
		return
	}
	_, err := chromedp.Run(tb.ctx, func(ctx context.Context, t *chromedp.Target) (cdp.Empty, error) {
		return cdp.Call(ctx, t, network.SetCookie, network.SetCookieParams{Name: "memsync_ui_token", Value: tok, URL: tb.base,
			Path: "/", HTTPOnly: new(true), SameSite: network.CookieSameSiteStrict})
	})
	if err != nil {
		tb.t.Fatalf("set the token cookie for %s: %v", tb.base, err)
	}
	tb.authed[tb.base] = true
}

// expectFailure tells the tab a request to url is meant to fail.
func (tb *tab) expectFailure(url string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.expected[url] = true
}

// mustOpen opens path and fails the test unless it answers 200.
func (tb *tab) mustOpen(path string) {
	tb.t.Helper()
	if status := tb.open(path); status != 200 {
		tb.t.Fatalf("open %s: HTTP %d, want 200; the page says:\n%s", path, status, tb.state().Text)
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func eval[T any](tb *tab, expr string, opts ...chromedp.EvaluateOption) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// memory is one element of class memory, as the DOM contract has it.
type memory struct {
	UUID  string `json:"uuid"`
	Group string `json:"group"`
	Agent string `json:"agent"`
	Text  string `json:"text"` // innerText; textContent in SVG (a node's title)
	HTML  string `json:"html"` // the .text element's innerHTML
}

// pageState is what a page shows, read in one evaluation.
type pageState struct {
	Page      string   `json:"page"`
	Viewer    string   `json:"viewer"`
	Source    string   `json:"source"`
	URL       string   `json:"url"`
	Text      string   `json:"text"` // the body's innerText
	Memories  []memory `json:"memories"`
	Links     []string `json:"links"`    // every a[href] (HTML and SVG), absolute
	GetForms  []string `json:"getForms"` // per GET form: its id and its fields, as a query string
	PostForms []struct {
		ID     string `json:"id"`
		Action string `json:"action"` // absolute
		As     string `json:"as"`     // its field as, if any
	} `json:"postForms"`
}

const stateJS = `(() => {
	const b = document.body;
	return {
		page: b.dataset.page || "", viewer: b.dataset.viewer || "", source: b.dataset.source || "",
		url: location.href, text: b.innerText,
		memories: [...document.querySelectorAll(".memory")].map(m => {
			const t = m.querySelector(".text");
			return {uuid: m.dataset.uuid || "", group: m.dataset.group || "", agent: m.dataset.agent || "",
				text: t ? (t.innerText ?? t.textContent) : "", html: t ? t.innerHTML : ""};
		}),
		links: [...document.querySelectorAll("a[href]")].map(a => new URL(a.getAttribute("href"), location.href).href),
		getForms: [...document.querySelectorAll("form")].filter(f => (f.getAttribute("method") || "get").toLowerCase() === "get")
			.map(f => (f.id || "form") + "?" + new URLSearchParams(new FormData(f)).toString()),
		postForms: [...document.querySelectorAll("form")].filter(f => (f.getAttribute("method") || "").toLowerCase() === "post")
			.map(f => ({id: f.id, action: f.action, as: new FormData(f).get("as") || ""})),
	};
})()`

// state reads the page's state.
func (tb *tab) state() pageState {
	tb.t.Helper()
	return eval[pageState](tb, stateJS)
}

// count is how many elements match a CSS selector.
func (tb *tab) count(selector string) int {
	tb.t.Helper()
	return eval[int](tb, "document.querySelectorAll("+jsString(selector)+").length")
}

// uuidsIn are the data-uuid of the .memory elements inside the elements a
// selector matches.
func (tb *tab) uuidsIn(selector string) []string {
	tb.t.Helper()
	return eval[[]string](tb, `[...document.querySelectorAll(`+jsString(selector)+`)].flatMap(s =>
		[...(s.matches(".memory") ? [s] : []), ...s.querySelectorAll(".memory")].map(m => m.dataset.uuid || ""))`)
}

// textOf is the innerText of the first element a selector matches, "" if
// none does.
func (tb *tab) textOf(selector string) string {
	tb.t.Helper()
	return eval[string](tb, `(document.querySelector(`+jsString(selector)+`) || {innerText: ""}).innerText`)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return `"` + r.Replace(s) + `"`
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// screenshot saves a full-page PNG of the tab as NAME.png under the
// fixture's screenshot directory (prefixed with the test's name); with
// -update and docs set, also as docs/ui/NAME.png.
func (tb *tab) screenshot(name string, docs bool) {
	tb.t.Helper()
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	base := tb.t.Name()
	if !strings.HasSuffix(base, "/"+name) {
		base += "-" + name
	}
	file := filepath.Join(tb.f.shots, unsafeName.ReplaceAllString(base, "_")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", file)
	if docs && *update {
		tb.docsScreenshot(name)
	}
}

// docsHeight is the most of a page the README's screenshots show.
const docsHeight = 900

// docsScreenshot writes docs/ui/NAME.png: the page's top, 1280 px wide and
// at most docsHeight high, so the README's images stay small.
func (tb *tab) docsScreenshot(name string) {
	tb.t.Helper()
	height := min(eval[float64](tb, "document.documentElement.scrollHeight"), docsHeight)
	width := eval[float64](tb, "document.documentElement.clientWidth")
	png, err := chromedp.Run(tb.ctx, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		res, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: new(true),
			Clip: &page.Viewport{Width: width, Height: height, Scale: 1},
		})
		return res.Data, err
	})
	if err != nil {
		tb.t.Fatalf("screenshot %s for docs/ui: %v", name, err)
	}
	dir := filepath.Join(tb.f.root, "docs", "ui")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}
