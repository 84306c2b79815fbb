package memsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/memsync/memsync/journal"
)

// VerifyReport compares the journals with the graph, and accounts for
// every journal line: projected (its record is in the graph, or repeats one
// that is), or rejected with a reason, or unaccounted for.
type VerifyReport struct {
	OK             bool     `json:"ok"`
	JournalRecords int      `json:"journal_records"` // distinct uuids the journals project
	GraphRecords   int      `json:"graph_records"`
	Missing        int      `json:"missing"`
	Extra          int      `json:"extra"`
	Different      int      `json:"different"`
	MissingUUIDs   []string `json:"missing_uuids,omitempty"`   // at most SampleSize
	ExtraUUIDs     []string `json:"extra_uuids,omitempty"`     // at most SampleSize
	DifferentUUIDs []string `json:"different_uuids,omitempty"` // at most SampleSize

	// Lines counts every complete, non-blank journal line; each is one of
	// Projected, Duplicates, Rejected or Unaccounted.
	Lines      int `json:"lines"`
	Projected  int `json:"projected"`  // lines whose record the graph holds
	Duplicates int `json:"duplicates"` // lines repeating a projected record (no-ops)
	Rejected   int `json:"rejected"`   // lines that can never be projected, with a reason
	// Unaccounted counts lines that should be in the graph and are not:
	// the lines of missing and different uuids.
	Unaccounted int `json:"unaccounted"`
	// Conflicts counts uuids that lines claim with different content (the
	// version journal.ClashWins prefers is projected, the others rejected).
	Conflicts     int            `json:"conflicts"`
	ConflictUUIDs []string       `json:"conflict_uuids,omitempty"` // at most SampleSize
	RejectedLines []RejectedLine `json:"rejected_lines,omitempty"` // at most SampleSize
}

// RejectedLine is a journal line that can never be projected, and why.
type RejectedLine struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	UUID   string `json:"uuid,omitempty"`
	Reason string `json:"reason"`
}

// SampleSize bounds the uuids a VerifyReport lists for each kind of difference.
const SampleSize = 20

// What the journals say each uuid should hold is kept as a map from a 64-bit
// digest of the uuid to the winning version's content hash, ts and scope,
// with no pointers: a million records take about 60 MB and nothing for the
// garbage collector to trace (a collision, about 1 in 10^7 at a billion
// records, could only hide a difference, never invent one).
type expected = map[uint64]version

// version is a record's journal.Version in fixed-size form.
type version struct {
	hash     [2]uint64 // the 128-bit content hash (journal.Record.Hash)
	sec      int64     // ts
	nsec     int32
	shared   bool
	conflict bool // another line claims the uuid with other content
	present  bool // the graph holds the uuid
	seen     bool // the graph holds this version
	claimed  bool // a line projected it (for Projected and Duplicates)
}

func versionOf(m *Memory) version {
	return version{hash: hashKey(m.Hash()), sec: m.TS.Unix(), nsec: int32(m.TS.Nanosecond()),
		shared: m.Scope == journal.ScopeShared}
}

func (v version) journal() journal.Version {
	scope := journal.ScopePrivate
	if v.shared {
		scope = journal.ScopeShared
	}
	return journal.Version{Scope: scope, TS: time.Unix(v.sec, int64(v.nsec)).UTC(),
		Hash: fmt.Sprintf("%016x%016x", v.hash[0], v.hash[1])}
}

// hashKey parses a Record.Hash (32 hex digits) into two words, in order;
// anything else (not a hash memsync writes) gets a digest, which can never
// equal a parsed one by chance that matters.
func hashKey(h string) [2]uint64 {
	if len(h) == 32 {
		hi, err1 := strconv.ParseUint(h[:16], 16, 64)
		lo, err2 := strconv.ParseUint(h[16:], 16, 64)
		if err1 == nil && err2 == nil {
			return [2]uint64{hi, lo}
		}
	}
	return [2]uint64{digest(h), ^uint64(0)}
}

