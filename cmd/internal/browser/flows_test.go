package browser

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/memsync/memsync/journal"
)

// TestFlagWrongLeavesSearch: a person searches, opens a hit, flags it
// wrong with their name; the flash says what was journaled, the journal
// holds the very record `memsync flag` writes for the same flag, and the
// memory is gone from default search.
func TestFlagWrongLeavesSearch(t *testing.T) {
	f := setup(t)
	target := f.uuid(t, "flag-me")
	const by, note = "Ada Lovelace", "the runners' clocks are in sync"

	want := cliFeedback(t, f, target, "--wrong", "--by", by, "--note", note)

	tb := f.newTab(t)
	tb.mustOpen("/search")
	if err := chromedp.Do(tb.ctx, chromedp.SendKeys(chromedp.CSS("form#search input[name=q]"), "clock skew")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.CSS("form#search button[type=submit]"))); err != nil {
		t.Fatalf("submit the search: %v", err)
	}
	wantIn(t, "hits for clock skew", tb.uuidsIn("ol#hits > li.memory"), target)
	tb.screenshot("search", false)

	if _, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.CSS(`ol#hits > li.memory[data-uuid="`+target+`"] a.open`))); err != nil {
		t.Fatalf("open the hit: %v", err)
	}
	if st := tb.state(); st.Page != "memory" || !strings.Contains(tb.textOf("#record .text"), "clock skew") {
		t.Fatalf("the hit's a.open led to %s (data-page %q), not its memory", st.URL, st.Page)
	}
	if err := chromedp.Do(tb.ctx,
		chromedp.SendKeys(chromedp.CSS("form#flag input[name=by]"), by),
		chromedp.SendKeys(chromedp.CSS("form#flag input[name=note]"), note),
	); err != nil {
		t.Fatal(err)
	}
	tb.screenshot("before-flag", false)
	resp, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.CSS(`form#flag button[name=flag][value=wrong]`)))
	if err != nil {
		t.Fatalf("flag it wrong: %v", err)
	}
	if u, _ := url.Parse(resp.URL); resp.Status != 200 || u == nil || u.Path != "/memory/"+target {
		t.Errorf("after the flag: HTTP %d at %s; want the memory's page again (303 back to it)", resp.Status, resp.URL)
	}
	flash := tb.textOf("#flash")
	if !strings.Contains(flash, "wrong") {
		t.Errorf("#flash %q: want it to say the memory was flagged wrong", flash)
	}
	// A daemon runs beside the ui: the change shows within seconds.
	if st := eval[string](tb, `(document.querySelector("#flash") || {dataset: {}}).dataset.state || ""`); st != "pending" && st != "shown" {
		t.Errorf("#flash data-state %q (%q): with the daemon running it shows now or within seconds", st, flash)
	}
	tb.screenshot("flagged", false)

	got := feedbackFor(t, f.repo, target)
	if uuid, _ := got["uuid"].(string); !strings.Contains(flash, by) || !strings.Contains(flash, uuid) {
		t.Errorf("#flash %q: want it to name %s and the record it journaled, %s", flash, by, uuid)
	}
	sameFeedback(t, got, want)

	// The daemon beside the ui projects the flag; poll until it has.
	deadline := time.Now().Add(time.Minute)
	for {
		tb.mustOpen("/search?q=" + url.QueryEscape("clock skew"))
		if !slices.Contains(tb.uuidsIn("ol#hits > li.memory"), target) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the wrong flag, default search still shows %s", target)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.screenshot("search-after-flag", false)
	for _, status := range []string{"wrong", "archived", "all"} {
		tb.mustOpen("/search?q=" + url.QueryEscape("clock skew") + "&status=" + status)
		wantIn(t, "status="+status+" hits after the wrong flag", tb.uuidsIn("ol#hits > li.memory"), target)
	}
	tb.mustOpen("/memory/" + target)
	if !strings.Contains(tb.state().Text, "archived") || !strings.Contains(tb.textOf("dd.status-why"), "flagged wrong") {
		t.Errorf("the memory's page does not say it is archived, and why (%q), after the wrong flag", tb.textOf("dd.status-why"))
	}
}

