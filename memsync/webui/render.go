package webui

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// pageNames are the pages, each a template under templates/.
var pageNames = []string{"fleet", "agent", "search", "memory", "graph", "packet", "timeline", "queue", "entities", "notfound", "error"}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name+".html").Funcs(template.FuncMap{
			"f2": func(v float64) string { return fmt.Sprintf("%.2f", v) },
			"f4": func(v float64) string { return fmt.Sprintf("%.4f", v) },
		}).ParseFS(assets, "templates/base.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("webui: parse %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// page is what every template gets: the body's data attributes, the
// navigation and the page's own data.
type page struct {
	Name    string // data-page
	Title   string
	Viewer  string // data-viewer
	As      string
	Source  string // data-source: graph or journals
	Reason  string // why the journals answered
	Refresh int    // seconds; 0: no auto-refresh
	Views   []link // the same page through other eyes
	CSRF    string
	Body    any
	v       viewer
}

// link is one anchor.
type link struct {
	Label, Href string
	Current     bool
}

// URL is path with the query kv (pairs) and the viewer's ?as=, so that
// every link keeps whose eyes the person looks with.
func (p *page) URL(path string, kv ...string) string {
	return urlAs(p.As, path, kv...)
}

func urlAs(as, path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if as != "" {
		q.Set("as", as)
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// newPage starts a page for request r seen by v.
func (s *Server) newPage(r *http.Request, name, title string, v viewer) *page {
	p := &page{Name: name, Title: title, Viewer: v.label(), As: v.As, Source: "graph", CSRF: s.csrf, v: v}
	q := r.URL.Query()
	add := func(label, as string) {
		q.Del("as")
		if as != "" {
			q.Set("as", as)
		}
		href := r.URL.EscapedPath()
		if e := q.Encode(); e != "" {
			href += "?" + e
		}
		p.Views = append(p.Views, link{Label: label, Href: href, Current: as == v.As})
	}
	add("operator", "")
	for _, a := range v.Agents {
		add(a, a)
	}
	return p
}

// render writes page p with status code.
func (s *Server) render(w http.ResponseWriter, code int, p *page) {
	var b bytes.Buffer
	if err := s.pages[p.Name].ExecuteTemplate(&b, "base", p); err != nil {
		s.lg.Error("render page", zap.String("page", p.Name), zap.Error(err))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// notFound is the one 404 page: an unknown uuid and one the viewer may
// not see give the same bytes.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request, what string) {
	v, _ := s.viewerOf(r)
	v.As = r.URL.Query().Get("as")
	p := s.newPage(r, "notfound", "not found", v)
	p.Body = what
	s.render(w, http.StatusNotFound, p)
}

// fail answers a read that could not be made.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, v viewer, err error) {
	s.lg.Error("web view read failed", zap.String("path", r.URL.Path), zap.Error(err))
	p := s.newPage(r, "error", "error", v)
	p.Body = err.Error()
	s.render(w, http.StatusInternalServerError, p)
}

// memView is one memory as every page renders it (class memory).
type memView struct {
	UUID, Group, Agent, Kind, TS, Text, Status string
	Importance, Confidence                     float64
	Scored                                     bool
	Href                                       string
	Extra                                      string // a short note (why it is listed)
	StatusWhy                                  string // score's reason for a status other than active
	// About is the memory a feedback or outcome record judges, as far as
	// the viewer may see it (annotate), so its text shows, not its uuid.
	About  *memView
	target string
}

func (p *page) mem(n *memsync.Node) memView {
	g := n.GroupID
	if g == "" {
		g = n.Record.GroupID()
	}
	m := memView{UUID: n.UUID, Group: g, Agent: n.Agent, Kind: string(n.Kind), TS: n.TS.UTC().Format(time.RFC3339),
		Text: n.Text, Href: p.URL("/memory/" + url.PathEscape(n.UUID))}
	if (n.Kind == journal.KindFeedback || n.Kind == journal.KindOutcome) && len(n.Links) > 0 {
		m.target = n.Links[0]
	}
	return m
}

// annotate sets About on the feedback and outcome records of lists: the
// text of the memory each judges, when the viewer may see it.
func (p *page) annotate(ctx context.Context, sr memsync.Searcher, lists ...[]memView) error {
	var ids []string
	for _, l := range lists {
		for _, m := range l {
			if m.target != "" {
				ids = append(ids, m.target)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	got, err := sr.Get(ctx, ids)
	if err != nil {
		return fmt.Errorf("read the memories feedback judges: %w", err)
	}
	for _, l := range lists {
		for i := range l {
			if n, ok := got[l[i].target]; ok && p.v.sees(n.Record.GroupID()) {
				about := p.mem(&n)
				about.Text = short(about.Text, 160)
				l[i].About = &about
			}
		}
	}
	return nil
}

func (p *page) scored(s *memsync.Scored) memView {
	m := p.mem(&s.Node)
	m.Status, m.Importance, m.Confidence, m.Scored = string(s.Result.Status), s.Result.Importance, s.Result.Confidence, true
	m.StatusWhy = s.Result.StatusWhy
	return m
}

// short is text cut to n runes on one line.
func short(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	return string(r[:n-1]) + "…"
}
