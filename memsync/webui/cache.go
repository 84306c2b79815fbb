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
// records the charts count are read once per SummaryTTL too
// (recentWindow); the queue page asks the store for its recent
// candidates (window.go), scores its items and reads its other lists
// afresh, and the timeline's list is always read afresh. A flag through
// this view drops them all.
const SummaryTTL = 30 * time.Second

// summaries caches charts and queues per viewer (never shared between
// viewers: each holds only what its viewer may see).
type summaries struct {
	mu sync.Mutex
	m  map[string]summary
}

type summary struct {
	at       time.Time
	chart    *timeline
	queue    *queue
	cands    *memsync.Candidates
	mentions *memsync.Mentions
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
// widest of the pages that may read one (the entity index, from a store
// that is no memsync.WindowReader; the timeline's chart and the queue's
// recent sections reach less far).
const recentDays = entityDays

// recentViewers bounds how many viewers' recent windows are kept (each
// up to TimelineMax records).
const recentViewers = 8

// recent is the newest TimelineMax records of a viewer's groups of the
// last recentDays, read once for the fleet page's chart and the
// timeline's chart (and, from a store that is no memsync.WindowReader,
// the queue's recent sections and the entity index), and reused for
// SummaryTTL: each of them read the same
// records on its own (at 100,000 memories about 150 ms each on a loaded
// host).
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

// recentWindow is the viewer's recent window, read at most once per
// SummaryTTL.
func (s *Server) recentWindow(ctx context.Context, l memsync.Lister, v viewer) (recent, error) {
	key := viewerKey(v, "recent")
	now := s.cfg.Now()
	s.recentMu.Lock()
	r, ok := s.recents[key]
	s.recentMu.Unlock()
	if ok && now.Sub(r.at) < SummaryTTL && !r.at.After(now) {
		return r, nil
	}
	nodes, bounded, next, err := windowOf(ctx, l, memsync.ListQuery{Groups: v.groups()}, now.Add(-recentDays*score.Day), TimelineMax)
	if err != nil {
		return recent{}, err
	}
	r = recent{at: now, nodes: nodes, bounded: bounded, next: next}
	s.recentMu.Lock()
	if s.recents == nil || len(s.recents) >= recentViewers {
		s.recents = map[string]recent{}
	}
	s.recents[key] = r
	s.recentMu.Unlock()
	return r, nil
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