// cliFeedback is the record `memsync flag FLAGS target` journals, in a clone
// of the repository as committed by the seed (so as no page has flagged
// anything).
func cliFeedback(t *testing.T, f *fixture, target string, flags ...string) map[string]any {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "clone")
	if _, err := f.run(filepath.Dir(f.repo), "git", "clone", "-q", f.repo, clone); err != nil {
		t.Fatal(err)
	}
	if _, err := f.memsync("sync", "--repo", clone); err != nil {
		t.Fatal(err)
	}
	if _, err := f.memsync(append(append([]string{"flag", "--repo", clone}, flags...), target)...); err != nil {
		t.Fatal(err)
	}
	return feedbackFor(t, clone, target)
}

// sameFeedback checks the page journaled the record memsync flag does, but
// for its own uuid and time.
func sameFeedback(t *testing.T, got, want map[string]any) {
	t.Helper()
	for _, rec := range []map[string]any{got, want} {
		delete(rec, "uuid")
		delete(rec, "ts")
	}
	if !maps.EqualFunc(got, want, func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Errorf("the page journaled\n%v\nmemsync flag journals\n%v", got, want)
	}
}

// TestFlagAsAgent: a flag made on a page ?as=coder is journaled in coder's
// journal, the record `memsync flag --agent coder` writes, and the page it
// returns to keeps ?as=coder.
func TestFlagAsAgent(t *testing.T) {
	f := setup(t)
	target := f.uuid(t, "decision-open") // planner's, shared
	const by = "Grace Hopper"
	want := cliFeedback(t, f, target, "--verified", "--agent", viewer, "--by", by)

	tb := f.newTab(t)
	tb.mustOpen(withAs("/memory/"+target, viewer))
	if err := chromedp.Do(tb.ctx, chromedp.SendKeys(chromedp.CSS("form#flag input[name=by]"), by)); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.CSS(`form#flag button[name=flag][value=verified]`)))
	if err != nil {
		t.Fatalf("flag it verified: %v", err)
	}
	if u, _ := url.Parse(resp.URL); resp.Status != 200 || u == nil || u.Path != "/memory/"+target || u.Query().Get("as") != viewer {
		t.Fatalf("after the flag: HTTP %d at %s; want the memory's page as %s", resp.Status, resp.URL, viewer)
	}
	if flash := tb.textOf("#flash"); !strings.Contains(flash, "verified") {
		t.Errorf("#flash %q: want it to say the memory was flagged verified", flash)
	}
	tb.screenshot("flagged", false)
	// Wait for the daemon to project it (later tests compare the page
	// with explain, which must not race the projection).
	deadline := time.Now().Add(time.Minute)
	for tb.count(`ol#events li.event[data-kind="feedback"]`) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the flag the memory's events show no feedback")
		}
		time.Sleep(100 * time.Millisecond)
		tb.mustOpen(withAs("/memory/"+target, viewer))
	}
	got := feedbackFor(t, f.repo, target)
	if got["agent"] != viewer {
		t.Errorf("the flag went to %v's journal, want %s's", got["agent"], viewer)
	}
	sameFeedback(t, got, want)
}

// TestPromotionAfterImportantFlag: a person flags one of coder's private
// memories important on its page; the daemon promotes it (a shared record
// linking to it) and coder's agent page lists the promotion in
// #promotions.
func TestPromotionAfterImportantFlag(t *testing.T) {
	f := setup(t)
	target := f.uuid(t, "promote-me")
	tb := f.newTab(t)
	tb.mustOpen("/memory/" + target)
	if err := chromedp.Do(tb.ctx, chromedp.SendKeys(chromedp.CSS("form#flag input[name=by]"), "Ada Lovelace")); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.CSS(`form#flag button[name=flag][value=important]`)))
	if err != nil {
		t.Fatalf("flag it important: %v", err)
	}
	if resp.Status != 200 {
		t.Fatalf("flag it important: HTTP %d at %s", resp.Status, resp.URL)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		tb.mustOpen("/agents/coder")
		if strings.Contains(eval[string](tb, `document.querySelector("#promotions")?.innerHTML || ""`), target) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the important flag, #promotions of coder does not name %s:\n%s", target, tb.textOf("#promotions"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	promos := eval[[]memory](tb, `[...document.querySelectorAll("#promotions .memory")].map(m => ({uuid: m.dataset.uuid, group: m.dataset.group, agent: m.dataset.agent, text: m.querySelector(".text")?.innerText || ""}))`)
	if len(promos) != 1 || promos[0].Group != journal.SharedGroup || promos[0].Agent != viewer || !strings.Contains(promos[0].Text, "-count=1") {
		t.Errorf("#promotions %+v: want one shared memory by coder with the private memory's text", promos)
	}
	tb.screenshot("promotions", false)
}

