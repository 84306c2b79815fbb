package memsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

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
	// Conflicts counts uuids that lines their journals may project claim
	// with different content (the version journal.ClashWins prefers is
	// projected, the others rejected): one version of an agent's memory is
	// not in the graph. A line its journal may never project (written as
	// another agent, or squatting a uuid that names another agent) is a
	// rejected line (RejectedLines names it, with its reason), not a
	// conflict: the uuid stands for its owner's record alone.
	Conflicts     int            `json:"conflicts"`
	ConflictUUIDs []string       `json:"conflict_uuids,omitempty"` // at most SampleSize
	RejectedLines []RejectedLine `json:"rejected_lines,omitempty"` // at most SampleSize
	// JournalsFromRebuild is set when the journals' side is the rebuild's
	// own read of them (VerifyTallied), not a second one.
	JournalsFromRebuild bool `json:"journals_from_rebuild,omitempty"`
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
// digest of the uuid to one word: 40 bits of the winning version's content
// hash, how many lines hold that version, and flags. A million records take
// about 20 MB and nothing for the garbage collector to trace (a collision
// of the hash bits, about 1 in 10^12 per memory, could only hide a
// difference, never invent one).
type expected = map[uint64]version

// version is the word expected keeps for a uuid.
type version uint64

const (
	flagConflict version = 1 << 0 // another line claims the uuid with other content
	flagPresent  version = 1 << 1 // the graph holds the uuid
	flagSeen     version = 1 << 2 // the graph holds this version
	countShift           = 4
	countMax             = 1<<20 - 1 // lines holding this version, saturating
	keyShift             = 24
)

// newVersion is the word for a content hash held by n lines.
func newVersion(hash string, n int) version {
	return contentBits(hashKey(hash)) | version(min(n, countMax))<<countShift
}

// contentBits keeps the top 40 bits of a hash key, where version holds them.
func contentBits(k uint64) version {
	return version(k >> keyShift << keyShift)
}

// sameContent reports whether v holds the content hash key k (hashKey).
func (v version) sameContent(k uint64) bool { return uint64(v)>>keyShift == k>>keyShift }
func (v version) count() int                { return int(v>>countShift) & countMax }
func (v version) has(f version) bool        { return v&f != 0 }

// addLine counts one more line holding v's content.
func (v version) addLine() version {
	if v.count() == countMax {
		return v
	}
	return v + 1<<countShift
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
	// foreign counts valid records their journal may not project
	// (journal.CheckOwner: written as another agent, or under a uuid that
	// names another agent). They are rejected lines, never claims: a line
	// squatting another agent's uuid puts no uuid in conflict.
	foreign   int
	records   int // valid records their journal may project
	conflicts int // uuids flagged flagConflict
}

// lineVersion is a record line's uuid digest and hash key.
type lineVersion struct{ uuid, hash uint64 }

// listJournals lists every agent and every journal file, archives included.
func listJournals(layout Layout) ([]string, []journalFile, error) {
	agents, err := layout.Agents()
	if err != nil {
		return nil, nil, err
	}
	var files []journalFile
	for i, a := range agents {
		paths, err := layout.JournalFiles(a)
		if err != nil {
			return nil, nil, fmt.Errorf("agent %s: list journals: %w", a, err)
		}
		files = appendFiles(files, i, paths)
	}
	return agents, files, nil
}

// merge adds what one file held. A uuid seen with two contents is flagged
// and keeps either: resolveClashes decides.
func (t *journalTally) merge(part *journalTally, list []lineVersion) {
	t.lines += part.lines
	t.invalid += part.invalid
	t.foreign += part.foreign
	t.records += len(list)
	for _, l := range list {
		w, ok := t.want[l.uuid]
		switch {
		case !ok:
			t.want[l.uuid] = contentBits(l.hash) | 1<<countShift
		case w.sameContent(l.hash):
			t.want[l.uuid] = w.addLine()
		case !w.has(flagConflict):
			t.want[l.uuid] = w | flagConflict
			t.conflicts++
		}
	}
}

