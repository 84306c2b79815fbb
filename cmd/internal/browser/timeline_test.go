package browser

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTimelineAndQueue opens the timeline and the queue as a person
// would: the chart's bars count exactly the journals' records per day and
// agent (every day before today: later tests of the binary journal
// feedback today), the author filter lists only that author's records,
// and the queue holds the memory in review, the decision waiting for its
// outcome and the open conflict, each with open, explain and flag. Its
// screenshots are docs/ui/timeline.png and docs/ui/queue.png with -update.
func TestTimelineAndQueue(t *testing.T) {
	f := setup(t)
	t.Parallel()
	today := time.Now().UTC().Format("2006-01-02")
	want := map[string]int{} // "day agent" → records
	for _, rec := range journalRecords(t, f.repo) {
		ts, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(rec["ts"]))
		if d := ts.UTC().Format("2006-01-02"); d != today && time.Since(ts) < 41*day {
			want[d+" "+fmt.Sprint(rec["agent"])]++
		}
	}
	t.Run("timeline", func(t *testing.T) {
		tb := f.newTab(t)
		tb.mustOpen("/timeline?since=30d")
		if st := tb.state(); st.Page != "timeline" {
			t.Fatalf("data-page %q", st.Page)
		}
		type bar struct {
			Day, Agent string
			Count      int
		}
		bars := eval[[]bar](tb, `[...document.querySelectorAll("svg#timeline-chart rect.bar")].map(r => ({day: r.dataset.day, agent: r.dataset.agent, count: +r.dataset.count}))`)
		got := map[string]int{}
		for _, b := range bars {
			if b.Day != today {
				got[b.Day+" "+b.Agent] = b.Count
			}
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("bar %s: %d, the journals hold %d", k, got[k], n)
			}
		}
		for k, n := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("bar %s: %d, the journals hold none", k, n)
			}
		}
		legend := eval[[]string](tb, `[...document.querySelectorAll("svg#timeline-chart text.legend-agent")].map(t => t.textContent)`)
		for _, a := range agents {
			if !slices.ContainsFunc(legend, func(l string) bool { return strings.HasPrefix(l, a+" (") }) {
				t.Errorf("legend %v lacks %s", legend, a)
			}
		}
		listed := tb.uuidsIn("#list")
		wantIn(t, "#list (30 days)", listed, f.uuid(t, "stale"))
		wantIn(t, "#list (30 days)", listed, f.uuid(t, "planner-private"))
		tb.screenshot("timeline", true)

		tb.mustOpen("/timeline?since=30d&author=critic")
		st := tb.state()
		n := 0
		for _, m := range st.Memories {
			if m.Agent != "critic" {
				t.Errorf("author critic lists %s's %s", m.Agent, m.UUID)
			}
			n++
		}
		for _, name := range []string{"support", "conflict", "critic-private", "inject"} {
			wantIn(t, "#list (author critic)", tb.uuidsIn("#list"), f.uuid(t, name))
		}
		if n == 0 {
			t.Errorf("author critic lists nothing")
		}
	})
	t.Run("queue", func(t *testing.T) {
		tb := f.newTab(t)
		tb.mustOpen("/queue")
		if st := tb.state(); st.Page != "queue" {
			t.Fatalf("data-page %q", st.Page)
		}
		review, waiting, conflicts := tb.uuidsIn("section#review"), tb.uuidsIn("section#waiting"), tb.uuidsIn("section#conflicts")
		wantIn(t, "#review", review, f.uuid(t, "stale"))
		wantIn(t, "#waiting", waiting, f.uuid(t, "decision-open"))
		wantOut(t, "#waiting (its outcome is journaled)", waiting, f.uuid(t, "decision-done"))
		wantIn(t, "#conflicts", conflicts, f.uuid(t, "conflict"))
		if len(waiting) != 1 {
			t.Errorf("#waiting %v: want decision-open alone", waiting)
		}
		id := f.uuid(t, "decision-open")
		for _, sel := range []string{`li.actions[data-uuid="` + id + `"] a.open`, `li.actions[data-uuid="` + id + `"] a.explain`,
			`li.actions[data-uuid="` + id + `"] form.flag input[name=csrf]`, `li.actions[data-uuid="` + id + `"] form.flag button[value=verified]`} {
			if tb.count(sel) != 1 {
				t.Errorf("no %s", sel)
			}
		}
		tb.screenshot("queue", true)
		tb.mustOpen("/")
		counts := eval[map[string]string](tb, `Object.fromEntries([...document.querySelectorAll("#queue-counts .count")].map(c => [c.dataset.section, c.textContent]))`)
		if counts["waiting"] != "1" || counts["review"] == "" || counts["review"] == "0" || counts["conflicts"] == "0" {
			t.Errorf("fleet page's queue counts %v", counts)
		}
		tb.screenshot("fleet-queue", false)
	})
}
