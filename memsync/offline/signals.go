package offline

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// Journals reads memories and their signals straight from the journals, for
// scoring and explain when the graph cannot be reached. It is a
// memsync.Searcher, so ranking goes through read.Rank exactly as it does
// over a graph.
type Journals struct {
	Layout memsync.Layout
	// Embedder, when set, makes Search hybrid: every visible record is
	// embedded and compared with the query (SearchWith); nil: lexical only.
	Embedder memsync.Embedder
	memo     *memo // set by NewJournals: one read of the journals for every List
}

var _ memsync.Searcher = Journals{}

// Get returns the valid records among uuids (each as first written), with
// invalid_at and replaced_by from every valid record superseding it, as
// the graph derives them.
func (j Journals) Get(ctx context.Context, uuids []string) (map[string]memsync.Node, error) {
	if m := j.ready(); m != nil {
		return m.get(uuids), nil
	}
	nodes, _, err := j.scan(ctx, uuids)
	return nodes, err
}

// Incoming returns every valid record naming one of uuids through links,
// supports or conflicts_with, as the graph's edges would.
func (j Journals) Incoming(ctx context.Context, uuids []string) ([]memsync.Reference, error) {
	if m := j.ready(); m != nil {
		return m.incoming(uuids), nil
	}
	_, refs, err := j.scan(ctx, uuids)
	return refs, err
}

// scan reads every journal once (in the engine's order, archive first) and
// parses only the lines that mention one of uuids. Each uuid counts as
// the version that wins it (journal.ClashWins) among those lines; a line that fails journal.Parse or is
// not its journal owner's counts for nothing.
func (j Journals) scan(ctx context.Context, uuids []string) (map[string]memsync.Node, []memsync.Reference, error) {
	nodes := map[string]memsync.Node{}
	if len(uuids) == 0 {
		return nodes, nil, nil
	}
	want := make(map[string]bool, len(uuids))
	needles := make([][]byte, 0, len(uuids))
	for _, id := range uuids {
		if !want[id] {
			want[id] = true
			needles = append(needles, []byte(id))
		}
	}
	agents, err := j.Layout.Agents()
	if err != nil {
		return nil, nil, fmt.Errorf("offline signals: %w", err)
	}
	seen := map[string]int{} // uuid → its index in sources
	var sources []memsync.Node
	for _, agent := range agents {
		paths, err := j.Layout.JournalFiles(agent)
		if err != nil {
			return nil, nil, fmt.Errorf("offline signals: %s: %w", agent, err)
		}
		for _, path := range paths {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			rel := j.Layout.Rel(path)
			err := eachLine(path, func(line []byte, number int, _ int64) error {
				if !slices.ContainsFunc(needles, func(n []byte) bool { return bytes.Contains(line, n) }) {
					return nil
				}
				rec, err := journal.Parse(line)
				if err != nil || journal.CheckOwner(&rec, agent) != nil {
					return nil
				}
				n := memsync.Node{Memory: memsync.Memory{Record: rec, Path: rel, Line: number}}
				complete(&n)
				if i, dup := seen[rec.UUID]; dup {
					// A uuid clash: the winning version stands for it
					// (journal.ClashWins), as in the graph.
					old := &sources[i]
					if n.Hash == old.Hash || !journal.ClashWins(journal.VersionOf(&n.Record, n.Hash), journal.VersionOf(&old.Record, old.Hash)) {
						return nil
					}
					*old = n
				} else {
					seen[rec.UUID] = len(sources)
					sources = append(sources, n)
				}
				if want[rec.UUID] {
					nodes[rec.UUID] = n
				}
				return nil
			})
			if err != nil {
				return nil, nil, fmt.Errorf("offline signals: read %s: %w", rel, err)
			}
		}
	}
	var refs []memsync.Reference
	for _, src := range sources {
		refs = append(refs, read.References(src, want)...)
		for _, id := range src.Record.Supersedes {
			n, ok := nodes[id]
			if !ok {
				continue
			}
			memsync.Retire(&n, &src.Record)
			nodes[id] = n
		}
	}
	return nodes, refs, nil
}
