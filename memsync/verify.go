package memsync

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"

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

type expected struct {
	hash string
	seen bool
}

// Expected reads every journal of every agent in the order the engine
// projects them and returns the first valid version of each uuid (later
// versions with other content are rejects), keyed by uuid.
func expectedRecords(layout Layout) (map[string]*expected, error) {
	want := map[string]*expected{}
	agents, err := layout.Agents()
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		err := EachRecord(layout, a, func(m Memory) error {
			if _, dup := want[m.UUID]; !dup {
				want[m.UUID] = &expected{hash: m.Hash()}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
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
	f, err := os.Open(path)
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
	want, err := expectedRecords(Layout{Root: root})
	if err != nil {
		return rep, fmt.Errorf("verify: read journals: %w", err)
	}
	rep.JournalRecords = len(want)
	err = g.Walk(ctx, func(n Node) error {
		rep.GraphRecords++
		w, ok := want[n.UUID]
		switch {
		case !ok:
			rep.Extra++
			rep.ExtraUUIDs = sample(rep.ExtraUUIDs, n.UUID)
		case w.hash != n.Hash:
			w.seen = true
			rep.Different++
			rep.DifferentUUIDs = sample(rep.DifferentUUIDs, n.UUID)
		default:
			w.seen = true
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("verify: walk graph: %w", err)
	}
	var missing []string
	for id, w := range want {
		if !w.seen {
			rep.Missing++
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	if len(missing) > SampleSize {
		missing = missing[:SampleSize]
	}
	rep.MissingUUIDs = missing
	rep.OK = rep.Missing == 0 && rep.Extra == 0 && rep.Different == 0
	return rep, nil
}

func sample(list []string, id string) []string {
	if len(list) < SampleSize {
		return append(list, id)
	}
	return list
}
