package webui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/webui"
)

var barRE = regexp.MustCompile(`<rect class="bar" data-day="([0-9-]+)" data-agent="([a-z]+)" data-count="([0-9]+)"`)

// bars is agent → day → count from a page's timeline chart.
func bars(body string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, m := range barRE.FindAllStringSubmatch(body, -1) {
		if out[m[2]] == nil {
			out[m[2]] = map[string]string{}
		}
		out[m[2]][m[1]] = m[3]
	}
	return out
}

// The chart counts the records each agent wrote per day, as far as the
// viewer sees them: bob's private record is bob's to the operator, and
// never there for alice.
func TestTimelineCountsPerAgentPerDay(t *testing.T) {
	r := newRig(t, "")
	day := r.now.Add(-30 * 24 * time.Hour).Format("2006-01-02")
	for _, path := range []string{"/", "/timeline"} {
		op := bars(r.get(path).Body.String())
		if op["alice"][day] != "3" || op["bob"][day] != "3" || len(op["alice"])+len(op["bob"]) != 2 {
			t.Errorf("GET %s as the operator: bars %v, want alice 3 and bob 3 on %s", path, op, day)
		}
		al := bars(r.get(path + "?as=alice").Body.String())
		if al["alice"][day] != "3" || al["bob"][day] != "2" {
			t.Errorf("GET %s as alice: bars %v, want alice 3 and bob 2 (not bob's private one) on %s", path, al, day)
		}
	}
	body := r.get("/timeline").Body.String()
	if !strings.Contains(body, `<tr class="kinds" data-agent="bob"><td>bob</td>`) || !strings.Contains(body, "<th>observation</th>") {
		t.Errorf("no per-kind table:\n%s", body)
	}
}

// The list with no query: since, author, kind and status filter it.
func TestTimelineListFilters(t *testing.T) {
	r := newRig(t, "")
	r.add("recent", journal.Record{Agent: "alice", Kind: journal.KindFact, Scope: journal.ScopeShared, TS: r.now.Add(-2 * 24 * time.Hour),
		Text: "the release train leaves on thursdays"})
	r.sync()
	listed := func(path string) string {
		t.Helper()
		w := r.get(path)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, w.Code)
		}
		b := w.Body.String()
		_, list, _ := strings.Cut(b, `<section id="browse">`)
		return list
	}
	has := func(list string, names ...string) map[string]bool {
		out := map[string]bool{}
		for _, n := range names {
			out[n] = strings.Contains(list, `data-uuid="`+r.ids[n]+`"`)
		}
		return out
	}
	week := has(listed("/timeline"), "recent", "decision", "shared")
	if !week["recent"] || week["decision"] || week["shared"] {
		t.Errorf("this week: %v, want only the recent record", week)
	}
	bob := has(listed("/timeline?since=60d&author=bob"), "shared", "xss", "bobPrivate", "decision", "recent")
	if !bob["shared"] || !bob["xss"] || !bob["bobPrivate"] || bob["decision"] || bob["recent"] {
		t.Errorf("author bob: %v, want bob's records only", bob)
	}
	asAlice := listed("/timeline?since=60d&author=bob&as=alice")
	if strings.Contains(asAlice, r.ids["bobPrivate"]) || strings.Contains(asAlice, bobSecret) || !strings.Contains(asAlice, r.ids["shared"]) {
		t.Errorf("author bob as alice shows bob's private record or lacks his shared one:\n%s", asAlice)
	}
	kind := has(listed("/timeline?since=60d&kind=decision"), "decision", "shared")
	if !kind["decision"] || kind["shared"] {
		t.Errorf("kind decision: %v", kind)
	}
	active := has(listed("/timeline?since=60d&status=archived"), "decision", "recent")
	if active["decision"] || active["recent"] {
		t.Errorf("status archived lists active records: %v", active)
	}
	for _, bad := range []string{"?kind=nope", "?status=nope", "?author=mallory", "?since=yesterdayish", "?days=9999"} {
		if b := r.get("/timeline" + bad).Body.String(); !strings.Contains(b, `id="error"`) && !strings.Contains(b, "days:") {
			t.Errorf("/timeline%s: no error shown", bad)
		}
	}
}

