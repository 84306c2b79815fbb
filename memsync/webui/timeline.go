package webui

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	readpath "github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

// Bounds of the timeline: it reads lists (memsync.Lister), newest first,
// never the whole store.
const (
	// TimelineDays is how many days the chart covers by default.
	TimelineDays = 42
	// timelineMaxDays bounds ?days=.
	timelineMaxDays = 120
	// TimelineMax is how many records, newest first, the chart counts at
	// most; a window holding more says so (Bounded).
	TimelineMax = 5000
	// timelinePage is one List call's largest size while paging back in
	// time, timelineFirstPage its smallest first: a short list over many
	// groups (the queue's 200 newest core memories of 41 groups) reads
	// about its share per group, not 32 decoded records of each.
	timelinePage      = 1000
	timelineFirstPage = 8
	// TimelineList is how many records the browsable list shows.
	TimelineList = 100
	// timelineScan bounds the records the list looks through (and
	// scores) for its filters.
	timelineScan = 1000
)

// window is the records of groups (and kinds, when given) with ts in
// [since, until], newest first, at most max; bounded is true when max
// stopped the read before since.
func window(ctx context.Context, l memsync.Lister, groups []string, kinds []journal.Kind, since, until time.Time, max int) (out []memsync.Node, bounded bool, err error) {
	out, bounded, _, err = windowOf(ctx, l, memsync.ListQuery{Groups: groups, Kinds: kinds, Until: until}, since, max)
	return out, bounded, err
}

// windowOf is window for the records meeting q (its groups, kinds, core
// and until; its limit is max), and next is the ts of the newest record
// max left out (zero when not bounded).
//
// Each group is read on its own, newest first, in pages that grow from
// about max over the groups to timelinePage, and the groups are merged:
// a List over all the groups at once returns up to its limit from every
// group, so paging that way decoded about as many records per group as
// the window holds (at 100,000 memories over 5 groups a 5,000-record
// window decoded over 20,000 nodes); this way it decodes the window plus
// at most a page per group.
func windowOf(ctx context.Context, l memsync.Lister, q memsync.ListQuery, since time.Time, most int) (out []memsync.Node, bounded bool, next time.Time, err error) {
	groups := q.Groups
	if len(groups) == 0 {
		return nil, false, time.Time{}, nil
	}
	until := q.Until
	type cursor struct {
		group string
		buf   []memsync.Node
		until time.Time
		size  int
		done  bool
	}
	seen := map[string]bool{}
	stuck := false
	fill := func(c *cursor) error {
		gq := q
		gq.Groups, gq.Until, gq.Limit = []string{c.group}, c.until, c.size
		got, err := l.List(ctx, gq)
		if err != nil {
			return fmt.Errorf("list records of %s: %w", c.group, err)
		}
		fresh := 0
		for _, n := range got {
			if seen[n.UUID] {
				continue
			}
			seen[n.UUID] = true
			fresh++
			c.buf = append(c.buf, n)
		}
		switch {
		case len(got) < c.size:
			c.done = true // the group has no more
		case fresh == 0:
			// A page all of one ts: Until is inclusive, so the read can
			// go no further back.
			c.done, stuck = true, true
		default:
			c.until = got[len(got)-1].TS
		}
		c.size = min(c.size*4, timelinePage)
		return nil
	}
	first := min(max(timelineFirstPage, (most+1)/len(groups)+1), timelinePage, most+1)
	var cs []*cursor
	for _, g := range groups {
		if !slices.ContainsFunc(cs, func(c *cursor) bool { return c.group == g }) {
			cs = append(cs, &cursor{group: g, until: until, size: first})
		}
	}
	for {
		var head *cursor
		for _, c := range cs {
			if len(c.buf) == 0 && !c.done {
				if err := fill(c); err != nil {
					return nil, false, time.Time{}, err
				}
			}
			if len(c.buf) > 0 && (head == nil || memsync.NewerFirst(c.buf[0], head.buf[0]) < 0) {
				head = c
			}
		}
		if head == nil {
			return out, stuck, time.Time{}, nil
		}
		n := head.buf[0]
		if n.TS.Before(since) {
			return out, false, time.Time{}, nil
		}
		if len(out) == most {
			return out, true, n.TS, nil
		}
		out = append(out, n)
		head.buf = head.buf[1:]
	}
}

// Chart geometry (pixels).
const (
	tlLeft, tlTop, tlPlotH, tlBarGap = 44, 12, 150, 2
	tlWidth                          = 860
)

// agentColors tell the agents apart in the chart, in the fleet's order.
var agentColors = []string{"#1f6feb", "#d97706", "#1a7f37", "#8250df", "#cf222e", "#0e7490", "#9a6700", "#57606a"}

// tlBar is one agent's share of one day.
type tlBar struct {
	X, Y, W, H int
	Fill       string
	Day, Agent string
	Count      int
	Kinds      string // "fact 2, decision 1"
}

type tlTick struct {
	X, Y  int
	Label string
}

type tlLegend struct {
	Agent, Fill         string
	X, Y, TX, TY, Total int
}

