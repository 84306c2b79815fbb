package webui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/feedback"
	"github.com/memsync/memsync/memsync/packet"
	readpath "github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/recall"
	"github.com/memsync/memsync/memsync/score"
)

// viewerOrNotFound reads ?as=; an unknown agent is the 404 page.
func (s *Server) viewerOrNotFound(w http.ResponseWriter, r *http.Request) (viewer, bool) {
	v, err := s.viewerOf(r)
	if errors.Is(err, errNoAgent) {
		s.notFound(w, r, "no such agent: "+v.As)
		return v, false
	}
	if err != nil {
		s.fail(w, r, v, err)
		return v, false
	}
	return v, true
}

// fleetRow is one agent of the fleet table.
type fleetRow struct {
	memsync.AgentStatus
	Href string
	Lag  string
}

type fleetBody struct {
	Fleet                   *Fleet
	Err                     string
	Rows                    []fleetRow
	AsOf                    string
	Remote                  string
	Timeline                timeline
	Queue                   []queueSection
	QueueHref, TimelineHref string
	ReadErr                 string
}

func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	p := s.newPage(r, "fleet", "fleet", v)
	p.Refresh = 10
	body := fleetBody{AsOf: s.cfg.Now().UTC().Format(time.RFC3339)}
	byAgent := map[string]memsync.AgentStatus{}
	if s.cfg.Fleet != nil {
		f, err := s.fleetStatus(r.Context())
		if err != nil {
			body.Err = err.Error()
		} else {
			body.Fleet = &f
			for _, a := range f.Report.Agents {
				byAgent[a.Agent] = a
			}
			if !f.Report.Graph.Reachable {
				p.Source, p.Reason = "journals", f.Report.Graph.Error
			}
			body.Remote = remoteLine(f.Remote, s.cfg.Now())
		}
	}
	for _, a := range v.Agents {
		st, ok := byAgent[a]
		if !ok {
			st = memsync.AgentStatus{Agent: a}
		}
		body.Rows = append(body.Rows, fleetRow{AgentStatus: st, Href: p.URL("/agents/" + url.PathEscape(a)),
			Lag: (time.Duration(st.LagSeconds) * time.Second).String()})
	}
	// What the fleet wrote lately and what waits for a person.
	ctx := r.Context()
	rd := s.open(ctx)
	defer rd.close()
	err := rd.do(ctx, func(sr memsync.Searcher) (err error) {
		if body.Timeline, err = s.cachedTimeline(ctx, sr, v, TimelineDays); err != nil {
			return err
		}
		q, err := s.cachedQueue(ctx, sr, p)
		body.Queue = q.Sections
		return err
	})
	if err != nil {
		body.ReadErr = err.Error()
	}
	body.QueueHref, body.TimelineHref = p.URL("/queue"), p.URL("/timeline")
	p.Body = body
	s.render(w, http.StatusOK, p)
}

// remoteLine is the git exchange in one line.
func remoteLine(st *Exchange, now time.Time) string {
	if st == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s: ", st.Remote, st.Branch)
	if st.LastSuccess.IsZero() {
		b.WriteString("never exchanged")
	} else {
		fmt.Fprintf(&b, "last exchange %s (%s ago)", st.LastSuccess.UTC().Format(time.RFC3339), now.Sub(st.LastSuccess).Round(time.Second))
	}
	fmt.Fprintf(&b, ", %d ahead, %d behind", st.Ahead, st.Behind)
	if len(st.Conflicts) > 0 {
		fmt.Fprintf(&b, "; MERGE CONFLICT for a person to resolve: %s", strings.Join(st.Conflicts, ", "))
	}
	if st.LastError != "" {
		fmt.Fprintf(&b, "; last error: %s", st.LastError)
	}
	return b.String()
}

