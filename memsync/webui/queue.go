package webui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	readpath "github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

// Bounds of the queue: it reads lists, never the whole store.
const (
	queueCore      = 200 // core memories looked at for review
	queueOlder     = 500 // newest memories older than agentOlderThan looked at for review
	queueDecisions = 200 // decisions older than score.FollowUpAfter looked at
	// queueRecentDays is how far back conflicts, learning records and
	// promotions are looked for (at most TimelineMax records).
	queueRecentDays = 30
	queueShow       = 50 // items shown per section
)

// queueItem is one thing waiting for a person, with its actions.
type queueItem struct {
	memView
	Explain, FlagAction string
}

// queueSection is one kind of waiting thing.
type queueSection struct {
	ID, Title, Why string
	Items          []queueItem
	Count          int // all found, Items holds at most queueShow
}

// queue is what waits for a person, fleet-wide, as far as the viewer sees.
type queue struct {
	Sections []queueSection
	Bound    string
}

// count is the number of items of section id.
func (q queue) count(id string) int {
	for _, s := range q.Sections {
		if s.ID == id {
			return s.Count
		}
	}
	return 0
}

// readQueue gathers the queue from the engine's lists, judged by the one
// rules: score's status (review), packet.AwaitingOutcome (decisions),
// conflicts_with edges between memories neither retired, score's
// low-confidence learning tier, and promotion records.
func (s *Server) readQueue(ctx context.Context, sr memsync.Searcher, p *page) (queue, error) {
	l, ok := sr.(memsync.Lister)
	if !ok {
		return queue{}, fmt.Errorf("%T cannot list memories", sr)
	}
	groups := p.v.groups()
	clock := memsync.Present(s.cfg.Now())
	now := clock.At
	seen := map[string]bool{}
	var all []memsync.Node
	addAll := func(ns []memsync.Node) {
		for _, n := range ns {
			if !seen[n.UUID] {
				seen[n.UUID] = true
				all = append(all, n)
			}
		}
	}
	list := func(what string, q memsync.ListQuery, most int) ([]memsync.Node, error) {
		q.Groups = groups
		ns, _, _, err := windowOf(ctx, l, q, time.Time{}, most)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		return ns, nil
	}
	core, err := list("core memories", memsync.ListQuery{Core: true}, queueCore)
	if err != nil {
		return queue{}, err
	}
	older, err := list("older memories", memsync.ListQuery{Until: now.Add(-agentOlderThan)}, queueOlder)
	if err != nil {
		return queue{}, err
	}
	decisions, err := list("decisions", memsync.ListQuery{Kinds: []journal.Kind{journal.KindDecision}, Until: now.Add(-score.FollowUpAfter)}, queueDecisions)
	if err != nil {
		return queue{}, err
	}
	// The recent candidates are what the store says of the viewer's
	// window (the records naming a conflict, the low-confidence learning
	// records, promotions); only they are read, each afresh, so that its
	// supersession and importance are the store's now.
	cands, err := s.windowCandidates(ctx, sr, p.v, now.Add(-queueRecentDays*score.Day))
	if err != nil {
		return queue{}, err
	}
	bounded := cands.Bounded
	var candIDs []string
	for _, list := range [][]string{cands.Conflicting, cands.LowLearning, cands.Promotions} {
		candIDs = append(candIDs, list...)
	}
	fresh, err := sr.Get(ctx, candIDs)
	if err != nil {
		return queue{}, fmt.Errorf("read the recent candidates: %w", err)
	}
	// fromStore is list's memories as read afresh (ones gone since are
	// left out), newest first.
	fromStore := func(list []string) []memsync.Node {
		var out []memsync.Node
		for _, id := range list {
			if n, ok := fresh[id]; ok && p.v.sees(n.Record.GroupID()) {
				out = append(out, n)
			}
		}
		return out
	}
	conflicting, lowLearning, promoted := fromStore(cands.Conflicting), fromStore(cands.LowLearning), fromStore(cands.Promotions)
	var recent []memsync.Node
	for _, list := range [][]memsync.Node{conflicting, lowLearning, promoted} {
		recent = append(recent, list...)
	}
	addAll(core)
	addAll(older)
	addAll(decisions)
	addAll(recent)
	// The memories the recent conflicts name, to tell whether they stand.
	var named []string
	for _, n := range recent {
		for _, id := range n.ConflictsWith {
			if !seen[id] {
				named = append(named, id)
			}
		}
	}
	others, err := sr.Get(ctx, named)
	if err != nil {
		return queue{}, fmt.Errorf("read conflicting memories: %w", err)
	}
	for _, id := range named {
		if n, ok := others[id]; ok && p.v.sees(n.Record.GroupID()) && !seen[id] {
			seen[id] = true
			all = append(all, n)
		}
	}
	scored, err := readpath.ScoreNodes(ctx, sr, all, groups, clock)
	if err != nil {
		return queue{}, err
	}
	item := func(n memsync.Node, extra string) queueItem {
		sc := scored[n.UUID]
		it := queueItem{memView: p.scored(&sc), Explain: p.URL("/memory/"+url.PathEscape(n.UUID)) + "#events",
			FlagAction: p.URL("/memory/" + url.PathEscape(n.UUID) + "/flag")}
		it.Extra = extra
		return it
	}
	q := queue{Bound: fmt.Sprintf("review: among the %d newest core memories and the %d newest older than %d days; decisions: the %d newest older than %d days; conflicts, learning records and promotions: the last %d days",
		queueCore, queueOlder, agentOlderThan/score.Day, queueDecisions, score.FollowUpAfter/score.Day, queueRecentDays)}
	if bounded {
		q.Bound += fmt.Sprintf(" (the newest %d records of them)", TimelineMax)
	}
	review := queueSection{ID: "review", Title: "Memories in review", Why: "past their max_age with middling importance, or core memories contradicted by a newer record: verify, flag important, or let them go"}
	done := map[string]bool{}
	for _, n := range append(slices.Clone(core), older...) {
		sc := scored[n.UUID]
		if sc.Result.Status != score.Review || done[n.UUID] {
			continue
		}
		done[n.UUID] = true
		extra := "past max_age " + sc.Result.MaxAgeLabel
		if sc.Result.ToReview {
			extra = "core memory contradicted by a newer record"
		}
		review.Items = append(review.Items, item(n, extra))
	}
	waiting := queueSection{ID: "waiting", Title: "Decisions waiting for an outcome", Why: fmt.Sprintf("decisions at least %d days old that no outcome names", score.FollowUpAfter/score.Day)}
	for _, n := range decisions {
		if score.AwaitingOutcomeOf(n.Kind, n.TS, scored[n.UUID].Result, now) {
			waiting.Items = append(waiting.Items, item(n, score.FollowUpQuestion(n.Text, n.TS)))
		}
	}
	conflicts := queueSection{ID: "conflicts", Title: "Open conflicts", Why: "a record contradicts another and neither is retired (superseded, archived or flagged wrong): say which holds"}
	learning := queueSection{ID: "learning", Title: "Low-confidence learning records", Why: fmt.Sprintf("learning-tier records declared low confidence: archived %d days after they are written unless something references them", score.LowLearningAge/score.Day)}
	promotions := queueSection{ID: "promotions", Title: "Recent promotions", Why: "private memories that earned a shared copy: check that they should be shared"}
	for _, n := range conflicting {
		sc := scored[n.UUID]
		for _, id := range n.ConflictsWith {
			o, ok := scored[id]
			if !ok || sc.Result.Status.Hidden() || sc.Result.FlaggedWrong || o.Result.Status.Hidden() || o.Result.FlaggedWrong {
				continue
			}
			conflicts.Items = append(conflicts.Items, item(n, "contradicts "+o.Agent+"'s "+string(o.Kind)+": "+short(o.Text, 120)))
		}
	}
	for _, n := range lowLearning {
		if sc := scored[n.UUID]; !sc.Result.Status.Hidden() {
			learning.Items = append(learning.Items, item(n, fmt.Sprintf("confidence %.2f; %s", sc.Result.Confidence, learningFate(sc.Result, n.TS))))
		}
	}
	for _, n := range promoted {
		if !scored[n.UUID].Result.Status.Hidden() {
			extra := ""
			if len(n.Links) > 0 {
				extra = "promoted from " + n.Links[0]
			}
			promotions.Items = append(promotions.Items, item(n, extra))
		}
	}
	for _, sec := range []*queueSection{&review, &waiting, &conflicts, &learning, &promotions} {
		sec.Count = len(sec.Items)
		if len(sec.Items) > queueShow {
			sec.Items = sec.Items[:queueShow]
		}
		q.Sections = append(q.Sections, *sec)
	}
	return q, nil
}

// learningFate says when a low-confidence learning record leaves.
func learningFate(r score.Result, ts time.Time) string {
	if r.Referenced {
		return "referenced, so it stays"
	}
	return "archived after " + ts.Add(score.LowLearningAge).UTC().Format("2006-01-02") + " unless referenced"
}

type queueBody struct {
	Queue     queue
	Feedbacks []string
}

func (s *Server) queuePage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	p := s.newPage(r, "queue", "queue", v)
	body := queueBody{Feedbacks: journal.Feedbacks}
	ctx := r.Context()
	rd := s.open(ctx)
	defer rd.close()
	err := rd.do(ctx, func(sr memsync.Searcher) (err error) {
		body.Queue, err = s.readQueue(ctx, sr, p)
		return err
	})
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	p.Source, p.Reason = rd.source()
	p.Body = body
	s.render(w, http.StatusOK, p)
}