// kindRow is one agent's records per kind over the window.
type kindRow struct {
	Agent  string
	Counts []int
	Total  int
}

// timeline is the chart and the per-agent, per-kind table.
type timeline struct {
	Width, Height, PlotBottom, AxisRight int
	Days                                 int
	From, To, At                         string
	Bars                                 []tlBar
	XTicks, YTicks                       []tlTick
	Legend                               []tlLegend
	Kinds                                []string
	Rows                                 []kindRow
	Total                                int
	Bounded                              bool
	Max                                  int
}

// buildTimeline counts nodes per UTC day per agent and kind over the days
// up to now.
func buildTimeline(nodes []memsync.Node, agents []string, days int, now time.Time, bounded bool) timeline {
	now = now.UTC()
	last := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	first := last.AddDate(0, 0, -(days - 1))
	t := timeline{Width: tlWidth, Height: tlTop + tlPlotH + 58, PlotBottom: tlTop + tlPlotH, AxisRight: tlWidth - 8, Days: days,
		From: first.Format("2006-01-02"), To: last.Format("2006-01-02"), Bounded: bounded, Max: TimelineMax, At: now.Format(time.RFC3339)}
	type key struct {
		day   int
		agent string
	}
	perDay := map[key]map[journal.Kind]int{}
	dayTotal := make([]int, days)
	perKind := map[string]map[journal.Kind]int{}
	kinds := map[journal.Kind]bool{}
	for _, n := range nodes {
		ts := n.TS.UTC()
		d := int(ts.Sub(first).Hours() / 24)
		if ts.Before(first) || d >= days {
			continue
		}
		k := key{d, n.Agent}
		if perDay[k] == nil {
			perDay[k] = map[journal.Kind]int{}
		}
		perDay[k][n.Kind]++
		dayTotal[d]++
		if perKind[n.Agent] == nil {
			perKind[n.Agent] = map[journal.Kind]int{}
		}
		perKind[n.Agent][n.Kind]++
		kinds[n.Kind] = true
		t.Total++
	}
	yMax := max(slices.Max(append(dayTotal, 1)), 1)
	top := niceTop(yMax) // a round top for the axis
	plotW := tlWidth - tlLeft - 8
	slot := plotW / days
	barW := max(slot-tlBarGap, 1)
	colors := map[string]string{}
	for i, a := range agents {
		colors[a] = agentColors[i%len(agentColors)]
	}
	for d := range days {
		x := tlLeft + d*slot + tlBarGap/2
		y := tlTop + tlPlotH
		day := first.AddDate(0, 0, d).Format("2006-01-02")
		for _, a := range agents {
			byKind := perDay[key{d, a}]
			c := 0
			for _, v := range byKind {
				c += v
			}
			if c == 0 {
				continue
			}
			h := max(c*tlPlotH/top, 1)
			y -= h
			t.Bars = append(t.Bars, tlBar{X: x, Y: y, W: barW, H: h, Fill: colors[a], Day: day, Agent: a, Count: c, Kinds: kindList(byKind)})
		}
		if (days-1-d)%7 == 0 {
			t.XTicks = append(t.XTicks, tlTick{X: x, Y: tlTop + tlPlotH + 14, Label: first.AddDate(0, 0, d).Format("Jan 2")})
		}
	}
	for _, v := range []int{0, top / 2, top} {
		if v == top/2 && (top < 2 || top%2 != 0) {
			continue
		}
		t.YTicks = append(t.YTicks, tlTick{X: tlLeft - 6, Y: tlTop + tlPlotH - v*tlPlotH/top + 4, Label: strconv.Itoa(v)})
	}
	for _, k := range journal.Kinds {
		if kinds[k] {
			t.Kinds = append(t.Kinds, string(k))
		}
	}
	x := tlLeft
	for _, a := range agents {
		row := kindRow{Agent: a}
		for _, k := range t.Kinds {
			c := perKind[a][journal.Kind(k)]
			row.Counts = append(row.Counts, c)
			row.Total += c
		}
		t.Rows = append(t.Rows, row)
		t.Legend = append(t.Legend, tlLegend{Agent: a, Fill: colors[a], X: x, Y: t.PlotBottom + 28, TX: x + 16, TY: t.PlotBottom + 39, Total: row.Total})
		x += 40 + 8*len([]rune(a)) + 8*len(strconv.Itoa(row.Total))
	}
	return t
}

// niceTop is the smallest of 1, 2, 5, 10, 20, 50, ... at or above v.
func niceTop(v int) int {
	for base := 1; ; base *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*base >= v {
				return m * base
			}
		}
	}
}

// kindList is "fact 2, decision 1" in journal.Kinds' order.
func kindList(by map[journal.Kind]int) string {
	s := ""
	for _, k := range journal.Kinds {
		if c := by[k]; c > 0 {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%s %d", k, c)
		}
	}
	return s
}

type timelineBody struct {
	Chart                       timeline
	Since, Author, Kind, Status string
	Days                        int
	Agents, Kinds, Statuses     []string
	Err                         string
	List                        []memView
	Scanned                     int
	ListBounded, More           bool
	SinceAt                     string
	Choices                     []link // this week, ...
}