// resolveClashes reads the lines of the uuids in conflict again and sets
// each to the version journal.ClashWins prefers, with the number of lines
// holding it.
func resolveClashes(layout Layout, agents []string, files []journalFile, want expected) error {
	type best struct {
		v     journal.Version
		lines int
	}
	winners := map[uint64]*best{}
	for _, f := range files {
		err := eachLine(layout, f.path, func(l journal.Line) error {
			if l.Err != nil || journal.CheckOwner(&l.Record, agents[f.agent]) != nil {
				return nil
			}
			k := digest(l.Record.UUID)
			if w, ok := want[k]; !ok || !w.has(flagConflict) {
				return nil
			}
			v := journal.VersionOf(&l.Record, l.Record.Hash())
			switch b := winners[k]; {
			case b == nil:
				winners[k] = &best{v, 1}
			case b.v.Hash == v.Hash:
				b.lines++
			case journal.ClashWins(v, b.v):
				*b = best{v, 1}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for k, b := range winners {
		want[k] = newVersion(b.v.Hash, b.lines) | flagConflict
	}
	return nil
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
	f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
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
// Rejected lines (bad JSON, another agent's name or uuid) are counted and
// named but leave it OK: they were never part of what the journals project.
func Verify(ctx context.Context, root string, g Graph) (VerifyReport, error) {
	return VerifyIn(ctx, root, g, 0)
}

// partition is one of the n parts of the uuids verify compares at a time:
// those whose digest is index modulo n.
type partition struct{ index, n int }

func (p partition) holds(k uint64) bool { return p.n <= 1 || k%uint64(p.n) == uint64(p.index) }

// verifyPartRecords is how many records verify compares at a time, read
// back from its spill (VerifyAll): a part's map, some 50 MB, whatever the
// repository holds (verify peaked at 111-125 MB at 10M records).
const verifyPartRecords = 2_000_000

// verifyBytesPerRecord is the shortest average journal line verify
// assumes when it guesses the records from the journals' size.
const verifyBytesPerRecord = 64

// guessParts is how many parts of verifyPartRecords the journals' records
// make: their size over the average length of a line, measured on the
// first 64 KiB of up to 32 files spread over the list.
func guessParts(files []journalFile) int {
	var size, sampled, lines int64
	step := max(1, len(files)/32)
	buf := make([]byte, 64<<10)
	for i, f := range files {
		fi, err := os.Stat(f.path)
		if err != nil {
			continue
		}
		size += fi.Size()
		if i%step != 0 {
			continue
		}
		if fh, err := journal.OpenNoFollow(f.path, os.O_RDONLY, 0); err == nil {
			n, _ := io.ReadFull(fh, buf)
			fh.Close()
			sampled += int64(n)
			lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		}
	}
	perLine := int64(verifyBytesPerRecord)
	if lines > 0 {
		perLine = max(perLine, sampled/lines)
	}
	return int(size/perLine/verifyPartRecords) + 1
}

// add sums the report of another partition into r.
func (r *VerifyReport) add(p VerifyReport) {
	r.JournalRecords += p.JournalRecords
	r.GraphRecords += p.GraphRecords
	r.Missing += p.Missing
	r.Extra += p.Extra
	r.Different += p.Different
	r.Lines += p.Lines
	r.Projected += p.Projected
	r.Duplicates += p.Duplicates
	r.Rejected += p.Rejected
	r.Unaccounted += p.Unaccounted
	r.Conflicts += p.Conflicts
	for _, l := range []struct {
		to   *[]string
		from []string
	}{
		{&r.MissingUUIDs, p.MissingUUIDs}, {&r.ExtraUUIDs, p.ExtraUUIDs},
		{&r.DifferentUUIDs, p.DifferentUUIDs}, {&r.ConflictUUIDs, p.ConflictUUIDs},
	} {
		for _, id := range l.from {
			*l.to = sample(*l.to, id)
		}
	}
	for _, rl := range p.RejectedLines {
		if len(r.RejectedLines) < SampleSize {
			r.RejectedLines = append(r.RejectedLines, rl)
		}
	}
}

// compare completes a report from what the journals want (tally) and what
// the graph holds, which walk tells mark, a memory at a time.
func compare(ctx context.Context, layout Layout, g Graph, tally *journalTally, walk func(mark func(uuid, hash uint64)) error) (VerifyReport, error) {
	return comparePart(ctx, layout, g, tally, partition{0, 1}, walk)
}

// comparePart is compare for the uuids of partition pt: the graph's
// other memories, and the journal lines of other uuids, are not its own.
func comparePart(ctx context.Context, layout Layout, g Graph, tally *journalTally, pt partition, walk func(mark func(uuid, hash uint64)) error) (VerifyReport, error) {
	var rep VerifyReport
	want := tally.want
	rep.JournalRecords = len(want)
	err := walk(func(uuid, hash uint64) {
		rep.GraphRecords++
		w, ok := want[uuid]
		if !ok {
			rep.Extra++
			return
		}
		w |= flagPresent
		if !w.sameContent(hash) {
			rep.Different++
		} else {
			w |= flagSeen
		}
		want[uuid] = w
	})
	if err != nil {
		return rep, fmt.Errorf("verify: walk graph: %w", err)
	}
	winning := 0 // lines holding their uuid's winning version
	for _, w := range want {
		n := w.count()
		winning += n
		if w.has(flagSeen) {
			rep.Projected++
			rep.Duplicates += n - 1
		} else {
			rep.Unaccounted += n
		}
		if !w.has(flagPresent) {
			rep.Missing++
		}
	}
	rep.Conflicts = tally.conflicts
	rep.Lines = tally.lines
	rep.Rejected = tally.invalid + tally.foreign + tally.records - winning
	if rep.Extra > 0 || rep.Different > 0 {
		// Name a sample: a second pass over the graph, for the uuids.
		err := g.Hashes(ctx, func(uuid, hash string) error {
			k := digest(uuid)
			if !pt.holds(k) {
				return nil
			}
			switch w, ok := want[k]; {
			case !ok:
				rep.ExtraUUIDs = sample(rep.ExtraUUIDs, uuid)
			case !w.sameContent(hashKey(hash)):
				rep.DifferentUUIDs = sample(rep.DifferentUUIDs, uuid)
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("verify: walk graph: %w", err)
		}
	}
	if rep.Missing > 0 || rep.Conflicts > 0 || rep.Rejected > 0 {
		if err := nameSamples(layout, want, pt, &rep); err != nil {
			return rep, fmt.Errorf("verify: read journals: %w", err)
		}
	}
	rep.OK = rep.Missing == 0 && rep.Extra == 0 && rep.Different == 0 && rep.Conflicts == 0 && rep.Unaccounted == 0
	return rep, nil
}

// nameSamples reads the journals again, in the order the engine does, to
// name a sample of the missing uuids, the uuids in conflict and the
// rejected lines with their reasons.
func nameSamples(layout Layout, want expected, pt partition, rep *VerifyReport) error {
	agents, err := layout.Agents()
	if err != nil {
		return err
	}
	named := map[uint64]bool{}
	// full says every sample is as long as it can be: the rest of the
	// journals has nothing more to name.
	full := func() bool {
		return len(rep.MissingUUIDs) >= min(SampleSize, rep.Missing) && len(rep.ConflictUUIDs) >= min(SampleSize, rep.Conflicts) &&
			len(rep.RejectedLines) >= min(SampleSize, rep.Rejected)
	}
	for _, a := range agents {
		if full() {
			return nil
		}
		paths, err := layout.JournalFiles(a)
		if err != nil {
			return fmt.Errorf("agent %s: list journals: %w", a, err)
		}
		for _, path := range paths {
			rel := layout.Rel(path)
			err := eachLine(layout, path, func(l journal.Line) error {
				reason := ""
				if l.Err != nil {
					if pt.index != 0 {
						return nil // the first partition names it
					}
					reason = l.Err.Error()
				} else {
					k := digest(l.Record.UUID)
					foreign := journal.CheckOwner(&l.Record, a) != nil
					if foreign && pt.index != 0 || !foreign && !pt.holds(k) {
						return nil // another partition's line
					}
					w, ok := want[k]
					if ok && w.has(flagConflict) && !slices.Contains(rep.ConflictUUIDs, l.Record.UUID) {
						rep.ConflictUUIDs = sample(rep.ConflictUUIDs, l.Record.UUID)
					}
					switch err := journal.CheckOwner(&l.Record, a); {
					case err != nil:
						reason = err.Error()
					case !w.sameContent(hashKey(l.Record.Hash())):
						reason = journal.ClashReason(l.Record.UUID, "", 0)
					case !w.has(flagPresent) && !named[k] && len(rep.MissingUUIDs) < SampleSize:
						named[k] = true
						rep.MissingUUIDs = append(rep.MissingUUIDs, l.Record.UUID)
					}
				}
				if reason != "" && len(rep.RejectedLines) < SampleSize {
					rep.RejectedLines = append(rep.RejectedLines, RejectedLine{File: rel, Line: l.Number, UUID: l.Record.UUID, Reason: reason})
				}
				if full() {
					return errSamplesFull
				}
				return nil
			})
			if errors.Is(err, errSamplesFull) {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// errSamplesFull stops nameSamples' read once its samples are full.
var errSamplesFull = errors.New("samples full")

func sample(list []string, id string) []string {
	if len(list) < SampleSize {
		return append(list, id)
	}
	return list
}
