package memsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/memsync/memsync/journal"
)

// VerifyReport compares the journals with the graph.
type VerifyReport struct {
	OK             bool     `json:"ok"`
	JournalRecords int      `json:"journal_records"`
	GraphRecords   int      `json:"graph_records"`
	Missing        int      `json:"missing"`
	Extra          int      `json:"extra"`
	Different      int      `json:"different"`
	MissingUUIDs   []string `json:"missing_uuids,omitempty"`   // at most SampleSize
	ExtraUUIDs     []string `json:"extra_uuids,omitempty"`     // at most SampleSize
	DifferentUUIDs []string `json:"different_uuids,omitempty"` // at most SampleSize
}

// SampleSize bounds the uuids a VerifyReport lists for each kind of difference.
const SampleSize = 20

// What the journals say each uuid should hold is kept as a map from a 64-bit
// digest of the uuid to a digest of its content hash whose lowest bit says
// whether the graph was seen to hold it: a million records take about 30 MB
// and nothing for the garbage collector to trace (a collision, about 1 in
// 10^7 at a billion records, could only hide a difference, never invent one).
type expected = map[uint64]uint64

const seenBit = 1

// digest is 64-bit FNV-1a.
func digest(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// contentDigest is digest(hash) with the seen bit clear.
func contentDigest(hash string) uint64 { return digest(hash) &^ seenBit }

// expectedRecords reads every journal of every agent and returns the first
// valid version of each uuid in the order the engine projects them (order:
// the graph's ReadOrder; later versions with other content are rejects).
// Files are read in parallel, each into a list of digests, merged in order.
func expectedRecords(layout Layout, order ReadOrder) (expected, error) {
	agents, err := layout.Agents()
	if err != nil {
		return nil, err
	}
	var files []journalFile
	for i, a := range agents {
		paths, err := layout.JournalFiles(a)
		if err != nil {
			return nil, fmt.Errorf("agent %s: list journals: %w", a, err)
		}
		files = appendFiles(files, i, paths)
	}
	sortFiles(files, order)
	type pair struct{ uuid, hash uint64 }
	lists := make([][]pair, len(files))
	errs := make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f := files[i]
				errs[i] = eachInFile(layout, agents[f.agent], f.path, func(m Memory) error {
					lists[i] = append(lists[i], pair{digest(m.UUID), contentDigest(m.Hash())})
					return nil
				})
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	want := make(expected, n)
	for i, l := range lists {
		for _, p := range l {
			if _, ok := want[p.uuid]; !ok {
				want[p.uuid] = p.hash
			}
		}
		lists[i] = nil
	}
	return want, nil
}

// EachRecord calls fn for every valid record the agent owns, archive first,
// each file in date order, as the engine projects them.
func EachRecord(layout Layout, agent string, fn func(Memory) error) error {
	files, err := layout.JournalFiles(agent)
	if err != nil {
		return err
	}
	for _, path := range files {
		if err := eachInFile(layout, agent, path, fn); err != nil {
			return err
		}
	}
	return nil
}

func eachInFile(layout Layout, agent, path string, fn func(Memory) error) error {
	f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	rel := layout.Rel(path)
	r := journal.NewReader(f, 0, 0)
	for {
		l, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", rel, err)
		}
		if l.Err != nil || l.Record.Agent != agent {
			continue
		}
		if err := fn(Memory{Record: l.Record, Path: rel, Line: l.Number}); err != nil {
			return err
		}
	}
}

// Verify compares the journals under root with what g holds: memories
// missing from the graph, extra ones the journals do not have, and ones
// whose content differs.
func Verify(ctx context.Context, root string, g Graph) (VerifyReport, error) {
	var rep VerifyReport
	// The graph's side streams in while the journals are read: its
	// (uuid, hash) digests, 16 bytes a memory, are compared afterwards.
	type held struct{ uuid, hash uint64 }
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	graphDone := make(chan error, 1)
	var inGraph []held
	go func() {
		graphDone <- g.Hashes(hctx, func(uuid, hash string) error {
			inGraph = append(inGraph, held{digest(uuid), contentDigest(hash)})
			return nil
		})
	}()
	want, err := expectedRecords(Layout{Root: root}, readOrder(g))
	if err != nil {
		cancel()
	}
	gerr := <-graphDone
	if err != nil {
		return rep, fmt.Errorf("verify: read journals: %w", err)
	}
	if gerr != nil {
		return rep, fmt.Errorf("verify: walk graph: %w", gerr)
	}
	rep.JournalRecords = len(want)
	rep.GraphRecords = len(inGraph)
	for _, h := range inGraph {
		w, ok := want[h.uuid]
		switch {
		case !ok:
			rep.Extra++
		case w&^seenBit != h.hash:
			want[h.uuid] = w | seenBit
			rep.Different++
		default:
			want[h.uuid] = w | seenBit
		}
	}
	inGraph = nil
	if rep.Extra > 0 || rep.Different > 0 {
		// Name a sample: a second pass over the graph, for the uuids.
		err := g.Hashes(ctx, func(uuid, hash string) error {
			switch w, ok := want[digest(uuid)]; {
			case !ok:
				rep.ExtraUUIDs = sample(rep.ExtraUUIDs, uuid)
			case w&^seenBit != contentDigest(hash):
				rep.DifferentUUIDs = sample(rep.DifferentUUIDs, uuid)
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("verify: walk graph: %w", err)
		}
	}
	for _, w := range want {
		if w&seenBit == 0 {
			rep.Missing++
		}
	}
	if rep.Missing > 0 {
		// Name a sample: a second pass over the journals, in journal order.
		agents, _ := Layout{Root: root}.Agents()
		for _, a := range agents {
			_ = EachRecord(Layout{Root: root}, a, func(m Memory) error {
				k := digest(m.UUID)
				if w, ok := want[k]; ok && w&seenBit == 0 && len(rep.MissingUUIDs) < SampleSize {
					want[k] = w | seenBit
					rep.MissingUUIDs = append(rep.MissingUUIDs, m.UUID)
				}
				return nil
			})
		}
	}
	rep.OK = rep.Missing == 0 && rep.Extra == 0 && rep.Different == 0
	return rep, nil
}

func sample(list []string, id string) []string {
	if len(list) < SampleSize {
		return append(list, id)
	}
	return list
}