// The queue holds the waiting decision, the open conflict, the
// low-confidence learning record and the promotion, each with its
// actions; alice never sees bob's private ones.
func TestQueue(t *testing.T) {
	r := newRig(t, "")
	r.add("conflict", journal.Record{Agent: "bob", Kind: journal.KindFact, Scope: journal.ScopeShared, TS: r.now.Add(-24 * time.Hour),
		Text: "billing moved to mysql last week", ConflictsWith: []string{r.ids["decision"]}})
	r.add("learning", journal.Record{Agent: "alice", Kind: journal.KindObservation, Scope: journal.ScopeShared, TS: r.now.Add(-24 * time.Hour),
		Text: "maybe the flaky test is the clock", Tier: "learning", Confidence: "low"})
	r.add("bobLearning", journal.Record{Agent: "bob", Kind: journal.KindObservation, Scope: journal.ScopePrivate, TS: r.now.Add(-24 * time.Hour),
		Text: "bob guesses the " + bobSecret + " cache is cold", Tier: "learning", Confidence: "low"})
	r.sync()
	section := func(body, id string) string {
		_, s, _ := strings.Cut(body, `<section class="queue" id="`+id+`">`)
		s, _, _ = strings.Cut(s, "</section>")
		return s
	}
	body := r.get("/queue").Body.String()
	for id, want := range map[string][]string{"waiting": {"decision"}, "conflicts": {"conflict"}, "learning": {"learning", "bobLearning"}, "promotions": {"promotion"}} {
		sec := section(body, id)
		for _, n := range want {
			if !strings.Contains(sec, `data-uuid="`+r.ids[n]+`"`) {
				t.Errorf("queue %s lacks %s:\n%s", id, n, sec)
			}
		}
		if got := strings.Count(sec, `<li class="memory`); got != len(want) {
			t.Errorf("queue %s: %d items, want %d", id, got, len(want))
		}
	}
	for _, action := range []string{`class="explain" href="/memory/` + r.ids["decision"] + `#events"`, `action="/memory/` + r.ids["decision"] + `/flag"`, `name="csrf"`} {
		if !strings.Contains(section(body, "waiting"), action) {
			t.Errorf("waiting decision lacks %s", action)
		}
	}
	fleet := r.get("/").Body.String()
	for id, n := range map[string]string{"waiting": "1", "conflicts": "1", "learning": "2", "promotions": "1"} {
		if want := `<span class="count" data-section="` + id + `">` + n + `</span>`; !strings.Contains(fleet, want) {
			t.Errorf("fleet page lacks %s", want)
		}
	}
	alice := r.get("/queue?as=alice").Body.String()
	if strings.Contains(alice, bobSecret) || strings.Contains(alice, r.ids["bobLearning"]) {
		t.Errorf("alice's queue shows bob's private learning record")
	}
	if !strings.Contains(r.get("/?as=alice").Body.String(), `<span class="count" data-section="learning">1</span>`) {
		t.Errorf("alice's fleet page: learning count is not 1")
	}
}

// The entity index counts mentions as far as the viewer sees them.
func TestEntities(t *testing.T) {
	r := newRig(t, "")
	op := r.get("/entities").Body.String()
	if !strings.Contains(op, `<tr class="entity" data-entity="Postgres"><td><a href="/graph/entity/Postgres">Postgres</a></td><td><a class="entity-memories" href="/search?q=Postgres&amp;status=all">its memories</a></td><td class="mentions">3</td>`) {
		t.Errorf("operator: Postgres not 3 mentions:\n%s", op)
	}
	al := r.get("/entities?as=alice&sort=newest").Body.String()
	if !strings.Contains(al, `<td class="mentions">2</td>`) || strings.Contains(al, "AGENT:bob") {
		t.Errorf("alice: Postgres not 2 mentions, or bob's group named:\n%s", al)
	}
}

// With a daemon projecting, the flash says the change shows within
// seconds and the page reloads until it does.
func TestFlagNoticeWithDaemon(t *testing.T) {
	r := newRigWith(t, func(c *webui.Config) { c.Projects = func() bool { return true } })
	uuid := r.ids["shared"]
	w := r.do("POST", "/memory/"+uuid+"/flag", url.Values{"flag": {"verified"}, "by": {"Ann"}, "csrf": {r.csrf(uuid)}}, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("flag: %d", w.Code)
	}
	page := r.get(w.Header().Get("Location")).Body.String()
	if !strings.Contains(page, `<p id="flash" data-state="pending">`) || !strings.Contains(page, `<meta http-equiv="refresh" content="2">`) {
		t.Errorf("with the daemon: no pending notice or reload:\n%s", page)
	}
}