type agentBody struct {
	Agent                                     string
	Sees                                      bool   // what the agent sees, not what it wrote
	Modes                                     []link // wrote / sees
	Mode, TimelineHref                        string
	Core, Newest, Review, Waiting, Promotions []memView
	Bound                                     string
}

// Bounds of the agent page's lists: it reads lists, never the whole store.
const (
	agentCoreLimit   = 50
	agentNewestLimit = 20
	agentOlderLimit  = 200
	agentDecisions   = 100
	agentPromotions  = 30
	agentOlderThan   = 7 * score.Day
)

func (s *Server) agentPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	agent := r.PathValue("agent")
	if !slices.Contains(v.Agents, agent) {
		s.notFound(w, r, "no such agent: "+agent)
		return
	}
	// The memory agent works with, as far as the viewer may see it.
	var groups []string
	for _, g := range journal.ReaderGroups(agent) {
		if v.sees(g) {
			groups = append(groups, g)
		}
	}
	p := s.newPage(r, "agent", "agent "+agent, v)
	sees := r.URL.Query().Get("view") == "sees"
	body := agentBody{Agent: agent, Sees: sees, Bound: fmt.Sprintf("review: among the core tier and the %d newest memories older than %d days; promotions: of the private memories listed here", agentOlderLimit, agentOlderThan/score.Day)}
	body.Mode = "what " + agent + " wrote (shared and its own private records)"
	if sees {
		body.Mode = "what " + agent + " sees: shared records by every agent, and its own private ones"
	}
	body.Modes = []link{{Label: "what it wrote", Href: p.URL("/agents/" + url.PathEscape(agent)), Current: !sees},
		{Label: "what it sees", Href: p.URL("/agents/"+url.PathEscape(agent), "view", "sees"), Current: sees}}
	body.TimelineHref = p.URL("/timeline", "author", agent, "since", "30d")
	// What it wrote: the lists are read wider and kept to its records.
	newest := agentNewestLimit
	if !sees {
		newest = agentOlderLimit
	}
	ctx := r.Context()
	clock := memsync.Present(s.cfg.Now())
	rd := s.open(ctx)
	defer rd.close()
	err := rd.do(ctx, func(sr memsync.Searcher) error {
		body.Core, body.Newest, body.Review, body.Waiting, body.Promotions = nil, nil, nil, nil, nil
		l, ok := sr.(memsync.Lister)
		if !ok {
			return fmt.Errorf("%T cannot list memories", sr)
		}
		queries := []memsync.ListQuery{
			{Groups: groups, Core: true, Limit: agentCoreLimit},
			{Groups: groups, Limit: newest},
			{Groups: groups, Until: clock.At.Add(-agentOlderThan), Limit: agentOlderLimit},
			{Groups: groups, Kinds: []journal.Kind{journal.KindDecision}, Until: clock.At.Add(-score.FollowUpAfter), Limit: agentDecisions},
		}
		lists := make([][]memsync.Node, len(queries))
		var all []memsync.Node
		seen := map[string]bool{}
		for i, q := range queries {
			if len(q.Groups) == 0 {
				continue
			}
			got, err := l.List(ctx, q)
			if err != nil {
				return fmt.Errorf("list %s's memories: %w", agent, err)
			}
			lists[i] = got
			for _, n := range got {
				if !seen[n.UUID] {
					seen[n.UUID] = true
					all = append(all, n)
				}
			}
		}
		// Promotions: listing a kind the store holds few of would scan
		// the whole shared group, so the promotions of the agent's private
		// memories listed here are looked up by their derived uuids
		// (memsync.PromotionUUID), with any promotion the lists hold.
		var promoIDs []string
		for _, n := range all {
			if n.Agent == agent && n.Scope == journal.ScopePrivate {
				promoIDs = append(promoIDs, memsync.PromotionUUID(n.UUID))
			}
		}
		promos, err := sr.Get(ctx, promoIDs)
		if err != nil {
			return fmt.Errorf("read %s's promotions: %w", agent, err)
		}
		var promoted []memsync.Node
		for _, n := range all {
			if n.Kind == journal.KindPromotion && n.Agent == agent {
				promoted = append(promoted, n)
			}
		}
		for _, id := range promoIDs {
			if n, ok := promos[id]; ok && !seen[id] && slices.Contains(groups, n.Record.GroupID()) {
				seen[id] = true
				promoted = append(promoted, n)
				all = append(all, n)
			}
		}
		slices.SortFunc(promoted, memsync.NewerFirst)
		if len(promoted) > agentPromotions {
			promoted = promoted[:agentPromotions]
		}
		lists = append(lists, promoted)
		scored, err := readpath.ScoreNodes(ctx, sr, all, groups, clock)
		if err != nil {
			return err
		}
		view := func(n memsync.Node) memView {
			sc := scored[n.UUID]
			return p.scored(&sc)
		}
		mine := func(n memsync.Node) bool { return sees || n.Agent == agent }
		for _, n := range lists[0] {
			if mine(n) {
				body.Core = append(body.Core, view(n))
			}
		}
		for _, n := range lists[1] {
			if mine(n) && len(body.Newest) < agentNewestLimit {
				body.Newest = append(body.Newest, view(n))
			}
		}
		inReview := map[string]bool{}
		for _, n := range append(slices.Clone(lists[0]), lists[2]...) {
			sc := scored[n.UUID]
			if sc.Result.Status != score.Review || inReview[n.UUID] || !mine(n) {
				continue
			}
			inReview[n.UUID] = true
			m := view(n)
			m.Extra = "past max_age " + sc.Result.MaxAgeLabel
			if sc.Result.ToReview {
				m.Extra = "core memory contradicted by a newer record"
			}
			body.Review = append(body.Review, m)
		}
		for _, n := range lists[3] {
			sc := scored[n.UUID]
			if n.Agent == agent && score.AwaitingOutcomeOf(n.Kind, n.TS, sc.Result, clock.At) {
				m := view(n)
				m.Extra = score.FollowUpQuestion(n.Text, n.TS)
				body.Waiting = append(body.Waiting, m)
			}
		}
		for _, n := range lists[4] {
			if n.Agent == agent {
				m := view(n)
				if len(n.Links) > 0 {
					m.Extra = "promoted from " + n.Links[0]
				}
				body.Promotions = append(body.Promotions, m)
			}
		}
		return p.annotate(ctx, sr, body.Core, body.Newest, body.Review)
	})
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	p.Source, p.Reason = rd.source()
	p.Body = body
	s.render(w, http.StatusOK, p)
}

