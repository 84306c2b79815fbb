// Package memsynctest has test doubles for the engine's interfaces: an
// in-memory graph that can be switched off, and a disk that can be full.
package memsynctest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"syscall"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// Graph is an in-memory memsync.Graph for unit tests: it keeps nodes by uuid
// (no edges, no ranking) and fails with ErrUnavailable while Down.
type Graph struct {
	mu      sync.Mutex
	nodes   map[string]memsync.Node
	down    bool
	ID      string
	Applies int // Apply calls that succeeded
	Writes  int // records written for the first time
}

var _ memsync.Graph = (*Graph)(nil)

// NewGraph returns an empty, reachable graph.
func NewGraph() *Graph { return &Graph{nodes: map[string]memsync.Node{}, ID: "fake:1"} }

// SetDown makes every call fail with ErrUnavailable (true) or work again.
func (g *Graph) SetDown(down bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.down = down
}

func (g *Graph) check() error {
	if g.down {
		return fmt.Errorf("fake: connection refused: %w", memsync.ErrUnavailable)
	}
	return nil
}

// Apply implements memsync.Graph.
func (g *Graph) Apply(_ context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var res memsync.ApplyResult
	if err := g.check(); err != nil {
		return res, err
	}
	before := map[string]memsync.Node{} // what the batch replaced, as it was
	for _, m := range batch {
		h := m.Hash()
		if n, ok := g.nodes[m.UUID]; ok {
			if n.Hash == h {
				continue
			}
			res.Mismatched = append(res.Mismatched, m.UUID)
			if !journal.ClashWins(journal.VersionOf(&m.Record, h), journal.VersionOf(&n.Record, n.Hash)) {
				continue
			}
			if _, ok := before[m.UUID]; !ok {
				before[m.UUID] = n
			}
		}
		g.nodes[m.UUID] = memsync.Node{Memory: m, Hash: h, GroupID: m.GroupID(), Importance: 0.5}
		g.Writes++
	}
	for _, id := range res.Mismatched {
		if n, ok := before[id]; ok {
			delete(before, id)
			var d memsync.Memory
			d.UUID, d.Agent, d.Path, d.Line = n.UUID, n.Agent, n.Path, n.Line
			res.Displaced = append(res.Displaced, d)
		}
	}
	g.Applies++
	return res, nil
}

// Drop implements memsync.Graph.
func (g *Graph) Drop(context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(); err != nil {
		return err
	}
	g.nodes = map[string]memsync.Node{}
	return nil
}

// Stats implements memsync.Graph.
func (g *Graph) Stats(context.Context) (memsync.Stats, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := memsync.Stats{ByAgent: map[string]int{}}
	if err := g.check(); err != nil {
		return st, err
	}
	for _, n := range g.nodes {
		st.Memories++
		st.ByAgent[n.Agent]++
	}
	return st, nil
}

// Walk implements memsync.Graph.
func (g *Graph) Walk(_ context.Context, fn func(memsync.Node) error) error {
	g.mu.Lock()
	if err := g.check(); err != nil {
		g.mu.Unlock()
		return err
	}
	ids := make([]string, 0, len(g.nodes))
	for id := range g.nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	nodes := make([]memsync.Node, len(ids))
	for i, id := range ids {
		nodes[i] = g.nodes[id]
	}
	g.mu.Unlock()
	for _, n := range nodes {
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}

// Get implements memsync.Graph.
func (g *Graph) Get(_ context.Context, uuids []string) (map[string]memsync.Node, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(); err != nil {
		return nil, err
	}
	out := map[string]memsync.Node{}
	for _, id := range uuids {
		if n, ok := g.nodes[id]; ok {
			out[id] = n
		}
	}
	return out, nil
}

// Lexical implements memsync.Retriever; the fake finds nothing.
func (g *Graph) Lexical(context.Context, []string, memsync.Filter, int) ([]memsync.Found, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return nil, g.check()
}

// Neighbours implements memsync.Retriever; the fake finds nothing.
func (g *Graph) Neighbours(context.Context, []memsync.Node, memsync.Filter) ([]memsync.Beside, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return nil, g.check()
}

// Similar implements memsync.Retriever; the fake finds nothing.
func (g *Graph) Similar(context.Context, string, memsync.Filter, int) ([]memsync.Found, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return nil, g.check()
}

// Incoming implements memsync.Graph from the stored records' fields.
func (g *Graph) Incoming(_ context.Context, uuids []string) ([]memsync.Reference, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range uuids {
		want[id] = true
	}
	var out []memsync.Reference
	for _, n := range g.nodes {
		out = append(out, read.References(n, want)...)
	}
	return out, nil
}

// Identity implements memsync.Graph.
func (g *Graph) Identity() string { return g.ID }

// Close implements memsync.Graph.
func (g *Graph) Close() error { return nil }

// Len is the number of projected memories.
func (g *Graph) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.nodes)
}

// FullDisk is a memsync.Disk that fails with ENOSPC while Full.
type FullDisk struct {
	mu   sync.Mutex
	full bool
	Real memsync.Disk
}

// SetFull makes writes fail (true) or work again.
func (d *FullDisk) SetFull(full bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.full = full
}

func (d *FullDisk) err(op, path string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.full {
		return fmt.Errorf("%s %s: %w", op, path, syscall.ENOSPC)
	}
	return nil
}

// WriteAtomic implements memsync.Disk.
func (d *FullDisk) WriteAtomic(path string, data []byte) error {
	if err := d.err("write", path); err != nil {
		return err
	}
	return d.Real.WriteAtomic(path, data)
}

// Append implements memsync.Disk.
func (d *FullDisk) Append(path string, data []byte) error {
	if err := d.err("append", path); err != nil {
		return err
	}
	return d.Real.Append(path, data)
}

// Truncate implements memsync.Disk.
func (d *FullDisk) Truncate(path string) error {
	if err := d.err("truncate", path); err != nil {
		return err
	}
	return d.Real.Truncate(path)
}

// Switch wraps a real graph and makes it unreachable on demand, the way a
// stopped server or a cut network looks to the engine.
type Switch struct {
	memsync.Graph
	mu  sync.Mutex
	off bool
}

// SetDown cuts (true) or restores the connection.
func (s *Switch) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.off = down
}

func (s *Switch) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off {
		return fmt.Errorf("switch: connection refused: %w", memsync.ErrUnavailable)
	}
	return nil
}

// Apply implements memsync.Graph.
func (s *Switch) Apply(ctx context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	if err := s.check(); err != nil {
		return memsync.ApplyResult{}, err
	}
	return s.Graph.Apply(ctx, batch)
}

// Get implements memsync.Graph.
func (s *Switch) Get(ctx context.Context, uuids []string) (map[string]memsync.Node, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Graph.Get(ctx, uuids)
}

// Stats implements memsync.Graph.
func (s *Switch) Stats(ctx context.Context) (memsync.Stats, error) {
	if err := s.check(); err != nil {
		return memsync.Stats{}, err
	}
	return s.Graph.Stats(ctx)
}

// Hashes calls fn with the uuid and hash of every projected memory, in uuid order.
func (g *Graph) Hashes(ctx context.Context, fn func(uuid, hash string) error) error {
	return g.Walk(ctx, func(n memsync.Node) error { return fn(n.UUID, n.Hash) })
}
