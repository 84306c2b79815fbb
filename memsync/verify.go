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
// digest of the uuid to its winning version, 24 bytes with no pointers: a
// million records take about 40 MB and nothing for the garbage collector to
// trace. Content is compared by the first 64 bits of its hash (a collision,
// about 1 in 10^7 at a billion records, could only hide a difference, never
// invent one).
type expected = map[uint64]version

// version is a record's journal.Version in fixed-size form, with what verify
// learns about it.
type version struct {
	hash  uint64 // hashKey of the content hash: identity, and its order
	sec   int64  // ts
	nsec  uint32 // ts nanoseconds; flagShared and flagConflict in the top bits
	lines uint32 // lines holding this version; flagPresent and flagSeen in the top bits
}

const (
	flagShared   = 1 << 31 // in nsec: scope shared
	flagConflict = 1 << 30 // in nsec: another line claims the uuid with other content
	flagPresent  = 1 << 31 // in lines: the graph holds the uuid
	flagSeen     = 1 << 30 // in lines: the graph holds this version
	countMask    = 1<<30 - 1
)

func versionOf(m *Memory) version {
	v := version{hash: hashKey(m.Hash()), sec: m.TS.Unix(), nsec: uint32(m.TS.Nanosecond()), lines: 1}
	if m.Scope == journal.ScopeShared {
		v.nsec |= flagShared
	}
	return v
}

func (v version) conflict() bool { return v.nsec&flagConflict != 0 }
func (v version) present() bool  { return v.lines&flagPresent != 0 }
func (v version) seen() bool     { return v.lines&flagSeen != 0 }
func (v version) count() int     { return int(v.lines & countMask) }

// journal is v as journal.ClashWins takes it: the hash is the 16 hex
// digits hashKey kept, which order as the whole hash does.
func (v version) journal() journal.Version {
	scope := journal.ScopePrivate
	if v.nsec&flagShared != 0 {
		scope = journal.ScopeShared
	}
	ns := int64(v.nsec &^ (flagShared | flagConflict))
	return journal.Version{Scope: scope, TS: time.Unix(v.sec, ns).UTC(), Hash: fmt.Sprintf("%016x", v.hash)}
}

// hashKey is the first 64 bits of a Record.Hash (hex); anything else (not a
// hash memsync writes) gets a digest.
func hashKey(h string) uint64 {
	if len(h) >= 16 {
		if k, err := strconv.ParseUint(h[:16], 16, 64); err == nil {
			return k
		}
	}
	return digest(h)
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

// journalTally is what verify learns from the journals.
type journalTally struct {
	want    expected
	lines   int // every complete, non-blank line
	invalid int // lines that are not valid records
	foreign int // valid records their journal may not project (journal.CheckOwner)
	records int // valid records their journal may project
	// foreignLines are the uuid and hash digests of the foreign lines, which
	// put their uuid in conflict when it holds other content.
	foreignLines [][2]uint64
}

// lineVersion is a record line's uuid digest and version.
type lineVersion struct {
	uuid uint64
	v    version
}

// readJournals reads every line of every journal of every agent, files in
// parallel, and keeps for each uuid the version journal.ClashWins prefers:
// the rule is a total order, so the order in which files are merged does
// not matter.
func readJournals(layout Layout) (*journalTally, error) {
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
	tally := &journalTally{want: expected{}}
	var mu sync.Mutex
	errs := make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var list []lineVersion
			for i := range next {
				f := files[i]
				list = list[:0]
				var part journalTally
				errs[i] = eachLine(layout, f.path, func(l journal.Line) error {
					part.lines++
					switch {
					case l.Err != nil:
						part.invalid++
					case journal.CheckOwner(&l.Record, agents[f.agent]) != nil:
						part.foreign++
						part.foreignLines = append(part.foreignLines, [2]uint64{digest(l.Record.UUID), hashKey(l.Record.Hash())})
					default:
						m := Memory{Record: l.Record}
						list = append(list, lineVersion{digest(m.UUID), versionOf(&m)})
					}
					return nil
				})
				mu.Lock()
				tally.merge(&part, list)
				mu.Unlock()
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
	for _, fl := range tally.foreignLines {
		if w, ok := tally.want[fl[0]]; ok && w.hash != fl[1] {
			w.nsec |= flagConflict
			tally.want[fl[0]] = w
		}
	}
	tally.foreignLines = nil
	return tally, nil
}

// merge adds what one file held.
func (t *journalTally) merge(part *journalTally, list []lineVersion) {
	t.lines += part.lines
	t.invalid += part.invalid
	t.foreign += part.foreign
	t.records += len(list)
	t.foreignLines = append(t.foreignLines, part.foreignLines...)
	for _, l := range list {
		w, ok := t.want[l.uuid]
		switch {
		case !ok:
			t.want[l.uuid] = l.v
		case w.hash == l.v.hash:
			w.lines++
			t.want[l.uuid] = w
		case journal.ClashWins(l.v.journal(), w.journal()):
			// The lines of the version it displaces become rejects.
			l.v.nsec |= flagConflict
			t.want[l.uuid] = l.v
		default:
			w.nsec |= flagConflict
			t.want[l.uuid] = w
		}
	}
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
	// (uuid, hash) digests, 16 bytes a memory, are compared afterwards.
	type held struct{ uuid, hash uint64 }
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
	tally, err := readJournals(layout)
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
	want := tally.want
	rep.JournalRecords = len(want)
	rep.GraphRecords = len(inGraph)
	for _, h := range inGraph {
		w, ok := want[h.uuid]
		if !ok {
			rep.Extra++
			continue
		}
		w.lines |= flagPresent
		if w.hash != h.hash {
			rep.Different++
		} else {
			w.lines |= flagSeen
		}
		want[h.uuid] = w
	}
	inGraph = nil
	winning := 0 // lines holding their uuid's winning version
	for _, w := range want {
		n := w.count()
		winning += n
		switch {
		case w.seen():
			rep.Projected++
			rep.Duplicates += n - 1
		default:
			rep.Unaccounted += n
		}
		if !w.present() {
			rep.Missing++
		}
		if w.conflict() {
			rep.Conflicts++
		}
	}
	rep.Lines = tally.lines
	rep.Rejected = tally.invalid + tally.foreign + tally.records - winning
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
					if ok && w.conflict() && !slices.Contains(rep.ConflictUUIDs, l.Record.UUID) {
						rep.ConflictUUIDs = sample(rep.ConflictUUIDs, l.Record.UUID)
					}
					switch err := journal.CheckOwner(&l.Record, a); {
					case err != nil:
						reason = err.Error()
					case w.hash != hashKey(l.Record.Hash()):
						reason = journal.ClashReason(l.Record.UUID, "", 0)
					case !w.present() && !named[k] && len(rep.MissingUUIDs) < SampleSize:
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