// hitView is one search hit with explain's factors.
type hitView struct {
	memView
	Score   float64
	Factors score.Factors
	Terms   int
	Lexical float64
	Parts   recall.Parts
	Hybrid  bool
}

type searchBody struct {
	Q, Kind, Status, Since string
	Kinds, Statuses        []string
	Ran                    bool
	Err                    string
	Hits                   []hitView
}

// searchStatuses are the status filter's choices: "" is default search
// (retired memories left out, SPEC §7); "all" is search --all.
var searchStatuses = []string{"", string(score.Active), string(score.Review), string(score.Archived), string(score.Superseded), "wrong", "all"}

// searchLimit is how many hits the page shows.
const searchLimit = 20

func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	p := s.newPage(r, "search", "search", v)
	body := searchBody{Q: q.Get("q"), Kind: q.Get("kind"), Status: q.Get("status"), Since: q.Get("since"), Statuses: searchStatuses}
	for _, k := range journal.Kinds {
		body.Kinds = append(body.Kinds, string(k))
	}
	now := s.cfg.Now()
	rq := memsync.RankQuery{SearchQuery: memsync.SearchQuery{Text: body.Q, Groups: v.groups(), Limit: searchLimit}, Clock: memsync.Present(now)}
	switch {
	case body.Kind != "" && !journal.Kind(body.Kind).Valid():
		body.Err = fmt.Sprintf("unknown kind %q", body.Kind)
	case !slices.Contains(searchStatuses, body.Status):
		body.Err = fmt.Sprintf("unknown status %q", body.Status)
	case body.Kind != "":
		rq.Kinds = []journal.Kind{journal.Kind(body.Kind)}
	}
	if body.Since != "" && body.Err == "" {
		t, err := memsync.ParseSince(body.Since, now)
		if err != nil {
			body.Err = "since: " + err.Error()
		}
		rq.Since = t
	}
	if body.Status != "" {
		// A status filter looks through the whole candidate pool.
		rq.All = body.Status != string(score.Active) && body.Status != string(score.Review)
		rq.Limit = readpath.PoolSize
	}
	if strings.TrimSpace(body.Q) != "" && body.Err == "" {
		body.Ran = true
		ctx := r.Context()
		rd := s.open(ctx)
		defer rd.close()
		var hits []memsync.Ranked
		err := rd.do(ctx, func(sr memsync.Searcher) (err error) {
			hits, err = readpath.Rank(ctx, sr, rq)
			return err
		})
		if err != nil {
			s.fail(w, r, v, err)
			return
		}
		p.Source, p.Reason = rd.source()
		for _, h := range hits {
			if !statusMatches(body.Status, h.Result) {
				continue
			}
			if len(body.Hits) == searchLimit {
				break
			}
			body.Hits = append(body.Hits, hitView{memView: p.scored(&h.Scored), Score: h.Score, Factors: h.Factors,
				Terms: recall.Held(h.Match), Lexical: h.Lexical, Parts: h.Parts, Hybrid: h.Parts.VecRank > 0 || h.Parts.Cosine != 0})
		}
	}
	p.Body = body
	s.render(w, http.StatusOK, p)
}

