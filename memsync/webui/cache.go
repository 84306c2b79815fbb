package webui

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/score"
)

// SummaryTTL is how long the fleet page's chart and queue counts, and
// the timeline page's chart, are reused for one viewer: they read
// thousands of records, and the fleet page reloads every 10 s. The
// records the charts, the queue's recent sections and the entity index
// count are read once per SummaryTTL too (recentWindow); the queue page
// scores its items and reads its other lists afresh, and the timeline's
// list is always read afresh. A flag through this view drops them all.
const SummaryTTL = 30 * time.Second

// summaries caches charts and queues per viewer (never shared between
// viewers: each holds only what its viewer may see).
type summaries struct {
	mu sync.Mutex
	m  map[string]summary
}

type summary struct {
	at    time.Time
	chart *timeline
	queue *queue
}

func viewerKey(v viewer, what string) string {
	return what + "\x00" + v.As + "\x00" + strings.Join(v.Agents, ",")
}

func (c *summaries) get(key string, now time.Time) (summary, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[key]
	return s, ok && now.Sub(s.at) < SummaryTTL && !s.at.After(now)
}

func (c *summaries) put(key string, s summary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 256 {
		c.m = map[string]summary{}
	}
	c.m[key] = s
}

// cachedTimeline is fleetTimeline, reused for SummaryTTL.
func (s *Server) cachedTimeline(ctx context.Context, sr memsync.Searcher, v viewer, days int) (timeline, error) {
	key := viewerKey(v, "chart"+strconv.Itoa(days))
	now := s.cfg.Now()
	if c, ok := s.sums.get(key, now); ok {
		return *c.chart, nil
	}
	t, err := s.fleetTimeline(ctx, sr, v, days)
	if err == nil {
		s.sums.put(key, summary{at: now, chart: &t})
	}
	return t, err
}

// cachedQueue is readQueue, reused for SummaryTTL.
func (s *Server) cachedQueue(ctx context.Context, sr memsync.Searcher, p *page) (queue, error) {
	key := viewerKey(p.v, "queue")
	now := s.cfg.Now()
	if c, ok := s.sums.get(key, now); ok {
		return *c.queue, nil
	}
	q, err := s.readQueue(ctx, sr, p)
	if err == nil {
		s.sums.put(key, summary{at: now, queue: &q})
	}
	return q, err
}

// recentDays is how far back the shared recent window reaches: the
// widest of the pages that read one (the entity index; the timeline's
// chart and the queue's recent sections reach less far).
const recentDays = entityDays

// recentGroups bounds how many groups' recent windows are kept (each up
// to TimelineMax records, one copy whichever viewers see the group).
const recentGroups = 64

// recent is the newest TimelineMax records of a viewer's groups of the
// last recentDays, for the fleet page's chart and queue counts, the
// timeline's chart, the queue's recent sections and the entity index:
// each of them read the same records on its own (at 100,000 memories
// about 150 ms each on a loaded host). It is merged from one window per
// group, each read at most once per SummaryTTL and shared by every viewer
// that sees the group (a viewer only ever merges its own groups).
type recent struct {
	at      time.Time
	nodes   []memsync.Node
	bounded bool
	next    time.Time // the ts of the newest record the bound left out
}

// since is the records of r with ts at or after t and whether
// TimelineMax stopped them short of t: what window(..., t, TimelineMax)
// returns for t within recentDays of r.at.
func (r recent) since(t time.Time) ([]memsync.Node, bool) {
	i, _ := slices.BinarySearchFunc(r.nodes, t, func(n memsync.Node, t time.Time) int {
		return t.Compare(n.TS) // newest first: before t sorts last
	})
	// i is the first record older than t... or equal: step past equal ts.
	for i < len(r.nodes) && !r.nodes[i].TS.Before(t) {
		i++
	}
	if i < len(r.nodes) {
		return r.nodes[:i], false
	}
	return r.nodes, r.bounded && !r.next.Before(t)
}

// merge is the newest most records of windows of distinct groups (each
// newest first, each the newest most of its group), and the bound: a
// record a group's window left out is older than that group's most
// records, so never among the newest most of them all.
func merge(windows []recent, most int) recent {
	var out recent
	for _, w := range windows {
		out.nodes = append(out.nodes, w.nodes...)
		if w.bounded {
			out.bounded = true
			if w.next.After(out.next) {
				out.next = w.next
			}
		}
	}
	slices.SortFunc(out.nodes, memsync.NewerFirst)
	if len(out.nodes) > most {
		out.bounded = true
		if ts := out.nodes[most].TS; ts.After(out.next) {
			out.next = ts
		}
		out.nodes = out.nodes[:most:most]
	}
	return out
}

// recentWindow is the viewer's recent window, merged from its groups'.
func (s *Server) recentWindow(ctx context.Context, l memsync.Lister, v viewer) (recent, error) {
	now := s.cfg.Now()
	groups := slices.Compact(slices.Sorted(slices.Values(v.groups())))
	windows := make([]recent, 0, len(groups))
	for _, g := range groups {
		s.recentMu.Lock()
		r, ok := s.recents[g]
		s.recentMu.Unlock()
		if !ok || now.Sub(r.at) >= SummaryTTL || r.at.After(now) {
			nodes, bounded, next, err := windowOf(ctx, l, memsync.ListQuery{Groups: []string{g}}, now.Add(-recentDays*score.Day), TimelineMax)
			if err != nil {
				return recent{}, err
			}
			r = recent{at: now, nodes: nodes, bounded: bounded, next: next}
			s.recentMu.Lock()
			if s.recents == nil || len(s.recents) >= recentGroups {
				s.recents = map[string]recent{}
			}
			s.recents[g] = r
			s.recentMu.Unlock()
		}
		windows = append(windows, r)
	}
	return merge(windows, TimelineMax), nil
}

// forget drops every cached summary and window, so that the next page
// reads afresh (after a flag through this view).
func (s *Server) forget() {
	s.sums.mu.Lock()
	s.sums.m = nil
	s.sums.mu.Unlock()
	s.recentMu.Lock()
	s.recents = nil
	s.recentMu.Unlock()
}
