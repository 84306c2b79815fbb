package offline

import (
	"context"
	"fmt"
	"slices"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

var _ memsync.Lister = Journals{}

// List returns the valid records meeting q, newest first, as the graphs'
// List does (each uuid as first written, supersession derived by Get, task
// and session matched within memsync.ScopeWindow). It reads every journal
// of the repository, once for all its calls when j came from NewJournals.
func (j Journals) List(ctx context.Context, q memsync.ListQuery) ([]memsync.Node, error) {
	if len(q.Groups) == 0 {
		return nil, nil
	}
	if m, err := j.loaded(ctx); err != nil {
		return nil, err
	} else if m != nil {
		return memsync.ListFrom(m.byGroup, q), nil
	}
	agents, err := j.Layout.Agents()
	if err != nil {
		return nil, fmt.Errorf("offline list: %w", err)
	}
	// Every visible record at or before Until, newest first per group, so
	// that task and session match within memsync.ScopeWindow as the graphs do.
	base := memsync.ListQuery{Groups: q.Groups, Until: q.Until}
	seen := map[string]bool{}
	byGroup := map[string][]memsync.Node{}
	for _, agent := range agents {
		paths, err := j.Layout.JournalFiles(agent)
		if err != nil {
			return nil, fmt.Errorf("offline list: %s: %w", agent, err)
		}
		for _, path := range paths {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rel := j.Layout.Rel(path)
			err := eachLine(path, func(line []byte, number int, _ int64) error {
				rec, err := journal.Parse(line)
				if err != nil || rec.Agent != agent || seen[rec.UUID] {
					return nil
				}
				seen[rec.UUID] = true
				n := memsync.Node{Memory: memsync.Memory{Record: rec, Path: rel, Line: number}}
				if base.Matches(&n) {
					byGroup[rec.GroupID()] = append(byGroup[rec.GroupID()], n)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("offline list: read %s: %w", rel, err)
			}
		}
	}
	for _, nodes := range byGroup {
		slices.SortFunc(nodes, memsync.NewerFirst)
	}
	out := memsync.ListFrom(byGroup, q)
	// Supersession comes from the records that name them, as Get derives it.
	ids := make([]string, len(out))
	for i, n := range out {
		ids[i] = n.UUID
	}
	full, err := j.Get(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, n := range out {
		if f, ok := full[n.UUID]; ok {
			out[i] = f
		}
	}
	return out, nil
}
