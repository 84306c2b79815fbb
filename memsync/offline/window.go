package offline

import (
	"context"

	"github.com/memsync/memsync/memsync"
)

var _ memsync.WindowReader = Journals{}

// window is q's window over the valid records (memsync.WindowFrom), read
// as List reads them: once per call for the zero Journals, once for all
// its calls when j came from NewJournals.
func (j Journals) window(ctx context.Context, q memsync.WindowQuery) ([]memsync.Node, bool, error) {
	if len(q.Groups) == 0 {
		return nil, false, nil
	}
	if j.memo == nil {
		j = NewJournals(j.Layout)
	}
	m, err := j.loaded(ctx)
	if err != nil {
		return nil, false, err
	}
	nodes, bounded := memsync.WindowFrom(m.byGroup, q)
	return nodes, bounded, nil
}

// WindowCandidates returns the queue's candidates of q's window
// (memsync.CandidatesFrom over memsync.WindowFrom).
func (j Journals) WindowCandidates(ctx context.Context, q memsync.WindowQuery) (memsync.Candidates, error) {
	nodes, bounded, err := j.window(ctx, q)
	if err != nil {
		return memsync.Candidates{}, err
	}
	return memsync.CandidatesFrom(nodes, bounded), nil
}

// WindowMentions returns the entities q's window mentions
// (memsync.MentionsFrom over memsync.WindowFrom).
func (j Journals) WindowMentions(ctx context.Context, q memsync.WindowQuery) (memsync.Mentions, error) {
	nodes, bounded, err := j.window(ctx, q)
	if err != nil {
		return memsync.Mentions{}, err
	}
	return memsync.MentionsFrom(nodes, bounded), nil
}
