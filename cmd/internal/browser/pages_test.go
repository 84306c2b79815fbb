package browser

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPages opens every page in the operator's view (no ?as=) and asserts
// on what it shows: the DOM contract's elements, and the seeded memories
// where the page's question puts them. With -update its screenshots are
// the README's (docs/ui/PAGE.png).
func TestPages(t *testing.T) {
	f := setup(t)
	t.Parallel()
	commit, err := f.run(f.repo, "git", "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	commit = strings.TrimSpace(commit)
	for _, tc := range []struct {
		name  string // also the screenshot's
		path  string
		page  string
		check func(t *testing.T, tb *tab, st pageState)
	}{
		{"fleet", "/", "fleet", func(t *testing.T, tb *tab, st pageState) {
			rows := eval[[]string](tb, `[...document.querySelectorAll("table#fleet tr.agent")].map(r => r.dataset.agent)`)
			for _, a := range agents {
				if !slices.Contains(rows, a) {
					t.Errorf("table#fleet rows %v: no tr.agent[data-agent=%s]", rows, a)
				}
			}
			if tb.count("#health") != 1 {
				t.Errorf("no #health")
			}
			if tb.count("a.agent-link") == 0 {
				t.Errorf("no a.agent-link")
			}
		}},
		{"agent", "/agents/planner", "agent", func(t *testing.T, tb *tab, st pageState) {
			for _, id := range []string{"core", "newest", "review", "waiting", "promotions"} {
				if tb.count("#"+id) != 1 {
					t.Errorf("no section #%s", id)
				}
			}
			wantIn(t, "#core", tb.uuidsIn("#core"), f.uuid(t, "core"))
			wantIn(t, "#newest", tb.uuidsIn("#newest"), f.uuid(t, "new"))
			wantIn(t, "#review", tb.uuidsIn("#review"), f.uuid(t, "stale"))
			waiting := tb.uuidsIn("#waiting")
			wantIn(t, "#waiting", waiting, f.uuid(t, "decision-open"))
			wantOut(t, "#waiting (its outcome is journaled)", waiting, f.uuid(t, "decision-done"))
		}},
		{"search", "/search?q=postgres", "search", func(t *testing.T, tb *tab, st pageState) {
			searchForm(t, tb)
			if got := eval[string](tb, `document.querySelector("form#search input[name=q]").value`); got != "postgres" {
				t.Errorf("input[name=q] = %q, want the query", got)
			}
			hits := tb.uuidsIn("ol#hits > li.memory")
			wantIn(t, "hits", hits, f.uuid(t, "decision-open"))
			wantIn(t, "hits", hits, f.uuid(t, "link"))
			hitLinks(t, tb, f)
		}},
		{"memory", "/memory/" + f.uuid(t, "fact"), "memory", func(t *testing.T, tb *tab, st pageState) {
			fact := f.uuid(t, "fact")
			if got := eval[string](tb, `(document.querySelector("#record.memory") || {dataset: {}}).dataset.uuid || ""`); got != fact {
				t.Errorf("#record.memory data-uuid %q, want %s", got, fact)
			}
			if got := tb.textOf("#record .text"); !strings.Contains(got, "listens on port 8443") {
				t.Errorf("#record .text %q, want the record's text", got)
			}
			where := tb.textOf("#where")
			if !strings.Contains(where, "agents/coder/memory/journal/") || !strings.Contains(where, ".jsonl:") {
				t.Errorf("#where %q: want the journal's file:line", where)
			}
			if !strings.Contains(where, commit[:7]) {
				t.Errorf("#where %q: want the commit %s", where, commit[:7])
			}
			wantEdge(t, tb, "support", "in", f.uuid(t, "support"))
			wantEdge(t, tb, "conflict", "in", f.uuid(t, "conflict"))
			if tb.count("svg#history") != 1 {
				t.Errorf("no svg#history")
			}
			explainEvents(t, f, tb, "coder", fact, false)
			flagForm(t, tb, fact)
		}},
		{"memory-replaced", "/memory/" + f.uuid(t, "old"), "memory", func(t *testing.T, tb *tab, st pageState) {
			wantEdge(t, tb, "supersede", "in", f.uuid(t, "new"))
		}},
		{"memory-replacement", "/memory/" + f.uuid(t, "new"), "memory", func(t *testing.T, tb *tab, st pageState) {
			wantEdge(t, tb, "supersede", "out", f.uuid(t, "old"))
		}},
		{"memory-decided", "/memory/" + f.uuid(t, "decision-done"), "memory", func(t *testing.T, tb *tab, st pageState) {
			wantEdge(t, tb, "", "in", f.uuid(t, "outcome"))
		}},
		{"graph", "/graph/" + f.uuid(t, "fact"), "graph", func(t *testing.T, tb *tab, st pageState) {
			nodes := eval[[]string](tb, `[...document.querySelectorAll("svg#graph g.node[data-uuid]")].map(n => n.dataset.uuid)`)
			for _, name := range []string{"fact", "support", "conflict", "critic-private"} {
				wantIn(t, "g.node", nodes, f.uuid(t, name))
			}
			types := strings.ToLower(strings.Join(eval[[]string](tb, `[...document.querySelectorAll("svg#graph .edge[data-type]")].map(e => e.dataset.type)`), " "))
			for _, typ := range []string{"support", "conflict"} {
				if !strings.Contains(types, typ) {
					t.Errorf("svg#graph edge types %q: no %s edge", types, typ)
				}
			}
		}},
		{"graph-decision", "/graph/" + f.uuid(t, "decision-open"), "graph", func(t *testing.T, tb *tab, st pageState) {
			if tb.count("svg#graph") != 1 {
				t.Fatalf("no svg#graph")
			}
			nodes := eval[[]string](tb, `[...document.querySelectorAll("svg#graph g.node[data-uuid]")].map(n => n.dataset.uuid)`)
			for _, name := range []string{"decision-open", "link", "planner-private"} {
				wantIn(t, "g.node", nodes, f.uuid(t, name))
			}
			types := eval[[]string](tb, `[...document.querySelectorAll("svg#graph .edge[data-type]")].map(e => e.dataset.type)`)
			if len(types) < 2 {
				t.Errorf("svg#graph edges %v: want the two links to the decision at least", types)
			}
		}},
		{"graph-two-hops", "/graph/" + f.uuid(t, "link"), "graph", func(t *testing.T, tb *tab, st pageState) {
			nodes := eval[[]string](tb, `[...document.querySelectorAll("svg#graph g.node[data-uuid]")].map(n => n.dataset.uuid)`)
			// link → decision-open ← planner-private: the private note is two hops away.
			for _, name := range []string{"link", "decision-open", "planner-private"} {
				wantIn(t, "g.node", nodes, f.uuid(t, name))
			}
		}},
		{"graph-entity", "/graph/entity/" + url.PathEscape("#postgres"), "graph", func(t *testing.T, tb *tab, st pageState) {
			if n := tb.count(`svg#graph g.node.entity[data-entity="#postgres"]`); n != 1 {
				t.Errorf("%d entity nodes for #postgres, want 1", n)
			}
			nodes := eval[[]string](tb, `[...document.querySelectorAll("svg#graph g.node[data-uuid]")].map(n => n.dataset.uuid)`)
			for _, name := range []string{"decision-open", "link", "planner-private"} {
				wantIn(t, "g.node", nodes, f.uuid(t, name))
			}
		}},
		{"entities", "/entities", "entities", func(t *testing.T, tb *tab, st pageState) {
			rows := eval[[]string](tb, `[...document.querySelectorAll("table#entities tr.entity")].map(r => r.dataset.entity)`)
			if !slices.Contains(rows, "#postgres") {
				t.Errorf("table#entities rows %v: no #postgres", rows)
			}
			if tb.count(`tr.entity[data-entity="#postgres"] a[href^="/graph/entity/"]`) != 1 {
				t.Errorf("#postgres does not link to its graph (its memories)")
			}
		}},
		{"packet", "/packet?role=planner&goal=" + url.QueryEscape("choose the database for the billing service"), "packet", func(t *testing.T, tb *tab, st pageState) {
			if tb.count("form#packet select[name=role]") != 1 || tb.count("form#packet input[name=goal]") != 1 {
				t.Errorf("form#packet lacks select[name=role] or input[name=goal]")
			}
			if n := tb.count("#packet .memory"); n == 0 {
				t.Errorf("#packet has no .memory items")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := f.newTab(t)
			tb.mustOpen(tc.path)
			st := tb.state()
			if st.Page != tc.page || st.Viewer != "operator" || (st.Source != "graph" && st.Source != "journals") {
				t.Errorf("body data-page %q data-viewer %q data-source %q; want %s, operator, graph or journals", st.Page, st.Viewer, st.Source, tc.page)
			}
			for _, id := range []string{"nav-fleet", "nav-search", "nav-packet"} {
				if tb.count("a#"+id) != 1 {
					t.Errorf("no a#%s", id)
				}
			}
			for _, m := range st.Memories {
				if m.Group == "" || m.Agent == "" {
					t.Errorf("memory %s: data-group %q data-agent %q; the operator's view labels every memory with its group", m.UUID, m.Group, m.Agent)
				}
			}
			linksWork(t, f, st)
			tc.check(t, tb, st)
			tb.screenshot(tc.name, !strings.Contains(tc.name, "-"))
		})
	}
}

// TestSearchFilters: the search form's kind filter keeps only that kind,
// and a query nothing matches says so in p#no-hits.
func TestSearchFilters(t *testing.T) {
	f := setup(t)
	t.Parallel()
	tb := f.newTab(t)
	tb.mustOpen("/search?q=billing")
	if hits := tb.uuidsIn("ol#hits > li.memory"); !slices.Contains(hits, f.uuid(t, "fact")) {
		t.Fatalf("billing hits %v: want the fact %s among them, or the kind filter below proves nothing", hits, f.uuid(t, "fact"))
	}
	tb.mustOpen("/search?q=billing&kind=decision")
	hits := tb.uuidsIn("ol#hits > li.memory")
	wantIn(t, "kind=decision hits", hits, f.uuid(t, "decision-open"))
	for _, h := range hits {
		if h != f.uuid(t, "decision-open") && h != f.uuid(t, "decision-done") {
			t.Errorf("kind=decision: hit %s is not a decision", h)
		}
	}
	if got := eval[string](tb, `document.querySelector("form#search select[name=kind]").value`); got != "decision" {
		t.Errorf("select[name=kind] = %q after a kind=decision search, want decision", got)
	}
	tb.screenshot("kind-decision", false)

	// since=130h: the conflict (4 days old) is in, the fact (6 days) out.
	tb.mustOpen("/search?q=" + url.QueryEscape("billing service port") + "&since=130h")
	hits = tb.uuidsIn("ol#hits > li.memory")
	wantIn(t, "since=130h hits", hits, f.uuid(t, "conflict"))
	wantOut(t, "since=130h hits", hits, f.uuid(t, "fact"))
	tb.screenshot("since", false)

	tb.mustOpen("/search?q=" + url.QueryEscape("zeppelin xylophone"))
	if tb.count("p#no-hits") != 1 || tb.count("ol#hits > li") != 0 {
		t.Errorf("a query nothing matches: want p#no-hits and no hits; the page says:\n%s", tb.state().Text)
	}
	tb.screenshot("no-hits", false)
}

// searchForm checks form#search has the contract's fields.
func searchForm(t *testing.T, tb *tab) {
	t.Helper()
	if m := eval[string](tb, `document.querySelector("form#search")?.getAttribute("method") || "get"`); !strings.EqualFold(m, "get") {
		t.Errorf("form#search method %q, want GET", m)
	}
	for _, sel := range []string{"input[name=q]", "select[name=kind]", "select[name=status]", "input[name=since]", "button[type=submit]"} {
		if tb.count("form#search "+sel) != 1 {
			t.Errorf("form#search has no %s", sel)
		}
	}
}

// hitLinks checks each hit has a.open to its memory page and .factors.
func hitLinks(t *testing.T, tb *tab, f *fixture) {
	t.Helper()
	type hit struct {
		UUID    string `json:"uuid"`
		Open    string `json:"open"`
		Factors string `json:"factors"`
	}
	hits := eval[[]hit](tb, `[...document.querySelectorAll("ol#hits > li.memory")].map(h => ({uuid: h.dataset.uuid,
		open: (h.querySelector("a.open") || {}).href || "", factors: (h.querySelector(".factors") || {}).innerText || ""}))`)
	if len(hits) == 0 {
		t.Fatalf("no hits")
	}
	for _, h := range hits {
		if u, err := url.Parse(h.Open); err != nil || u.Path != "/memory/"+h.UUID {
			t.Errorf("hit %s: a.open %q, want its memory page", h.UUID, h.Open)
		}
		if strings.TrimSpace(h.Factors) == "" {
			t.Errorf("hit %s: empty .factors", h.UUID)
		}
	}
}

// flagForm checks form#flag has the contract's fields and posts to the
// memory's flag URL.
func flagForm(t *testing.T, tb *tab, uuid string) {
	t.Helper()
	type form struct {
		Method  string   `json:"method"`
		Action  string   `json:"action"`
		CSRF    string   `json:"csrf"`
		Buttons []string `json:"buttons"`
		By      int      `json:"by"`
		Note    int      `json:"note"`
	}
	got := eval[form](tb, `(() => { const f = document.querySelector("form#flag"); if (!f) return {buttons: []};
		return {method: f.getAttribute("method") || "", action: f.action,
			csrf: (f.querySelector("input[type=hidden][name=csrf]") || {}).value || "",
			buttons: [...f.querySelectorAll("button[name=flag]")].map(b => b.value),
			by: f.querySelectorAll("input[name=by]").length, note: f.querySelectorAll("input[name=note]").length}; })()`)
	if !strings.EqualFold(got.Method, "post") {
		t.Errorf("form#flag method %q, want POST", got.Method)
	}
	if u, err := url.Parse(got.Action); err != nil || u.Path != "/memory/"+uuid+"/flag" {
		t.Errorf("form#flag action %q, want /memory/%s/flag", got.Action, uuid)
	}
	if got.CSRF == "" {
		t.Errorf("form#flag has no hidden input[name=csrf] with a value")
	}
	if got.By != 1 || got.Note != 1 {
		t.Errorf("form#flag: %d input[name=by], %d input[name=note]; want one each", got.By, got.Note)
	}
	slices.Sort(got.Buttons)
	if want := []string{"important", "unimportant", "verified", "wrong"}; !slices.Equal(got.Buttons, want) {
		t.Errorf("form#flag buttons %v, want %v", got.Buttons, want)
	}
}

// wantEdge checks #edges has an li.edge in direction dir whose data-type
// holds typ (case-insensitive; "" is any type) and that names the other
// memory's uuid.
func wantEdge(t *testing.T, tb *tab, typ, dir, other string) {
	t.Helper()
	type edge struct {
		Type string `json:"type"`
		Dir  string `json:"dir"`
		HTML string `json:"html"`
	}
	edges := eval[[]edge](tb, `[...document.querySelectorAll("#edges li.edge")].map(e => ({type: e.dataset.type || "", dir: e.dataset.dir || "", html: e.outerHTML}))`)
	for _, e := range edges {
		if e.Dir == dir && strings.Contains(strings.ToLower(e.Type), typ) && strings.Contains(e.HTML, other) {
			return
		}
	}
	var seen []string
	for _, e := range edges {
		seen = append(seen, e.Type+"/"+e.Dir)
	}
	t.Errorf("#edges %v: no li.edge[data-type~%q][data-dir=%s] naming %s", seen, typ, dir, other)
}

func wantIn(t *testing.T, where string, got []string, uuid string) {
	t.Helper()
	if !slices.Contains(got, uuid) {
		t.Errorf("%s %v: want %s in it", where, got, uuid)
	}
}

func wantOut(t *testing.T, where string, got []string, uuid string) {
	t.Helper()
	if slices.Contains(got, uuid) {
		t.Errorf("%s: %s must not be in it", where, uuid)
	}
}

// explainEvents checks the memory page lists as many events as `memsync
// explain --agent agent` gives for the memory (the chart is drawn from
// them); same, for a page seen as that agent, also the same events in the
// same order (the operator's page names records the agent may not see).
func explainEvents(t *testing.T, f *fixture, tb *tab, agent, uuid string, same bool) {
	t.Helper()
	out, err := f.memsync("explain", "--repo", f.repo, "--agent", agent, "--json", uuid)
	if err != nil {
		t.Fatal(err)
	}
	var ex struct {
		Events []struct {
			UUID   string `json:"uuid"`
			Kind   string `json:"kind"`
			Effect string `json:"effect"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatalf("explain --json: %v\n%s", err, out)
	}
	if len(ex.Events) == 0 {
		t.Fatalf("explain gives %s no events: the check proves nothing", uuid)
	}
	page := eval[[]string](tb, `[...document.querySelectorAll("ol#events li.event")].map(e => e.innerText)`)
	if len(page) != len(ex.Events) {
		t.Fatalf("ol#events has %d events %q, explain %d", len(page), page, len(ex.Events))
	}
	for i, e := range ex.Events {
		if !same {
			break
		}
		if !strings.Contains(page[i], e.Effect) || !strings.Contains(page[i], e.UUID) {
			t.Errorf("event %d: the page says %q, explain %s %s (%s)", i, page[i], e.Kind, e.Effect, e.UUID)
		}
	}
}

// TestPacketForm: the packet form, filled in the browser (role, agent,
// goal), builds the packet `memsync packet` builds for the same request:
// the same memories in each section.
func TestPacketForm(t *testing.T) {
	f := setup(t)
	t.Parallel()
	const role, agent, goal = "critic", "critic", "review the billing service port"
	tb := f.newTab(t)
	tb.mustOpen("/packet")
	if err := chromedp.Do(tb.ctx,
		chromedp.SetValue(chromedp.CSS("form#packet select[name=role]"), role),
		chromedp.SetValue(chromedp.CSS("form#packet select[name=agent]"), agent),
		chromedp.SendKeys(chromedp.CSS("form#packet input[name=goal]"), goal),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.CSS("form#packet button[type=submit]"))); err != nil {
		t.Fatalf("build the packet: %v", err)
	}
	st := tb.state()
	if u, _ := url.Parse(st.URL); u == nil || u.Query().Get("role") != role || u.Query().Get("goal") != goal {
		t.Errorf("the form led to %s, want role=%s and the goal in the URL a person can share", st.URL, role)
	}
	out, err := f.memsync("packet", "--repo", f.repo, "--role", role, "--agent", agent, "--goal", goal, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var pk map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &pk); err != nil {
		t.Fatalf("packet --json: %v\n%s", err, out)
	}
	var want []string
	for _, section := range []string{"core", "hard_constraints", "procedures_to_follow", "pitfalls_to_avoid", "relevant_facts", "open_questions"} {
		var items []struct{ UUID string }
		if err := json.Unmarshal(pk[section], &items); err != nil {
			t.Fatalf("packet --json %s: %v", section, err)
		}
		for _, it := range items {
			if it.UUID != "" && !slices.Contains(want, it.UUID) {
				want = append(want, it.UUID)
			}
		}
	}
	var got []string
	for _, u := range tb.uuidsIn("#packet") {
		if !slices.Contains(got, u) {
			got = append(got, u)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("#packet holds %v, memsync packet %v", got, want)
	}
	tb.screenshot("packet", false)
}

// TestSearchMatchesCLI: the search page ranks as `memsync search` does for
// the same agent and query: the same hits in the same order.
func TestSearchMatchesCLI(t *testing.T) {
	f := setup(t)
	t.Parallel()
	tb := f.newTab(t)
	for _, q := range []string{"billing", "billing service port", "postgres"} {
		out, err := f.memsync("search", "--repo", f.repo, "--agent", viewer, "--json", "--limit", "20", q)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Results []struct{ UUID string }
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("search --json: %v\n%s", err, out)
		}
		var want []string
		for _, r := range res.Results {
			want = append(want, r.UUID)
		}
		tb.mustOpen(withAs("/search?q="+url.QueryEscape(q), viewer))
		if got := tb.uuidsIn("ol#hits > li.memory"); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%q as %s: the page ranks\n%v\nmemsync search\n%v", q, viewer, got, want)
		}
	}
}