// The agent page shows what the agent wrote by default and, switched,
// what it sees; feedback shows the text it judges, and the memory page's
// events the text of the records behind them.
func TestAgentWroteAndSees(t *testing.T) {
	r := newRig(t, "")
	r.add("feedback", journal.Record{Agent: "bob", Kind: journal.KindFeedback, Scope: journal.ScopeShared, TS: r.now.Add(-time.Hour),
		Text: "bob flagged it verified", Links: []string{r.ids["decision"]}, Extra: map[string]json.RawMessage{"feedback": json.RawMessage(`"verified"`)}})
	r.sync()
	newest := func(path string) string {
		b := r.get(path).Body.String()
		_, s, _ := strings.Cut(b, `<section id="newest">`)
		s, _, _ = strings.Cut(s, "</section>")
		return s
	}
	wrote := newest("/agents/bob")
	if strings.Contains(wrote, `data-agent="alice"`) || !strings.Contains(wrote, r.ids["shared"]) {
		t.Errorf("bob wrote: lists alice's records or lacks his own:\n%s", wrote)
	}
	if !strings.Contains(wrote, `<p class="about">about <a href="/memory/`+r.ids["decision"]+`">decision by alice</a>: <q>Use postgres for the billing service</q></p>`) {
		t.Errorf("bob's feedback does not show the text it judges:\n%s", wrote)
	}
	sees := newest("/agents/bob?view=sees")
	if !strings.Contains(sees, `data-agent="alice"`) {
		t.Errorf("what bob sees lacks alice's shared records:\n%s", sees)
	}
	if a := newest("/agents/bob?view=sees&as=alice"); strings.Contains(a, bobSecret) || strings.Contains(a, r.ids["bobPrivate"]) {
		t.Errorf("as alice, what bob sees shows bob's private record")
	}
	mem := r.get("/memory/" + r.ids["decision"]).Body.String()
	if !strings.Contains(mem, `<q class="event-text">bob: bob flagged it verified</q>`) {
		t.Errorf("the memory page's events lack the feedback's text:\n%s", mem)
	}
}

// Every edge type is drawn in its own style, with a legend naming each.
func TestGraphEdgeTypesAndLegend(t *testing.T) {
	r := newRig(t, "")
	body := r.get("/graph/" + r.ids["decision"]).Body.String()
	for _, typ := range []string{"LINKS_TO", "SUPPORTS", "SUPERSEDES", "CONFLICTS_WITH", "MENTIONS"} {
		if !strings.Contains(body, `<li class="edge-legend" data-type="`+typ+`">`) {
			t.Errorf("legend lacks %s", typ)
		}
	}
	links := regexp.MustCompile(`data-type="LINKS_TO"[^>]* stroke="([^"]+)"`).FindStringSubmatch(body)
	sup := regexp.MustCompile(`data-type="SUPPORTS"[^>]* stroke="([^"]+)"`).FindStringSubmatch(body)
	if links == nil || sup == nil || links[1] == sup[1] {
		t.Errorf("links and supports drawn alike (%v, %v):\n%s", links, sup, body)
	}
	if strings.Contains(body, "style=") {
		t.Errorf("an inline style (the CSP refuses it)")
	}
}

// TestQueueAfterFlagReadsAfresh: the queue's recent sections come from a
// window read once per SummaryTTL; a flag through the view drops it, so
// the queue after a flag holds what the store holds then. Fails when the
// flag leaves the cached window in place (the record added since stays
// out of the queue until the TTL passes).
func TestQueueAfterFlagReadsAfresh(t *testing.T) {
	r := newRig(t, "")
	learning := func() bool {
		_, s, _ := strings.Cut(r.get("/queue").Body.String(), `<section class="queue" id="learning">`)
		return strings.Contains(s, `data-uuid="`+r.ids["late"]+`"`)
	}
	r.ids["late"] = "none yet"
	if learning() {
		t.Fatal("the queue holds a record not written yet")
	}
	r.add("late", journal.Record{Agent: "alice", Kind: journal.KindObservation, Scope: journal.ScopeShared, TS: r.now.Add(-time.Hour),
		Text: "maybe the cache warms too late", Tier: "learning", Confidence: "low"})
	r.sync()
	if learning() {
		t.Log("the queue read the new record within SummaryTTL (no cached window)")
	}
	uuid := r.ids["shared"]
	if w := r.do("POST", "/memory/"+uuid+"/flag", url.Values{"flag": {"verified"}, "by": {"Ann"}, "csrf": {r.csrf(uuid)}}, nil); w.Code != http.StatusSeeOther {
		t.Fatalf("flag: %d", w.Code)
	}
	if !learning() {
		t.Error("after a flag the queue still lacks the low-confidence record written before it")
	}
}