// digest is 64-bit FNV-1a.
func digest(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// lineKind says what a journal line is.
type lineKind uint8

const (
	lineRecord  lineKind = iota // a valid record its journal may project
	lineInvalid                 // not a valid record (parse or validation)
	lineForeign                 // a valid record its journal may not project (journal.CheckOwner)
)

// journalLine is what verify keeps of one line: no strings, except the
// reason of a line it may name.
type journalLine struct {
	uuid   uint64
	v      version
	number int32
	kind   lineKind
}

// fileLines is what verify read from one journal file.
type fileLines struct {
	rel   string
	lines []journalLine
}

// readJournals reads every line of every journal of every agent, files in
// parallel.
func readJournals(layout Layout) ([]fileLines, error) {
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
	out := make([]fileLines, len(files))
	errs := make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f := files[i]
				out[i].rel = layout.Rel(f.path)
				errs[i] = eachLine(layout, f.path, func(l journal.Line) error {
					jl := journalLine{number: int32(l.Number)}
					switch {
					case l.Err != nil:
						jl.kind = lineInvalid
					case journal.CheckOwner(&l.Record, agents[f.agent]) != nil:
						jl.kind = lineForeign
					}
					if l.Err == nil {
						m := Memory{Record: l.Record}
						jl.uuid, jl.v = digest(m.UUID), versionOf(&m)
					}
					out[i].lines = append(out[i].lines, jl)
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
	return out, errors.Join(errs...)
}

// expectedRecords picks, for each uuid, the version journal.ClashWins
// prefers among the lines that may project it, and marks uuids claimed
// with other content (by those lines, or by lines that may not project it)
// as conflicts.
func expectedRecords(files []fileLines) expected {
	n := 0
	for _, f := range files {
		n += len(f.lines)
	}
	want := make(expected, n)
	for _, f := range files {
		for _, l := range f.lines {
			if l.kind != lineRecord {
				continue
			}
			w, ok := want[l.uuid]
			switch {
			case !ok:
				want[l.uuid] = l.v
			case w.hash != l.v.hash:
				if journal.ClashWins(l.v.journal(), w.journal()) {
					w = l.v
				}
				w.conflict = true
				want[l.uuid] = w
			}
		}
	}
	for _, f := range files {
		for _, l := range f.lines {
			if w, ok := want[l.uuid]; ok && l.kind == lineForeign && w.hash != l.v.hash {
				w.conflict = true
				want[l.uuid] = w
			}
		}
	}
	return want
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
	rel := layout.Rel(path)
	return eachLine(layout, path, func(l journal.Line) error {
		if l.Err != nil || journal.CheckOwner(&l.Record, agent) != nil {
			return nil
		}
		return fn(Memory{Record: l.Record, Path: rel, Line: l.Number})
	})
}

// eachLine calls fn for every complete line of the journal file at path.
func eachLine(layout Layout, path string, fn func(journal.Line) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := journal.NewReader(f, 0, 0)
	for {
		l, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", layout.Rel(path), err)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
}

// Verify compares the journals under root with what g holds: memories
// missing from the graph, extra ones the journals do not have, and ones
// whose content differs from the version journal.ClashWins prefers. It
// accounts for every journal line (VerifyReport.Lines) and counts uuid
// conflicts; the report is OK only when the graph holds exactly what the
// journals project, no line is unaccounted for and no uuid is in conflict.
func Verify(ctx context.Context, root string, g Graph) (VerifyReport, error) {
	var rep VerifyReport
	layout := Layout{Root: root}
	// The graph's side streams in while the journals are read: its
	// (uuid, hash) digests, 24 bytes a memory, are compared afterwards.
	type held struct {
		uuid uint64
		hash [2]uint64
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	graphDone := make(chan error, 1)
	var inGraph []held
	go func() {
		graphDone <- g.Hashes(hctx, func(uuid, hash string) error {
			inGraph = append(inGraph, held{digest(uuid), hashKey(hash)})
			return nil
		})
	}()
	files, err := readJournals(layout)
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
	want := expectedRecords(files)
	rep.JournalRecords = len(want)
	rep.GraphRecords = len(inGraph)
	for _, h := range inGraph {
		w, ok := want[h.uuid]
		if !ok {
			rep.Extra++
			continue
		}
		w.present = true
		if w.hash != h.hash {
			rep.Different++
		} else {
			w.seen = true
		}
		want[h.uuid] = w
	}
	inGraph = nil
	for _, w := range want {
		if !w.present {
			rep.Missing++
		}
		if w.conflict {
			rep.Conflicts++
		}
	}
	for _, f := range files {
		for _, l := range f.lines {
			rep.Lines++
			if l.kind != lineRecord {
				rep.Rejected++
				continue
			}
			switch w := want[l.uuid]; {
			case w.hash != l.v.hash:
				rep.Rejected++ // lost its uuid to another version
			case !w.seen:
				rep.Unaccounted++
			case w.claimed:
				rep.Duplicates++
			default:
				w.claimed = true
				want[l.uuid] = w
				rep.Projected++
			}
		}
	}
	files = nil
	if rep.Extra > 0 || rep.Different > 0 {
		// Name a sample: a second pass over the graph, for the uuids.
		err := g.Hashes(ctx, func(uuid, hash string) error {
			switch w, ok := want[digest(uuid)]; {
			case !ok:
				rep.ExtraUUIDs = sample(rep.ExtraUUIDs, uuid)
			case w.hash != hashKey(hash):
				rep.DifferentUUIDs = sample(rep.DifferentUUIDs, uuid)
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("verify: walk graph: %w", err)
		}
	}
	if rep.Missing > 0 || rep.Conflicts > 0 || rep.Rejected > 0 {
		if err := nameSamples(layout, want, &rep); err != nil {
			return rep, fmt.Errorf("verify: read journals: %w", err)
		}
	}
	rep.OK = rep.Missing == 0 && rep.Extra == 0 && rep.Different == 0 && rep.Conflicts == 0 && rep.Unaccounted == 0
	return rep, nil
}

// nameSamples reads the journals again, in the order the engine does, to
// name a sample of the missing uuids, the uuids in conflict and the
// rejected lines with their reasons.
func nameSamples(layout Layout, want expected, rep *VerifyReport) error {
	agents, err := layout.Agents()
	if err != nil {
		return err
	}
	named := map[uint64]bool{}
	for _, a := range agents {
		paths, err := layout.JournalFiles(a)
		if err != nil {
			return fmt.Errorf("agent %s: list journals: %w", a, err)
		}
		for _, path := range paths {
			rel := layout.Rel(path)
			err := eachLine(layout, path, func(l journal.Line) error {
				reason := ""
				if l.Err != nil {
					reason = l.Err.Error()
				} else {
					k := digest(l.Record.UUID)
					w, ok := want[k]
					if ok && w.conflict && !slices.Contains(rep.ConflictUUIDs, l.Record.UUID) {
						rep.ConflictUUIDs = sample(rep.ConflictUUIDs, l.Record.UUID)
					}
					switch err := journal.CheckOwner(&l.Record, a); {
					case err != nil:
						reason = err.Error()
					case w.hash != hashKey(l.Record.Hash()):
						reason = journal.ClashReason(l.Record.UUID, "", 0)
					case !w.present && !named[k] && len(rep.MissingUUIDs) < SampleSize:
						named[k] = true
						rep.MissingUUIDs = append(rep.MissingUUIDs, l.Record.UUID)
					}
				}
				if reason != "" && len(rep.RejectedLines) < SampleSize {
					rep.RejectedLines = append(rep.RejectedLines, RejectedLine{File: rel, Line: l.Number, UUID: l.Record.UUID, Reason: reason})
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func sample(list []string, id string) []string {
	if len(list) < SampleSize {
		return append(list, id)
	}
	return list
}