// statusMatches applies the search page's status filter to a result.
func statusMatches(filter string, r score.Result) bool {
	switch filter {
	case "", "all":
		return true
	case "wrong":
		return r.FlaggedWrong
	}
	return string(r.Status) == filter
}

// edgeView is one edge of the memory page.
type edgeView struct {
	Type, Dir string
	Other     memView
}

type memoryBody struct {
	Mem        memView
	Record     *journal.Record
	Why        string
	Tags       string
	Entities   []link
	SourceLine string
	Path       string
	Line       int
	Commit     string
	Tier       string
	MaxAge     string
	ReplacedBy string
	Edges      []edgeView
	History    chart
	Events     []eventView
	Basis      []string
	Feedbacks  []string
	Flash      string
	FlagState  string // shown, pending (the daemon projects it) or sync
	FlagNotice string
	GraphHref  string
	FlagAction string
}

// eventView is one of explain's events.
type eventView struct {
	TS, Kind, Effect, UUID, Href string
	Text                         string // the referencing record's text, when the viewer may see it
}

func (s *Server) memoryPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	uuid := r.PathValue("uuid")
	ctx := r.Context()
	clock := memsync.Present(s.cfg.Now())
	rd := s.open(ctx)
	defer rd.close()
	var sc memsync.Scored
	var points []memsync.HistoryPoint
	history := func(sr memsync.Searcher) (err error) {
		sc, points, err = readpath.History(ctx, sr, uuid, v.groups(), clock)
		return err
	}
	// Not projected yet: the journals have it (as show and explain do).
	err := rd.doMissing(ctx, history, notVisible)
	if errors.Is(err, readpath.ErrNotVisible) {
		s.notFound(w, r, "no such memory: "+uuid)
		return
	}
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	p := s.newPage(r, "memory", "memory "+uuid, v)
	p.Source, p.Reason = rd.source()
	rec := sc.Record
	body := memoryBody{Mem: p.scored(&sc), Record: &rec, Why: rec.Why, Tags: strings.Join(rec.Tags, ", "),
		Path: sc.Path, Line: sc.Line, Tier: rec.Tier, MaxAge: sc.Result.MaxAgeLabel, Basis: sc.Result.Basis,
		Feedbacks: journal.Feedbacks, GraphHref: p.URL("/graph/" + url.PathEscape(uuid)),
		FlagAction: p.URL("/memory/" + url.PathEscape(uuid) + "/flag")}
	if body.Tier == "" {
		body.Tier = "working"
	}
	for _, e := range rec.AllEntities() {
		body.Entities = append(body.Entities, link{Label: e, Href: p.URL("/graph/entity/" + url.PathEscape(e))})
	}
	if src := rec.Source; src != nil {
		body.SourceLine = strings.TrimSpace(src.Type + " " + src.Actor)
		if src.Context != "" {
			body.SourceLine += " (" + src.Context + ")"
		}
	}
	if s.cfg.Commit != nil && sc.Path != "" {
		c, err := s.cfg.Commit(ctx, sc.Path, sc.Line)
		switch {
		case err != nil:
			body.Commit = "unknown (" + err.Error() + ")"
		case c == "":
			body.Commit = "not committed yet"
		default:
			body.Commit = c
		}
	}
	if sc.Result.Status == score.Superseded {
		body.ReplacedBy = sc.ReplacedBy
	}
	for _, e := range sc.Result.Effects {
		ev := eventView{Kind: string(e.Kind), Effect: e.Text()}
		// As explain: a record the reader may not see is never named.
		if id, ts := e.Named(); !ts.IsZero() {
			ev.TS, ev.UUID = ts.UTC().Format(time.RFC3339), id
			if id != "" {
				ev.Href = p.URL("/memory/" + url.PathEscape(id))
			}
		}
		body.Events = append(body.Events, ev)
	}
	body.History = historyChart(points)
	if err := rd.do(ctx, func(sr memsync.Searcher) (err error) {
		if body.Edges, err = s.edges(ctx, sr, p, &sc.Node); err != nil {
			return err
		}
		return eventTexts(ctx, sr, p, body.Events)
	}); err != nil {
		s.fail(w, r, v, err)
		return
	}
	if q := r.URL.Query(); q.Get("flagged") != "" {
		body.Flash = fmt.Sprintf("Journaled: %s flagged this memory %s (feedback record %s).", q.Get("by"), q.Get("flagged"), q.Get("record"))
		shown := false
		for _, e := range sc.Result.Effects {
			shown = shown || e.UUID == q.Get("record")
		}
		switch {
		case shown:
			body.FlagState, body.FlagNotice = "shown", "It shows now: the importance, status and events below include it."
		case s.projects(ctx):
			body.FlagState, body.FlagNotice = "pending", "The daemon projects it within seconds: this page reloads until the importance and status below include it."
			p.Refresh = 2
		default:
			body.FlagState, body.FlagNotice = "sync", "No daemon is running, so the graph does not have it yet: the importance and status below change at the next memsync sync (or once memsync run starts)."
		}
	}
	p.Body = body
	s.render(w, http.StatusOK, p)
}

