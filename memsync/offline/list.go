package offline

import (
	"context"

	"github.com/memsync/memsync/memsync"
)

var _ memsync.Lister = Journals{}

// List returns the valid records meeting q, newest first, as the graphs'
// List does (each uuid as the version that wins it, journal.ClashWins; supersession derived as Get
// derives it, task and session matched within memsync.ScopeWindow:
// memsync.ListFrom). It reads every journal of the repository once: once
// per call for the zero Journals, once for all its calls when j came from
// NewJournals.
func (j Journals) List(ctx context.Context, q memsync.ListQuery) ([]memsync.Node, error) {
	if len(q.Groups) == 0 {
		return nil, nil
	}
	if j.memo == nil {
		j = NewJournals(j.Layout)
	}
	m, err := j.loaded(ctx)
	if err != nil {
		return nil, err
	}
	return memsync.ListFrom(m.byGroup, q), nil
}
