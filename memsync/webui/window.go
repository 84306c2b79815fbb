package webui

import (
	"context"
	"fmt"
	"time"

	"github.com/memsync/memsync/memsync"
)

// The queue's recent sections and the entity index read a window of the
// viewer's records: the newest TimelineMax of its groups since a day.
// A store that answers window questions (memsync.WindowReader: the
// embedded store, Neo4j, the journals) gives the candidates and the
// counts from the fields it holds; from any other Searcher the view
// reads the window itself (recentWindow) and counts it with the same
// definitions (memsync.CandidatesFrom, memsync.MentionsFrom). A
// viewer's answers are reused for SummaryTTL, as its recent window is
// (they are uuids and counts: the summaries' bound of viewers holds
// them), and a flag through the view drops them; the queue still reads
// every candidate afresh by uuid and scores it.

// windowCandidates is the queue's candidates among the viewer's records
// since t.
func (s *Server) windowCandidates(ctx context.Context, sr memsync.Searcher, v viewer, since time.Time) (memsync.Candidates, error) {
	key, now := viewerKey(v, "candidates"), s.cfg.Now()
	if c, ok := s.sums.get(key, now); ok && c.cands != nil {
		return *c.cands, nil
	}
	if w, ok := sr.(memsync.WindowReader); ok {
		c, err := w.WindowCandidates(ctx, memsync.WindowQuery{Groups: v.groups(), Since: since, Limit: TimelineMax})
		if err != nil {
			return memsync.Candidates{}, fmt.Errorf("read the queue's candidates: %w", err)
		}
		s.sums.put(key, summary{at: now, cands: &c})
		return c, nil
	}
	nodes, bounded, err := s.windowSince(ctx, sr, v, since)
	if err != nil {
		return memsync.Candidates{}, err
	}
	return memsync.CandidatesFrom(nodes, bounded), nil
}

// windowMentions is the entities the viewer's records since t mention.
func (s *Server) windowMentions(ctx context.Context, sr memsync.Searcher, v viewer, since time.Time) (memsync.Mentions, error) {
	key, now := viewerKey(v, "mentions"), s.cfg.Now()
	if c, ok := s.sums.get(key, now); ok && c.mentions != nil {
		return *c.mentions, nil
	}
	if w, ok := sr.(memsync.WindowReader); ok {
		m, err := w.WindowMentions(ctx, memsync.WindowQuery{Groups: v.groups(), Since: since, Limit: TimelineMax})
		if err != nil {
			return memsync.Mentions{}, fmt.Errorf("count the entities: %w", err)
		}
		s.sums.put(key, summary{at: now, mentions: &m})
		return m, nil
	}
	nodes, bounded, err := s.windowSince(ctx, sr, v, since)
	if err != nil {
		return memsync.Mentions{}, err
	}
	return memsync.MentionsFrom(nodes, bounded), nil
}

// windowSince is the viewer's records since t, read through its recent
// window (at most recentDays back).
func (s *Server) windowSince(ctx context.Context, sr memsync.Searcher, v viewer, since time.Time) ([]memsync.Node, bool, error) {
	l, ok := sr.(memsync.Lister)
	if !ok {
		return nil, false, fmt.Errorf("%T cannot list memories", sr)
	}
	r, err := s.recentWindow(ctx, l, v)
	if err != nil {
		return nil, false, err
	}
	nodes, bounded := r.since(since)
	return nodes, bounded, nil
}