// TestFleetRefreshes: the fleet page refreshes itself: a record appended
// while it is open shows in its agent's row without the test navigating.
// Like every test that only reads, it runs in parallel with the others
// that only read, after the tests that flag have run.
func TestFleetRefreshes(t *testing.T) {
	f := setup(t)
	t.Parallel() // its wait for the refresh overlaps the other read-only tests
	tb := f.newTab(t)
	tb.mustOpen("/")
	row := `table#fleet tr.agent[data-agent="planner"]`
	before := tb.textOf(row)
	if before == "" {
		t.Fatalf("no %s", row)
	}
	// Private to planner: no page or command another test compares sees it.
	if _, err := f.memsync("append", "--repo", f.repo, "--agent", "planner", "--kind", "observation", "--scope", "private",
		"Planner's own note: the fleet page refreshes itself"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	// The page reloads itself: a read that meets the navigation is tried
	// again.
	read := func() string {
		v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`(document.querySelector(`+jsString(row)+`) || {innerText: ""}).innerText`))
		if err != nil || v == "" {
			return before // mid-reload: no row yet
		}
		return v
	}
	for read() == before {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after a planner record was appended the fleet row still reads %q", before)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st := tb.state(); st.URL != f.base+"/" || st.Page != "fleet" {
		t.Errorf("the tab is at %s (%s), want the fleet", st.URL, st.Page)
	}
	tb.screenshot("refreshed", false)
}

