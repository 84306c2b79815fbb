package webui

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memsync/memsync/memsync"
)

// SummaryTTL is how long the fleet page's chart and queue counts, and
// the timeline page's chart, are reused for one viewer: they read
// thousands of records, and the fleet page reloads every 10 s. The
// queue page and the timeline's list are always read afresh.
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
