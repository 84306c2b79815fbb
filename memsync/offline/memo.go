package offline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// NewJournals returns Journals for one request that lists several times
// (a packet: the task's, the session's, the core tier, the newest of some
// kinds, the decisions awaiting an outcome): its first List reads and
// parses every journal once, and its later Lists, Gets and Incomings
// answer from that read. The zero Journals reads the journals on every
// List, and scans them for the uuids of each Get and Incoming, which
// suits a single search. Either answers the same.
func NewJournals(layout memsync.Layout) Journals {
	return Journals{Layout: layout, memo: &memo{}}
}

// memo is every valid record of the repository, read once: each uuid as
// the version that wins it (journal.ClashWins; its first line for copies
// of one content), completed as the graph derives
// it, supersession applied, by uuid and per group newest first.
type memo struct {
	once    sync.Once
	done    atomic.Bool // read without error
	err     error
	nodes   []memsync.Node // in reading order
	byUUID  map[string]int
	byGroup map[string][]memsync.Node // newest first (memsync.NewerFirst)
}

// loaded is j's memo (j came from NewJournals), read on first use.
func (j Journals) loaded(ctx context.Context) (*memo, error) {
	j.memo.once.Do(func() {
		j.memo.err = j.memo.read(ctx, j.Layout)
		j.memo.done.Store(j.memo.err == nil)
	})
	return j.memo, j.memo.err
}

// ready is j's memo when a List has read it already, else nil: Get and
// Incoming alone read less by scanning for their uuids (Journals.scan).
func (j Journals) ready() *memo {
	if j.memo == nil || !j.memo.done.Load() {
		return nil
	}
	return j.memo
}

func (m *memo) read(ctx context.Context, layout memsync.Layout) error {
	agents, err := layout.Agents()
	if err != nil {
		return fmt.Errorf("offline list: %w", err)
	}
	byUUID := map[string]int{}
	var nodes []memsync.Node
	for _, agent := range agents {
		paths, err := layout.JournalFiles(agent)
		if err != nil {
			return fmt.Errorf("offline list: %s: %w", agent, err)
		}
		for _, path := range paths {
			if err := ctx.Err(); err != nil {
				return err
			}
			rel := layout.Rel(path)
			err := eachLine(path, func(line []byte, number int, _ int64) error {
				rec, err := journal.Parse(line)
				if err != nil || journal.CheckOwner(&rec, agent) != nil {
					return nil
				}
				n := memsync.Node{Memory: memsync.Memory{Record: rec, Path: rel, Line: number}}
				complete(&n)
				if i, dup := byUUID[rec.UUID]; dup {
					// A uuid clash: the version the graph projects
					// (journal.ClashWins) stands for it, never the one
					// read first; a copy of the same content is a replay.
					old := &nodes[i]
					if n.Hash != old.Hash && journal.ClashWins(journal.VersionOf(&n.Record, n.Hash), journal.VersionOf(&old.Record, old.Hash)) {
						*old = n
					}
					return nil
				}
				byUUID[rec.UUID] = len(nodes)
				nodes = append(nodes, n)
				return nil
			})
			if err != nil {
				return fmt.Errorf("offline list: read %s: %w", rel, err)
			}
		}
	}
	// Supersession from every record naming a target, as Get derives it.
	for _, src := range nodes {
		for _, id := range src.Record.Supersedes {
			i, ok := byUUID[id]
			if !ok {
				continue
			}
			memsync.Retire(&nodes[i], &src.Record)
		}
	}
	byGroup := map[string][]memsync.Node{}
	for _, n := range nodes {
		byGroup[n.GroupID] = append(byGroup[n.GroupID], n)
	}
	for _, g := range byGroup {
		slices.SortFunc(g, memsync.NewerFirst)
	}
	m.nodes, m.byUUID, m.byGroup = nodes, byUUID, byGroup
	return nil
}

// get is Get over the memo.
func (m *memo) get(uuids []string) map[string]memsync.Node {
	out := make(map[string]memsync.Node, len(uuids))
	for _, id := range uuids {
		if i, ok := m.byUUID[id]; ok {
			out[id] = m.nodes[i]
		}
	}
	return out
}

// incoming is Incoming over the memo.
func (m *memo) incoming(uuids []string) []memsync.Reference {
	want := make(map[string]bool, len(uuids))
	for _, id := range uuids {
		want[id] = true
	}
	var refs []memsync.Reference
	for _, src := range m.nodes {
		refs = append(refs, read.References(src, want)...)
	}
	return refs
}