// eventTexts sets the text of each event's record the viewer may see, so
// that an event reads as what it says, not as a uuid.
func eventTexts(ctx context.Context, sr memsync.Searcher, p *page, events []eventView) error {
	var ids []string
	for _, e := range events {
		if e.UUID != "" {
			ids = append(ids, e.UUID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	got, err := sr.Get(ctx, ids)
	if err != nil {
		return fmt.Errorf("read the events' records: %w", err)
	}
	for i, e := range events {
		if n, ok := got[e.UUID]; ok && p.v.sees(n.Record.GroupID()) {
			events[i].Text = n.Agent + ": " + short(n.Text, 160)
		}
	}
	return nil
}

// outEdges are the edges a record's own fields name, by type.
func outEdges(rec *journal.Record) [][2]string {
	var out [][2]string
	supports := rec.Supports()
	for _, id := range rec.Links {
		out = append(out, [2]string{memsync.RelLinksTo, id})
	}
	for _, id := range supports {
		out = append(out, [2]string{memsync.RelSupports, id})
	}
	for _, id := range rec.Supersedes {
		out = append(out, [2]string{"SUPERSEDES", id})
	}
	for _, id := range rec.ConflictsWith {
		out = append(out, [2]string{memsync.RelConflictsWith, id})
	}
	return out
}

// edges is memory n's edges both ways, to and from memories the viewer
// may see: the ones its record names, the records naming it (links,
// supports, conflicts, feedback), and the record that replaced it.
func (s *Server) edges(ctx context.Context, sr memsync.Searcher, p *page, n *memsync.Node) ([]edgeView, error) {
	out := outEdges(&n.Record)
	var ids []string
	for _, e := range out {
		ids = append(ids, e[1])
	}
	if n.ReplacedBy != "" {
		ids = append(ids, n.ReplacedBy)
	}
	got, err := sr.Get(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read %s's edges: %w", n.UUID, err)
	}
	var edges []edgeView
	for _, e := range out {
		if o, ok := got[e[1]]; ok && p.v.sees(o.Record.GroupID()) {
			edges = append(edges, edgeView{Type: e[0], Dir: "out", Other: p.mem(&o)})
		}
	}
	if o, ok := got[n.ReplacedBy]; ok && p.v.sees(o.Record.GroupID()) {
		edges = append(edges, edgeView{Type: "SUPERSEDES", Dir: "in", Other: p.mem(&o)})
	}
	refs, err := sr.Incoming(ctx, []string{n.UUID})
	if err != nil {
		return nil, fmt.Errorf("read records naming %s: %w", n.UUID, err)
	}
	slices.SortFunc(refs, func(a, b memsync.Reference) int { return a.Source.TS.Compare(b.Source.TS) })
	for _, ref := range refs {
		if p.v.sees(ref.Source.Record.GroupID()) {
			edges = append(edges, edgeView{Type: ref.Relation, Dir: "in", Other: p.mem(&ref.Source)})
		}
	}
	return edges, nil
}

// flag journals a person's flag as `memsync flag` does (package
// feedback), then sends the browser back to the memory (303).
// MaxFlagNote bounds a flag's note (bytes), and maxFlagForm the whole
// flag form: a larger one is refused with 413 before anything is read
// into memory or journaled (a journal line holds at most 1 MiB).
const (
	MaxFlagNote = 16 << 10
	maxFlagForm = 64 << 10
)

func (s *Server) flag(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFlagForm)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("request too large: a flag's form is at most %d KiB (its note at most %d KiB)", maxFlagForm>>10, MaxFlagNote>>10), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(r.PostFormValue("note")) > MaxFlagNote {
		http.Error(w, fmt.Sprintf("request too large: a flag's note is at most %d KiB", MaxFlagNote>>10), http.StatusRequestEntityTooLarge)
		return
	}
	if !s.csrfOK(r) {
		http.Error(w, "forbidden: missing or wrong CSRF token, or another origin", http.StatusForbidden)
		return
	}
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	uuid := r.PathValue("uuid")
	value, by, note := r.PostFormValue("flag"), strings.TrimSpace(r.PostFormValue("by")), strings.TrimSpace(r.PostFormValue("note"))
	if !slices.Contains(journal.Feedbacks, value) {
		http.Error(w, fmt.Sprintf("flag: one of %s", strings.Join(journal.Feedbacks, ", ")), http.StatusBadRequest)
		return
	}
	if by == "" {
		http.Error(w, "by: the name of the person flagging is required", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	rd := s.open(ctx)
	defer rd.close()
	n, found, err := readpath.Find(ctx, rd.r, uuid)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	if !found || !v.sees(n.Record.GroupID()) {
		s.notFound(w, r, "no such memory: "+uuid)
		return
	}
	res, err := feedback.Journal(s.layout, n, feedback.Flag{Feedback: value, By: by, Note: note, Writer: v.As},
		feedback.Options{FSync: s.cfg.FSync, Now: s.cfg.Now})
	if errors.Is(err, feedback.ErrNotVisible) {
		s.notFound(w, r, "no such memory: "+uuid)
		return
	}
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	// The flag changes counts and the queue once projected: read them
	// afresh from then on rather than from what was cached before it.
	s.forget()
	http.Redirect(w, r, urlAs(v.As, "/memory/"+url.PathEscape(uuid), "flagged", value, "by", by, "record", res.Record.UUID), http.StatusSeeOther)
}

type packetBody struct {
	Role, Goal, Agent string
	Roles, Agents     []string
	FixedAgent        bool
	Err               string
	Built             bool
	Sections          []packetSection
	Candidates        int
}

type packetSection struct {
	Name  string
	Items []packetItem
}

type packetItem struct {
	memView
	Why      string
	IsMemory bool
}

func (s *Server) packetPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	p := s.newPage(r, "packet", "packet", v)
	body := packetBody{Role: q.Get("role"), Goal: q.Get("goal"), Agent: q.Get("agent"), Agents: v.Agents, FixedAgent: v.As != ""}
	for _, role := range packet.Roles {
		body.Roles = append(body.Roles, string(role))
	}
	if v.As != "" {
		body.Agent = v.As
	}
	if body.Agent == "" && len(v.Agents) > 0 {
		body.Agent = v.Agents[0]
	}
	if body.Role != "" && strings.TrimSpace(body.Goal) != "" {
		req := packet.Request{Role: packet.Role(body.Role), Agent: body.Agent, Goal: body.Goal, AsOf: s.cfg.Now().UTC()}
		if err := req.Validate(); err != nil || !slices.Contains(v.Agents, body.Agent) {
			body.Err = fmt.Sprintf("%v", err)
			if err == nil {
				body.Err = "no such agent: " + body.Agent
			}
		} else {
			ctx := r.Context()
			rd := s.open(ctx)
			defer rd.close()
			var pk packet.Packet
			var groups map[string]memsync.Node
			err := rd.do(ctx, func(sr memsync.Searcher) (err error) {
				if pk, err = packet.BuildPacket(ctx, sr, req); err != nil {
					return err
				}
				var ids []string
				for _, it := range slices.Concat(pk.Core, pk.HardConstraints, pk.ProceduresToFollow, pk.PitfallsToAvoid, pk.RelevantFacts, pk.OpenQuestions) {
					if it.UUID != "" {
						ids = append(ids, it.UUID)
					}
				}
				groups, err = sr.Get(ctx, ids)
				return err
			})
			if err != nil {
				s.fail(w, r, v, err)
				return
			}
			p.Source, p.Reason = rd.source()
			body.Built, body.Candidates = true, pk.Candidates
			for _, sec := range []struct {
				name  string
				items []packet.Item
			}{{"core", pk.Core}, {"hard constraints", pk.HardConstraints}, {"procedures to follow", pk.ProceduresToFollow},
				{"pitfalls to avoid", pk.PitfallsToAvoid}, {"relevant facts", pk.RelevantFacts}, {"open questions", pk.OpenQuestions}} {
				ps := packetSection{Name: sec.name}
				for _, it := range sec.items {
					pi := packetItem{Why: it.Why}
					if n, ok := groups[it.UUID]; ok && it.UUID != "" && v.sees(n.Record.GroupID()) {
						pi.memView, pi.IsMemory = p.mem(&n), true
						pi.Text, pi.Kind = it.Text, it.Kind
					} else {
						pi.memView = memView{Kind: it.Kind, Text: it.Text}
					}
					ps.Items = append(ps.Items, pi)
				}
				body.Sections = append(body.Sections, ps)
			}
		}
	}
	p.Body = body
	s.render(w, http.StatusOK, p)
}