// feedbackFor is the one feedback record in repo's journals that links to
// target; none or several fail the test.
func feedbackFor(t *testing.T, repo, target string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, rec := range journalRecords(t, repo) {
		links, _ := rec["links"].([]any)
		if rec["kind"] == "feedback" && slices.Contains(links, any(target)) {
			found = append(found, rec)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d feedback records link to %s, want 1: %v", repo, len(found), target, found)
	}
	return found[0]
}

// journalRecords is every record of every agent's journal in repo.
func journalRecords(t *testing.T, repo string) []map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repo, "agents", "*", "memory", "journal", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			recs = append(recs, rec)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

// TestViewAsAgent: on every page with ?as=coder, no element shows another
// agent's private memory (by data-uuid, by its uuid anywhere in the page,
// by its text), every link and GET form of the page keeps ?as=coder, and a
// memory coder may not see is a 404 page identical to an unknown uuid's.
// The operator's view of the same pages shows those private memories, so
// the test would see them if they leaked.
func TestViewAsAgent(t *testing.T) {
	f := setup(t)
	goal := url.QueryEscape("billing roadmap checklist load tests")
	for _, tc := range []struct {
		name string
		path string // without ?as=
		page string
		// hidden: another agent's private memory the operator sees on this
		// page (so its absence as coder means something).
		hidden []string
	}{
		{"fleet", "/", "fleet", nil},
		{"agent-self", "/agents/coder", "agent", nil},
		{"agent-planner", "/agents/planner", "agent", []string{"planner-private"}},
		{"agent-critic", "/agents/critic", "agent", []string{"critic-private"}},
		{"search-billing", "/search?q=billing", "search", nil},
		{"search-roadmap", "/search?q=roadmap", "search", []string{"planner-private"}},
		{"search-checklist", "/search?q=" + url.QueryEscape("review checklist load tests"), "search", []string{"critic-private"}},
		{"memory-fact", "/memory/" + f.uuid(t, "fact"), "memory", []string{"critic-private"}},
		{"memory-decision", "/memory/" + f.uuid(t, "decision-open"), "memory", []string{"planner-private"}},
		{"graph-decision", "/graph/" + f.uuid(t, "decision-open"), "graph", []string{"planner-private"}},
		{"graph-fact", "/graph/" + f.uuid(t, "fact"), "graph", []string{"critic-private"}},
		{"graph-two-hops", "/graph/" + f.uuid(t, "link"), "graph", []string{"planner-private"}},
		{"graph-entity", "/graph/entity/" + url.PathEscape("#postgres"), "graph", []string{"planner-private"}},
		{"packet", "/packet?role=planner&goal=" + goal, "packet", nil},
		{"timeline", "/timeline?since=30d", "timeline", []string{"planner-private", "critic-private"}},
		{"timeline-author", "/timeline?since=30d&author=critic", "timeline", []string{"critic-private"}},
		{"queue", "/queue", "queue", nil},
		{"entities", "/entities", "entities", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := f.newTab(t)
			if len(tc.hidden) > 0 {
				tb.mustOpen(tc.path)
				html := eval[string](tb, "document.documentElement.outerHTML")
				for _, name := range tc.hidden {
					if !strings.Contains(html, f.uuid(t, name)) {
						t.Errorf("operator's %s does not show %s: the view-as check below proves nothing", tc.path, name)
					}
				}
			}
			path := withAs(tc.path, viewer)
			tb.mustOpen(path)
			st := tb.state()
			if st.Page != tc.page || st.Viewer != "agent:"+viewer {
				t.Errorf("body data-page %q data-viewer %q, want %s and agent:%s", st.Page, st.Viewer, tc.page, viewer)
			}
			html := eval[string](tb, "document.documentElement.outerHTML")
			for _, p := range privates {
				if p.agent == viewer {
					continue
				}
				u := f.uuid(t, p.name)
				if n := tb.count(`[data-uuid="` + u + `"]`); n > 0 {
					t.Errorf("%d elements with data-uuid of %s's private %s", n, p.agent, u)
				}
				if strings.Contains(html, u) {
					t.Errorf("the page holds the uuid of %s's private %s", p.agent, u)
				}
				if strings.Contains(st.Text, p.phrase) {
					t.Errorf("the page shows the text of %s's private memory (%q)", p.agent, p.phrase)
				}
			}
			for _, m := range st.Memories {
				if m.Group != journal.SharedGroup && m.Group != journal.PrivateGroup(viewer) {
					t.Errorf("memory %s of %s in group %q shown to %s", m.UUID, m.Agent, m.Group, viewer)
				}
			}
			keepsAs(t, f, st)
			linksWork(t, f, st)
			if uuid, ok := strings.CutPrefix(tc.path, "/memory/"); ok {
				explainEvents(t, f, tb, viewer, uuid, true)
			}
			tb.screenshot(tc.name, false)
		})
	}

	t.Run("invisible-is-unknown", func(t *testing.T) {
		tb := f.newTab(t)
		private := f.uuid(t, "planner-private")
		unknown := private[:len(private)-8] + "zzzzzzzz"
		for _, kind := range []string{"memory", "graph"} {
			var texts []string
			for _, u := range []string{private, unknown} {
				if status := tb.open(withAs("/"+kind+"/"+u, viewer)); status != 404 {
					t.Errorf("/%s/%s?as=%s: HTTP %d, want 404", kind, u, viewer, status)
				}
				texts = append(texts, strings.ReplaceAll(tb.state().Text, u, "UUID"))
			}
			if texts[0] != texts[1] {
				t.Errorf("/%s/ as %s: the page of an invisible memory\n%s\ndiffers from an unknown uuid's\n%s", kind, viewer, texts[0], texts[1])
			}
			tb.screenshot(kind+"-404", false)
		}
	})
}

// withAs adds as=agent to path's query.
func withAs(path, agent string) string {
	u, err := url.Parse(path)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set("as", agent)
	u.RawQuery = q.Encode()
	return u.String()
}

// keepsAs checks every link to the ui server and every GET form on the page
// carries as=viewer; a link to this very page through other eyes (the
// viewer switch) is the one link that may not.
func keepsAs(t *testing.T, f *fixture, st pageState) {
	t.Helper()
	base, _ := url.Parse(f.base)
	here, _ := url.Parse(st.URL)
	for _, l := range st.Links {
		u, err := url.Parse(l)
		if err != nil || u.Host != base.Host || u.Path == "" {
			continue
		}
		if sameButAs(u, here) {
			continue
		}
		if u.Query().Get("as") != viewer {
			t.Errorf("link %s drops ?as=%s (path %q, query %q, fragment %q)", l, viewer, u.Path, u.RawQuery, u.Fragment)
		}
	}
	for _, form := range st.PostForms {
		u, err := url.Parse(form.Action)
		if err != nil || (u.Query().Get("as") != viewer && form.As != viewer) {
			t.Errorf("POST form#%s (action %s) drops as=%s: what it journals would not be %s's", form.ID, form.Action, viewer, viewer)
		}
	}
	for _, form := range st.GetForms {
		id, query, _ := strings.Cut(form, "?")
		if q, _ := url.ParseQuery(query); q.Get("as") != viewer {
			t.Errorf("GET form#%s (fields %s) drops as=%s", id, query, viewer)
		}
	}
}

