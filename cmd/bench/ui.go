package main

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/packet"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/webui"
)

// uiRequests is how many requests each page gets per run of the ui
// figure (the cold fleet page, which reads every journal, gets a few).
const (
	uiRequests     = 60
	uiColdRequests = 5
)

// uiPage is one page of the ui figure and the requests it gets.
type uiPage struct {
	name    string
	cold    bool // served by the server whose fleet status is never reused
	targets []string
	// engine, when set, is the engine call alone that the page makes,
	// timed on the daemon's graph right after each of the page's run --ui
	// requests (A/B pairs back to back), so that the page's own cost
	// shows beside it under the same load.
	engine func(ctx context.Context, i int) error
}

// measureUI is the ui figure: each page of the web view at the search
// corpus's size (100,000 memories; the harness's corpus, written as
// journals and projected into the embedded store), served by webui's
// real handler on loopback (httptest.NewServer) and asked over HTTP with
// the token, p50/p95 per page, in turn with
// the store opened read-only per request (as the read commands do), kept
// open read-only (as `memsync ui` reads) and the daemon's own graph (as
// `memsync run --ui` reads). Half the requests are the operator's, half
// ?as= an agent. It writes its own table to w.
func (b *bench) measureUI(ctx context.Context, w io.Writer) error {
	o := b.opts
	root := filepath.Join(b.tmp, "ui")
	dir := filepath.Join(root, ".memsync")
	b.logf("ui: writing and projecting %s memories (embedded)", thousands(float64(o.searchCorpus)))
	if err := writeJournals(root, newGenerator(o.seed, o.agents, true), o.searchCorpus); err != nil {
		return fmt.Errorf("ui: write journals: %w", err)
	}
	mems := newGenerator(o.seed, o.agents, true).take(o.searchCorpus)
	g, err := embedded.Open(dir, zap.NewNop())
	if err != nil {
		return fmt.Errorf("ui: open store: %w", err)
	}
	defer g.Close()
	if err := loadCorpus(ctx, g, mems); err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	if err := g.Flush(ctx); err != nil {
		return fmt.Errorf("ui: flush: %w", err)
	}
	now := mems[len(mems)-1].TS.Add(time.Hour)
	agents := agentNames(o.agents)
	fleet := func(ctx context.Context) (webui.Fleet, error) {
		rep, err := memsync.Status(ctx, root, g, "embedded", now)
		return webui.Fleet{Report: rep}, err
	}
	perRequest := func(ctx context.Context) *read.Reader {
		rg, err := embedded.OpenReadOnly(dir, zap.NewNop())
		if err != nil {
			return read.New(g, nil, nil)
		}
		return read.New(rg, nil, func() { rg.Close() })
	}
	ro, err := embedded.OpenReadOnly(dir, zap.NewNop())
	if err != nil {
		return fmt.Errorf("ui: open read-only: %w", err)
	}
	defer ro.Close()
	kept := func(context.Context) *read.Reader { return read.New(ro, nil, nil) }
	held := func(context.Context) *read.Reader { return read.New(g, nil, nil) }
	servers := map[string]*webui.Server{}
	modes := []struct {
		name string
		open func(context.Context) *read.Reader
		ttl  time.Duration
	}{{"open per request", perRequest, 0}, {"ui", kept, 0}, {"run --ui", held, 0}, {"ui cold", kept, -1}}
	newServer := func(mode string) (*webui.Server, error) {
		for _, s := range modes {
			if s.name == mode {
				return webui.New(webui.Config{Repo: root, Open: s.open, Fleet: fleet, FleetTTL: s.ttl, Token: benchUIToken, Now: func() time.Time { return now }})
			}
		}
		return nil, fmt.Errorf("ui: no mode %q", mode)
	}
	for _, s := range modes {
		srv, err := newServer(s.name)
		if err != nil {
			return err
		}
		servers[s.name] = srv
	}

	rng := rand.New(rand.NewSource(o.seed + 29))
	queries := searchQueries(o.seed+1, uiRequests, agents)
	pick := func() string { return mems[rng.Intn(len(mems))].UUID }
	as := func(i int, path string) string {
		if i%2 == 0 {
			return path
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		return path + sep + "as=" + agents[i/2%len(agents)]
	}
	groups := func(i int) []string {
		if i%2 == 0 {
			return append([]string{journal.SharedGroup}, privateGroups(agents)...)
		}
		return queries[i].Groups
	}
	rankAlone := func(ctx context.Context, i int) error {
		q := memsync.SearchQuery{Text: queries[i].Text, Groups: groups(i), Limit: 20}
		_, err := read.Rank(ctx, g, memsync.RankQuery{SearchQuery: q, Clock: memsync.Present(now)})
		return err
	}
	packetAlone := func(ctx context.Context, i int) error {
		_, err := packet.BuildPacket(ctx, g, packet.Request{Role: packet.Roles[i%len(packet.Roles)], Agent: agents[i%len(agents)], Goal: queries[i].Text, AsOf: now})
		return err
	}
	pages := []uiPage{{name: "fleet"}, {name: "fleet (status read)", cold: true}, {name: "agent"}, {name: "search", engine: rankAlone},
		{name: "memory"}, {name: "graph"}, {name: "graph entity"}, {name: "packet", engine: packetAlone},
		{name: "timeline"}, {name: "timeline (review, by author)"}, {name: "queue"}, {name: "entities"}}
	if o.uiPages != nil {
		pages = slices.DeleteFunc(pages, func(p uiPage) bool { return !o.uiPages[p.name] })
	}
	for i := 0; i < uiRequests; i++ {
		q := url.QueryEscape(queries[i].Text)
		a := agents[i%len(agents)]
		for j := range pages {
			var t string
			switch pages[j].name {
			case "fleet":
				t = "/"
			case "fleet (status read)":
				if i >= uiColdRequests {
					continue
				}
				t = "/"
			case "agent":
				t = "/agents/" + a
			case "search":
				t = "/search?q=" + q
			case "memory":
				t = "/memory/" + pick()
			case "graph":
				t = "/graph/" + pick()
			case "graph entity":
				t = "/graph/entity/" + url.PathEscape(entityPool[rng.Intn(len(entityPool))])
			case "packet":
				t = "/packet?role=" + string(packet.Roles[i%len(packet.Roles)]) + "&goal=" + q + "&agent=" + a
			case "timeline":
				t = "/timeline"
			case "timeline (review, by author)":
				t = "/timeline?since=30d&status=review&author=" + a
			case "queue":
				t = "/queue"
			case "entities":
				t = "/entities"
			}
			pages[j].targets = append(pages[j].targets, as(i, t))
		}
	}
	// Each server listens on loopback as `memsync ui` does and is asked
	// over HTTP with the token, so each figure holds the whole request:
	// the connection, the handler and the body read to its end.
	urls := map[*webui.Server]string{}
	listen := func(srv *webui.Server) func() {
		hs := httptest.NewServer(srv)
		urls[srv] = hs.URL
		return hs.Close
	}
	for _, srv := range servers {
		defer listen(srv)()
	}

	client := &http.Client{Timeout: time.Minute}
	serve := func(srv *webui.Server, target string) (float64, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", urls[srv]+target, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+benchUIToken)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("GET %s: %w", target, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ms := float64(time.Since(start)) / float64(time.Millisecond)
		if err != nil {
			return 0, fmt.Errorf("GET %s: read body: %w", target, err)
		}
		// A memory an agent may not see is a 404 by design.
		if resp.StatusCode != http.StatusOK && !(resp.StatusCode == http.StatusNotFound && strings.Contains(target, "as=")) {
			return 0, fmt.Errorf("GET %s: %d", target, resp.StatusCode)
		}
		return ms, nil
	}
	// firstViews is the slowest first request of each viewer of a page on
	// a new server of mode: the page read with every per-viewer summary
	// cold (webui.SummaryTTL), as after a start or once a minute.
	firstViews := func(mode string, targets []string) (float64, error) {
		srv, err := newServer(mode)
		if err != nil {
			return 0, err
		}
		defer listen(srv)()
		worst, viewers := 0.0, map[string]bool{}
		for _, t := range targets {
			u, err := url.Parse(t)
			if err != nil {
				return 0, err
			}
			if v := u.Query().Get("as"); !viewers[v] {
				viewers[v] = true
				ms, err := serve(srv, t)
				if err != nil {
					return 0, err
				}
				worst = max(worst, ms)
			}
		}
		return worst, nil
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile + "-ui.pprof")
		if err != nil {
			return fmt.Errorf("ui: %w", err)
		}
		defer stop()
	}
	b.logf("ui: load average before %s", loadAverage())
	fmt.Fprintf(w, "\n### ui: each page at %s memories (embedded store, over loopback HTTP with the token; %s per page per run, half ?as=; in brackets the slowest first request of a viewer on a new server, every per-viewer summary cold)\n\n",
		thousands(float64(o.searchCorpus)), plural(uiRequests, "request"))
	fmt.Fprintln(w, "| page | store opened per request p50 / p95 ms | memsync ui (read-only store kept) p50 / p95 ms | run --ui (the daemon's graph) p50 / p95 ms | its engine call alone p50 / p95 ms (paired with run --ui) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, p := range pages {
		var cells []string
		alone := "–"
		for _, mode := range []string{"open per request", "ui", "run --ui"} {
			srv := servers[mode]
			paired := p.engine != nil && mode == "run --ui"
			if p.cold {
				srv = servers["ui cold"]
				if mode != "ui" {
					cells = append(cells, "–")
					continue
				}
			}
			cold := "–"
			if !p.cold {
				ms, err := firstViews(mode, p.targets)
				if err != nil {
					return fmt.Errorf("ui %s first views: %w", p.name, err)
				}
				cold = millis(ms)
				b.logf("ui %s (%s) first view per viewer: max %s ms", p.name, mode, cold)
			}
			// Warm the page (templates, page cache) for every viewer,
			// then the runs.
			warmed := map[string]bool{}
			for _, t := range p.targets {
				if u, err := url.Parse(t); err == nil && !warmed[u.Query().Get("as")] {
					warmed[u.Query().Get("as")] = true
					if _, err := serve(srv, t); err != nil {
						return fmt.Errorf("ui %s: %w", p.name, err)
					}
				}
			}
			var p50s, p95s, a50s, a95s []float64
			for run := 0; run < o.runs; run++ {
				lat := make([]float64, 0, len(p.targets))
				var eng []float64
				for i, t := range p.targets {
					ms, err := serve(srv, t)
					if err != nil {
						return fmt.Errorf("ui %s: %w", p.name, err)
					}
					lat = append(lat, ms)
					if paired {
						start := time.Now()
						if err := p.engine(ctx, i); err != nil {
							return fmt.Errorf("ui %s alone: %w", p.name, err)
						}
						eng = append(eng, float64(time.Since(start))/float64(time.Millisecond))
					}
				}
				p50s, p95s = append(p50s, percentile(lat, 50)), append(p95s, percentile(lat, 95))
				b.logf("ui %s (%s) run %d: p50 %s ms, p95 %s ms, max %s ms", p.name, mode, run+1,
					millis(percentile(lat, 50)), millis(percentile(lat, 95)), millis(percentile(lat, 100)))
				if paired {
					a50s, a95s = append(a50s, percentile(eng, 50)), append(a95s, percentile(eng, 95))
					b.logf("ui %s engine alone run %d: p50 %s ms, p95 %s ms", p.name, run+1, millis(percentile(eng, 50)), millis(percentile(eng, 95)))
				}
			}
			cells = append(cells, millis(percentile(p50s, 50))+" / "+millis(percentile(p95s, 50))+" (first view "+cold+")")
			if paired {
				alone = millis(percentile(a50s, 50)) + " / " + millis(percentile(a95s, 50))
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", p.name, strings.Join(cells, " | "), alone)
	}
	fmt.Fprintf(w, "\nload average after: %s; median of %s\n", loadAverage(), plural(o.runs, "run"))
	return os.RemoveAll(root)
}

// privateGroups is each agent's private group.
func privateGroups(agents []string) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = journal.PrivateGroup(a)
	}
	return out
}

// benchUIToken is the bench's web view token (the view answers no request
// without one).
const benchUIToken = "bench-ui-token"