// timelineStatuses are the list's status choices ("" is any).
var timelineStatuses = []string{"", string(score.Active), string(score.Review), string(score.Archived), string(score.Superseded), "wrong"}

// fleetTimeline reads the chart of the viewer's records over days.
func (s *Server) fleetTimeline(ctx context.Context, sr memsync.Searcher, v viewer, days int) (timeline, error) {
	l, ok := sr.(memsync.Lister)
	if !ok {
		return timeline{}, fmt.Errorf("%T cannot list memories", sr)
	}
	now := s.cfg.Now().UTC()
	from := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -(days - 1))
	var nodes []memsync.Node
	var bounded bool
	if days <= recentDays {
		r, err := s.recentWindow(ctx, l, v)
		if err != nil {
			return timeline{}, err
		}
		nodes, bounded = r.since(from)
	} else {
		var err error
		if nodes, bounded, err = window(ctx, l, v.groups(), nil, from, time.Time{}, TimelineMax); err != nil {
			return timeline{}, err
		}
	}
	return buildTimeline(nodes, v.Agents, days, now, bounded), nil
}

func (s *Server) timelinePage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	p := s.newPage(r, "timeline", "timeline", v)
	body := timelineBody{Since: q.Get("since"), Author: q.Get("author"), Kind: q.Get("kind"), Status: q.Get("status"),
		Agents: v.Agents, Statuses: timelineStatuses, Days: TimelineDays}
	if body.Since == "" {
		body.Since = "7d"
	}
	for _, k := range journal.Kinds {
		body.Kinds = append(body.Kinds, string(k))
	}
	for _, c := range []struct{ label, since string }{{"today", "today"}, {"this week", "7d"}, {"2 weeks", "14d"}, {"30 days", "30d"}} {
		body.Choices = append(body.Choices, link{Label: c.label, Href: p.URL("/timeline", "since", c.since, "author", body.Author, "kind", body.Kind, "status", body.Status),
			Current: c.since == body.Since})
	}
	if d := q.Get("days"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 || n > timelineMaxDays {
			body.Err = fmt.Sprintf("days: a number of days from 1 to %d", timelineMaxDays)
		} else {
			body.Days = n
		}
	}
	now := s.cfg.Now()
	var kinds []journal.Kind
	switch {
	case body.Kind != "" && !journal.Kind(body.Kind).Valid():
		body.Err = fmt.Sprintf("unknown kind %q", body.Kind)
	case !slices.Contains(timelineStatuses, body.Status):
		body.Err = fmt.Sprintf("unknown status %q", body.Status)
	case body.Author != "" && !slices.Contains(v.Agents, body.Author):
		body.Err = fmt.Sprintf("no such agent %q", body.Author)
	case body.Kind != "":
		kinds = []journal.Kind{journal.Kind(body.Kind)}
	}
	since, err := memsync.ParseSince(body.Since, now)
	if err != nil && body.Err == "" {
		body.Err = "since: " + err.Error()
	}
	body.SinceAt = since.UTC().Format(time.RFC3339)
	ctx := r.Context()
	rd := s.open(ctx)
	defer rd.close()
	err = rd.do(ctx, func(sr memsync.Searcher) (err error) {
		body.List, body.Scanned, body.ListBounded, body.More = nil, 0, false, false
		if body.Chart, err = s.cachedTimeline(ctx, sr, v, body.Days); err != nil {
			return err
		}
		if body.Err != "" {
			return nil
		}
		groups := v.groups()
		if body.Author != "" {
			// An author's records are in the shared group and its own.
			groups = slices.DeleteFunc(groups, func(g string) bool {
				return g != journal.SharedGroup && g != journal.PrivateGroup(body.Author)
			})
		}
		// With no status or author to filter by, the list is the window's
		// newest TimelineList records: one more tells whether there are
		// more, and nothing past them needs reading or scoring.
		scan := timelineScan
		if body.Status == "" && body.Author == "" {
			scan = TimelineList + 1
		}
		nodes, bounded, err := window(ctx, sr.(memsync.Lister), groups, kinds, since, time.Time{}, scan)
		if err != nil {
			return err
		}
		body.Scanned, body.ListBounded = len(nodes), bounded && scan == timelineScan
		nodes = slices.DeleteFunc(nodes, func(n memsync.Node) bool { return body.Author != "" && n.Agent != body.Author })
		if body.Status == "" && len(nodes) > TimelineList {
			nodes, body.More = nodes[:TimelineList], true
		}
		scored, err := readpath.ScoreNodes(ctx, sr, nodes, v.groups(), memsync.Present(now))
		if err != nil {
			return err
		}
		for _, n := range nodes {
			sc := scored[n.UUID]
			if !statusMatches(body.Status, sc.Result) {
				continue
			}
			if len(body.List) == TimelineList {
				body.More = true
				break
			}
			body.List = append(body.List, p.scored(&sc))
		}
		return p.annotate(ctx, sr, body.List)
	})
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	p.Source, p.Reason = rd.source()
	p.Body = body
	s.render(w, http.StatusOK, p)
}