// linksWork follows every link of the page to the ui server (each URL once
// per test binary) and fails the test on any that does not answer 200: a
// link a person clicks must lead somewhere.
func linksWork(t *testing.T, f *fixture, st pageState) {
	t.Helper()
	base, _ := url.Parse(f.base)
	client := &http.Client{Timeout: 30 * time.Second}
	for _, l := range st.Links {
		u, err := url.Parse(l)
		if err != nil || u.Host != base.Host {
			continue
		}
		u.Fragment = ""
		key := u.String()
		status, done := f.links.Load(key)
		if !done {
			req, err := http.NewRequest(http.MethodGet, key, nil)
			if err != nil {
				t.Fatal(err)
			}
			f.authorize(req, f.base)
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("link %s: %v", l, err)
				continue
			}
			resp.Body.Close()
			status, _ = f.links.LoadOrStore(key, resp.StatusCode)
		}
		if status != http.StatusOK {
			t.Errorf("link %s on %s answers HTTP %v", l, st.URL, status)
		}
	}
}

// sameButAs reports whether two URLs name the same page and query but for
// the as parameter.
func sameButAs(a, b *url.URL) bool {
	qa, qb := a.Query(), b.Query()
	qa.Del("as")
	qb.Del("as")
	return a.Path == b.Path && qa.Encode() == qb.Encode()
}

// TestInjectionRendersAsText: the record whose text is a script and an
// img with onerror renders as that text on every page that shows it; no
// script of it runs, and neither its script nor its img is in the DOM.
func TestInjectionRendersAsText(t *testing.T) {
	f := setup(t)
	t.Parallel()
	inject := f.uuid(t, "inject")
	for _, tc := range []struct{ name, path string }{
		{"memory", "/memory/" + inject},
		{"agent", "/agents/critic"},
		{"search", "/search?q=" + url.QueryEscape("script pwned onerror img")},
		{"graph", "/graph/" + inject},
	} {
		path := tc.path
		t.Run(tc.name, func(t *testing.T) {
			tb := f.newTab(t)
			tb.mustOpen(path)
			st := tb.state()
			shown := false
			for _, m := range st.Memories {
				if m.UUID == inject {
					shown = true
					if m.Text != injection {
						t.Errorf("memory %s .text reads %q, want its text verbatim %q", inject, m.Text, injection)
					}
				}
			}
			if !shown && st.Page != "graph" {
				t.Errorf("%s does not show the injection record %s", path, inject)
			}
			if st.Page == "graph" && !strings.Contains(st.Text+eval[string](tb, `document.querySelector("svg#graph")?.textContent || ""`), "<script>") {
				t.Errorf("the graph of %s does not show its text", inject)
			}
			if pwned := eval[string](tb, "typeof window.__pwned"); pwned != "undefined" {
				t.Errorf("window.__pwned is a %s: the record's markup ran", pwned)
			}
			if n := eval[int](tb, `[...document.querySelectorAll("script")].filter(s => s.textContent.includes("__pwned")).length`); n > 0 {
				t.Errorf("%d script elements from the record in the DOM", n)
			}
			if n := tb.count(`img[onerror], img[src="x"]`); n > 0 {
				t.Errorf("%d img elements from the record in the DOM", n)
			}
			tb.screenshot(tc.name, false)
		})
	}
}

