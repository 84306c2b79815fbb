package ledger

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// HistoryRecords is a memsync.Source of every record in the journals and
// archives of every commit reachable from HEAD of the repository at
// repoDir. Commits are visited oldest first (parents before children, ties
// by committer time then hash), so the order is the same on every run. Each
// distinct journal blob is read once, however many commits hold it, and
// streamed: memory grows with the number of commits and distinct blobs (a
// set of hashes), never with the number of records. Lines that are not
// valid records, or whose agent is not the agent whose directory holds the
// journal, are skipped, as the engine would reject them. Each Memory's Path
// is the journal's path in the commit that introduced the blob. A repository
// without commits yields nothing.
func HistoryRecords(repoDir string, lg *zap.Logger) memsync.Source {
	if lg == nil {
		lg = zap.NewNop()
	}
	return func(ctx context.Context, yield func(memsync.Memory) error) error {
		r, err := openRepo(repoDir)
		if err != nil {
			return fmt.Errorf("history: %w", err)
		}
		defer r.Close()
		h, err := r.readHead()
		if err != nil {
			return fmt.Errorf("history: %w", err)
		}
		if h.commit.IsZero() {
			return nil
		}
		order, err := commitOrder(ctx, r, h.commit)
		if err != nil {
			return fmt.Errorf("history: %w", err)
		}
		w := &historyWalk{r: r, lg: lg, yield: yield, seenTrees: map[plumbing.Hash]bool{}, seenBlobs: map[plumbing.Hash]bool{}}
		for _, c := range order {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := w.commit(c); err != nil {
				return fmt.Errorf("history: commit %s: %w", c, err)
			}
		}
		lg.Info("history read", zap.Int("commits", len(order)), zap.Int("journal_blobs", len(w.seenBlobs)),
			zap.Int("records", w.records), zap.Int("skipped_lines", w.skipped))
		return nil
	}
}

type historyWalk struct {
	r         *repo
	lg        *zap.Logger
	yield     func(memsync.Memory) error
	seenTrees map[plumbing.Hash]bool // journal directories already read whole
	seenBlobs map[plumbing.Hash]bool
	records   int
	skipped   int
}

func (w *historyWalk) commit(hash plumbing.Hash) error {
	c, err := object.GetCommit(w.r.store, hash)
	if err != nil {
		return err
	}
	root, err := c.Tree()
	if err != nil {
		return err
	}
	agents, err := root.Tree("agents")
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, a := range agents.Entries {
		if a.Mode != filemode.Dir || !journal.ValidAgent(a.Name) {
			continue
		}
		at, err := object.GetTree(w.r.store, a.Hash)
		if err != nil {
			return err
		}
		dir := path.Join("agents", a.Name, "memory", "journal")
		jt, err := at.Tree("memory/journal")
		if errors.Is(err, object.ErrDirectoryNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if w.seenTrees[jt.Hash] {
			continue
		}
		// Archive first, then the live journals, as the engine reads them.
		for _, e := range jt.Entries {
			if e.Name == "archive" && e.Mode == filemode.Dir {
				if err := w.dir(a.Name, dir+"/archive", e.Hash); err != nil {
					return err
				}
			}
		}
		if err := w.files(a.Name, dir, jt); err != nil {
			return err
		}
		w.seenTrees[jt.Hash] = true
	}
	return nil
}

func (w *historyWalk) dir(agent, dir string, hash plumbing.Hash) error {
	if w.seenTrees[hash] {
		return nil
	}
	t, err := object.GetTree(w.r.store, hash)
	if err != nil {
		return err
	}
	if err := w.files(agent, dir, t); err != nil {
		return err
	}
	w.seenTrees[hash] = true
	return nil
}

// files reads the *.jsonl blobs directly in t, in name (date) order.
func (w *historyWalk) files(agent, dir string, t *object.Tree) error {
	for _, e := range t.Entries {
		if !e.Mode.IsFile() || !strings.HasSuffix(e.Name, ".jsonl") || w.seenBlobs[e.Hash] {
			continue
		}
		if err := w.blob(agent, dir+"/"+e.Name, e.Hash); err != nil {
			return fmt.Errorf("%s (blob %s): %w", dir+"/"+e.Name, e.Hash, err)
		}
		w.seenBlobs[e.Hash] = true
	}
	return nil
}

func (w *historyWalk) blob(agent, rel string, hash plumbing.Hash) error {
	b, err := object.GetBlob(w.r.store, hash)
	if err != nil {
		return err
	}
	rc, err := b.Reader()
	if err != nil {
		return err
	}
	defer rc.Close()
	jr := journal.NewReader(rc, 0, 0)
	for {
		l, err := jr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if l.Err != nil || journal.CheckOwner(&l.Record, agent) != nil { // not its agent's (field or uuid)
			w.skipped++
			continue
		}
		w.records++
		if err := w.yield(memsync.Memory{Record: l.Record, Path: rel, Line: l.Number}); err != nil {
			return err
		}
	}
}

// commitOrder lists the commits reachable from tip, parents before
// children, ties broken by committer time then hash.
func commitOrder(ctx context.Context, r *repo, tip plumbing.Hash) ([]plumbing.Hash, error) {
	type node struct {
		parents  []plumbing.Hash
		children []plumbing.Hash
		when     int64
		waiting  int // parents not yet emitted
	}
	nodes := map[plumbing.Hash]*node{}
	stack := []plumbing.Hash{tip}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if nodes[h] != nil {
			continue
		}
		c, err := object.GetCommit(r.store, h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		n := &node{parents: c.ParentHashes, when: c.Committer.When.UnixNano()}
		nodes[h] = n
		for _, p := range c.ParentHashes {
			if nodes[p] == nil {
				stack = append(stack, p)
			}
		}
	}
	ready := &commitHeap{}
	for h, n := range nodes {
		for _, p := range n.parents {
			if pn := nodes[p]; pn != nil { // a shallow clone may lack parents
				pn.children = append(pn.children, h)
				n.waiting++
			}
		}
	}
	for h, n := range nodes {
		if n.waiting == 0 {
			heap.Push(ready, commitAt{h, n.when})
		}
	}
	out := make([]plumbing.Hash, 0, len(nodes))
	for ready.Len() > 0 {
		c := heap.Pop(ready).(commitAt)
		out = append(out, c.hash)
		for _, ch := range nodes[c.hash].children {
			n := nodes[ch]
			if n.waiting--; n.waiting == 0 {
				heap.Push(ready, commitAt{ch, n.when})
			}
		}
	}
	return out, nil
}

type commitAt struct {
	hash plumbing.Hash
	when int64
}

type commitHeap []commitAt

func (h commitHeap) Len() int { return len(h) }
func (h commitHeap) Less(i, j int) bool {
	if h[i].when != h[j].when {
		return h[i].when < h[j].when
	}
	return bytes.Compare(h[i].hash[:], h[j].hash[:]) < 0
}
func (h commitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *commitHeap) Push(x any)   { *h = append(*h, x.(commitAt)) }
func (h *commitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