// TestFlagPOSTNeedsCSRF: a flag POST without the page's CSRF token, with a
// wrong one, or with the right one from another origin is refused (403) and
// journals nothing; the first two are sent by the page itself (fetch, same
// origin), the third by a client naming another Origin. With the right
// token, a flag ?as=coder on a memory coder may not see is a 404.
func TestFlagPOSTNeedsCSRF(t *testing.T) {
	f := setup(t)
	target := f.uuid(t, "fact")
	tb := f.newTab(t)
	tb.mustOpen("/memory/" + target)
	token := eval[string](tb, `document.querySelector("form#flag input[name=csrf]")?.value || ""`)
	if token == "" {
		t.Fatal("form#flag carries no csrf token")
	}
	before := len(journalRecords(t, f.repo))
	post := func(path, body string) int {
		tb.expectFailure(f.base + path)
		return eval[int](tb, `fetch(`+jsString(path)+`, {method: "POST", redirect: "manual",
			headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: `+jsString(body)+`}).then(r => r.status)`,
			chromedp.EvalAwaitPromise)
	}
	private := f.uuid(t, "planner-private")
	for _, tc := range []struct {
		name, path, body string
		want             int
	}{
		{"no token", "/memory/" + target + "/flag", "by=Mallory&note=&flag=wrong", http.StatusForbidden},
		{"wrong token", "/memory/" + target + "/flag", "by=Mallory&note=&flag=wrong&csrf=" + url.QueryEscape(strings.ToUpper(token)+"x"), http.StatusForbidden},
		// The right token, but coder may not see planner's private memory:
		// the same 404 as an unknown uuid, and nothing journaled.
		{"invisible as coder", withAs("/memory/"+private+"/flag", viewer), "by=Mallory&note=&flag=wrong&csrf=" + url.QueryEscape(token), http.StatusNotFound},
	} {
		if status := post(tc.path, tc.body); status != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, status, tc.want)
		}
	}
	form := url.Values{"by": {"Mallory"}, "flag": {"wrong"}, "csrf": {token}}
	req, err := http.NewRequest(http.MethodPost, f.base+"/memory/"+target+"/flag", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	f.authorize(req, f.base) // the token, yet another origin: still refused
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the page's token from Origin http://evil.example: HTTP %d, want 403", resp.StatusCode)
	}
	if after := len(journalRecords(t, f.repo)); after != before {
		t.Errorf("refused POSTs journaled %d records", after-before)
	}
}

// TestOfflineFromJournals: a ui whose graph cannot be opened (a damaged
// embedded store) reads the journals, every page says so (data-source
// "journals"), search still finds and ranks, and ?as= still hides another
// agent's private memory.
func TestOfflineFromJournals(t *testing.T) {
	f := setup(t)
	t.Parallel()
	clone := filepath.Join(t.TempDir(), "clone")
	if _, err := f.run(filepath.Dir(f.repo), "git", "clone", "-q", f.repo, clone); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(clone, ".memsync"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, ".memsync", "graph.db"), bytes.Repeat([]byte("not a database "), 512), 0o644); err != nil {
		t.Fatal(err)
	}
	base, d, err := f.serve(clone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	tb := f.newTab(t)
	tb.base = base
	for _, tc := range []struct {
		name, path string
		want       string // a seeded memory the page shows
	}{
		{"fleet", "/", ""},
		{"search", "/search?q=postgres", "decision-open"},
		{"memory", "/memory/" + f.uuid(t, "fact"), "fact"},
		{"agent", "/agents/planner", "core"},
		{"search-as", withAs("/search?q=roadmap", viewer), ""},
	} {
		tb.mustOpen(tc.path)
		st := tb.state()
		if st.Source != "journals" {
			t.Errorf("%s: data-source %q on a repository never synced, want journals", tc.path, st.Source)
		}
		if tc.want != "" && !slices.ContainsFunc(st.Memories, func(m memory) bool { return m.UUID == f.uuid(t, tc.want) }) {
			t.Errorf("%s: does not show %s from the journals", tc.path, tc.want)
		}
		if strings.Contains(eval[string](tb, "document.documentElement.outerHTML"), f.uuid(t, "planner-private")) && st.Viewer != "operator" {
			t.Errorf("%s: shows planner's private memory to %s", tc.path, viewer)
		}
		tb.screenshot(tc.name, false)
	}
}

// TestTokenCookie: a ui started with a token answers 401 without it; the
// first URL with ?token= sets a cookie and sends the browser on to the same
// page without the token in its URL, and later pages need no token. A
// browser context of its own (no cookie) is refused again.
func TestTokenCookie(t *testing.T) {
	f := setup(t)
	t.Parallel()
	const token = "browser-test-token-3f9a7c1e"
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, d, err := f.serve(f.repo, "--token-file", file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)

	tb := f.newTabWith(t, chromedp.WithNewBrowserContext())
	tb.base = base
	if status := tb.open("/search?q=postgres"); status != http.StatusUnauthorized {
		t.Errorf("without the token: HTTP %d, want 401", status)
	}
	tb.mustOpen("/search?q=postgres&token=" + token)
	st := tb.state()
	if u, _ := url.Parse(st.URL); u == nil || u.Path != "/search" || u.Query().Get("q") != "postgres" || u.Query().Has("token") {
		t.Errorf("after ?token= the browser is at %s, want /search?q=postgres without the token", st.URL)
	}
	if !slices.ContainsFunc(st.Memories, func(m memory) bool { return m.UUID == f.uuid(t, "decision-open") }) {
		t.Errorf("the search after ?token= shows no hits")
	}
	if strings.Contains(eval[string](tb, "document.documentElement.outerHTML"), token) {
		t.Errorf("the page holds the token")
	}
	if got := eval[string](tb, "document.cookie"); strings.Contains(got, token) {
		t.Errorf("document.cookie %q: the token cookie must be HttpOnly", got)
	}
	tb.mustOpen("/agents/planner") // the cookie, no token
	tb.screenshot("with-cookie", false)

	other := f.newTabWith(t, chromedp.WithNewBrowserContext())
	other.base = base
	if status := other.open("/agents/planner"); status != http.StatusUnauthorized {
		t.Errorf("another browser context, no cookie: HTTP %d, want 401", status)
	}
}

// TestRunUI: the daemon serving the view itself (memsync run --ui ADDR, on
// a clone of the seeded repository): the fleet says the daemon runs, and a
// memory flagged wrong in the browser leaves default search with no other
// process projecting it.
func TestRunUI(t *testing.T) {
	f := setup(t)
	t.Parallel()
	clone := filepath.Join(t.TempDir(), "clone")
	if _, err := f.run(filepath.Dir(f.repo), "git", "clone", "-q", f.repo, clone); err != nil {
		t.Fatal(err)
	}
	base, d, err := f.serveWith(func(addr string) []string {
		return []string{"run", "--repo", clone, "--ui", addr, "--no-commit", "--no-compact"}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	tb := f.newTab(t)
	tb.base = base
	target := f.uuid(t, "flag-me")
	q := "/search?q=" + url.QueryEscape("clock skew")
	// The daemon projects the clone's journals as it starts; wait for it.
	deadline := time.Now().Add(time.Minute)
	for tb.mustOpen(q); !slices.Contains(tb.uuidsIn("ol#hits > li.memory"), target); tb.mustOpen(q) {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after memsync run --ui started, search does not find %s", target)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.mustOpen("/")
	if daemon := tb.textOf("#health"); !strings.Contains(daemon, "running") {
		t.Errorf("#health %q: want the daemon running", daemon)
	}
	tb.mustOpen("/memory/" + target)
	if err := chromedp.Do(tb.ctx, chromedp.SendKeys(chromedp.CSS("form#flag input[name=by]"), "Ada Lovelace")); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.CSS(`form#flag button[name=flag][value=wrong]`)))
	if err != nil {
		t.Fatalf("flag it wrong: %v", err)
	}
	if resp.Status != 200 {
		t.Fatalf("flag it wrong: HTTP %d at %s", resp.Status, resp.URL)
	}
	// run --ui projects it itself: the notice says so, and the page,
	// reloaded, shows it once projected.
	flagged, _ := url.Parse(resp.URL)
	for {
		st := eval[string](tb, `(document.querySelector("#flash") || {dataset: {}}).dataset.state || ""`)
		if st == "shown" {
			break
		}
		if st != "pending" {
			t.Fatalf("run --ui: #flash data-state %q (%q), want pending then shown", st, tb.textOf("#flash"))
		}
		if time.Now().After(deadline.Add(time.Minute)) {
			t.Fatalf("run --ui: the flag never shows on the memory's page")
		}
		time.Sleep(200 * time.Millisecond)
		tb.mustOpen(flagged.RequestURI())
	}
	for tb.mustOpen(q); slices.Contains(tb.uuidsIn("ol#hits > li.memory"), target); tb.mustOpen(q) {
		if time.Now().After(deadline.Add(time.Minute)) {
			t.Fatalf("memsync run --ui: default search still shows %s after the wrong flag", target)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.screenshot("search-after-flag", false)
}
