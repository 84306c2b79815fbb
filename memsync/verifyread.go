package memsync

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/memsync/memsync/journal"
)

// VerifyOptions say how VerifyAll compares the journals with the graph.
type VerifyOptions struct {
	// Parts is how many parts of the uuids are compared one after the
	// other (0: as many as the journals' records, guessed from their size,
	// ask for, verifyPartRecords each): memory is bounded by a part.
	Parts int
	// SpillDir is where the single read of the journals spills what each
	// part needs, in unlinked files ("": os.TempDir()). A directory that
	// cannot be written, or a disk that fills, fails the verify.
	SpillDir string
	// References checks the references that change nothing too, in the
	// same read (ReferenceReport).
	References bool
	// EachReference, when not nil (and References is set), is told every
	// reference that changes nothing, in journal order (file, line, then
	// the record's fields in referenceFields order), once all are found.
	EachReference func(field, blocked, source, target string)
	// Listing, when not nil (and References is set), is given every
	// reference that changes nothing, for its caller to list after
	// VerifyAll returns (ReferenceListing.Each), then close.
	Listing *ReferenceListing
}

// VerifyAll is Verify (and, with o.References, CheckReferences) in one
// read of the journals, whatever the number of parts: each line is parsed
// once and what verify needs of it (its uuid's and content's digests, its
// group, the uuids it names) is spilled to one file per part of the uuids,
// in o.SpillDir, while the graph's digests are spilled the same way in one
// walk. Each part is then read back and compared on its own, so memory is
// bounded by a part. With g nil only the references are checked.
//
// The report is the one Verify and CheckReferencesEach give on their own:
// the counts are the same whatever the parts; the samples name what the
// journals hold first (references) or part by part (the rest).
func VerifyAll(ctx context.Context, root string, g Graph, o VerifyOptions) (VerifyReport, ReferenceReport, error) {
	layout := Layout{Root: root}
	agents, files, err := listJournals(layout)
	if err != nil {
		return VerifyReport{}, ReferenceReport{}, fmt.Errorf("verify: read journals: %w", err)
	}
	parts := o.Parts
	if parts <= 0 {
		parts = guessParts(files)
	}
	v := &verifyRead{layout: layout, g: g, agents: agents, files: files, parts: parts, refs: o.References}
	defer v.close()
	if err := v.read(ctx, o.SpillDir); err != nil {
		return VerifyReport{}, ReferenceReport{}, err
	}
	var rep VerifyReport
	listing := o.Listing
	if listing == nil && o.EachReference != nil {
		listing = &ReferenceListing{}
		defer listing.Close()
	}
	if listing != nil {
		listing.dir = o.SpillDir
	}
	refs := &refCheck{kinds: map[[2]string]*refKind{}, list: listing}
	for p := range parts {
		pr, err := v.comparePart(ctx, partition{p, parts}, refs)
		if err != nil {
			return VerifyReport{}, ReferenceReport{}, err
		}
		rep.add(pr)
	}
	rep.OK = rep.Missing == 0 && rep.Extra == 0 && rep.Different == 0 && rep.Conflicts == 0 && rep.Unaccounted == 0
	if !v.refs {
		return rep, ReferenceReport{}, nil
	}
	if listing != nil && listing.err != nil {
		return VerifyReport{}, ReferenceReport{}, fmt.Errorf("verify: list references: %w", listing.err)
	}
	if o.Listing == nil && o.EachReference != nil {
		err := listing.Each(func(field, blocked, source, target string) error {
			o.EachReference(field, blocked, source, target)
			return nil
		})
		if err != nil {
			return VerifyReport{}, ReferenceReport{}, fmt.Errorf("verify: list references: %w", err)
		}
	}
	return rep, refs.report(), nil
}

// VerifyIn is Verify comparing the uuids in parts (0: as many as the
// journals' records guessed from their size ask for: guessParts), one
// after the other, from one read of the journals (VerifyAll).
func VerifyIn(ctx context.Context, root string, g Graph, parts int) (VerifyReport, error) {
	rep, _, err := VerifyAll(ctx, root, g, VerifyOptions{Parts: parts})
	return rep, err
}

// verifyRead is one VerifyAll: the journals and the graph read once into
// spill files, then compared a part at a time.
type verifyRead struct {
	layout Layout
	g      Graph // nil: the references alone
	agents []string
	files  []journalFile
	parts  int
	refs   bool

	counts journalTally // lines, invalid, foreign: every part's, counted in part 0
	// groups interns the records' groups: a part's records name theirs
	// by index.
	groupMu    sync.Mutex
	groupIndex map[string]uint32
	groupNames []string

	records, graph, references *spillSet
}

// The spill files' entries, little-endian. A record line: its uuid's
// digest, its hash key, its file's index, its line, its group's index.
const recordEntry = 8 + 8 + 4 + 4 + 4

// A reference: the target's digest, the naming record's file, line and
// place among its references, the field's index, the writer's agent index,
// then the source and target uuids (uvarint lengths).
const referenceHead = 8 + 4 + 4 + 4 + 1 + 4

func (v *verifyRead) close() {
	for _, s := range []*spillSet{v.records, v.graph, v.references} {
		if s != nil {
			s.Close()
		}
	}
}

// read spills the journals' lines (and the graph's digests, as they
// stream in meanwhile) to one file per part.
func (v *verifyRead) read(ctx context.Context, dir string) error {
	var err error
	if v.records, err = newSpillSet(dir, v.parts); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if v.refs {
		if v.references, err = newSpillSet(dir, v.parts); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	}
	v.groupIndex = map[string]uint32{}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	graphDone := make(chan error, 1)
	if v.g != nil {
		if v.graph, err = newSpillSet(dir, v.parts); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		go func() { graphDone <- v.spillGraph(gctx) }()
	} else {
		graphDone <- nil
	}
	jerr := v.spillJournals(ctx)
	if jerr != nil {
		cancel()
	}
	gerr := <-graphDone
	if jerr != nil {
		return fmt.Errorf("verify: read journals: %w", jerr)
	}
	if gerr != nil {
		return fmt.Errorf("verify: walk graph: %w", gerr)
	}
	for _, s := range []*spillSet{v.records, v.graph, v.references} {
		if s == nil {
			continue
		}
		if err := s.finish(); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	}
	return nil
}

// spillGraph walks the graph once, spilling each memory's digests to its part.
func (v *verifyRead) spillGraph(ctx context.Context) error {
	w := v.graph.writer()
	var e [16]byte
	err := v.g.Hashes(ctx, func(uuid, hash string) error {
		k := digest(uuid)
		binary.LittleEndian.PutUint64(e[:8], k)
		binary.LittleEndian.PutUint64(e[8:], hashKey(hash))
		return w.add(v.partOf(k), e[:])
	})
	if ferr := w.flush(); err == nil {
		err = ferr
	}
	return err
}

func (v *verifyRead) partOf(k uint64) int { return int(k % uint64(v.parts)) }

// group is the index of group name g.
func (v *verifyRead) group(g string, cache map[string]uint32) uint32 {
	if i, ok := cache[g]; ok {
		return i
	}
	v.groupMu.Lock()
	i, ok := v.groupIndex[g]
	if !ok {
		i = uint32(len(v.groupNames))
		v.groupIndex[g] = i
		v.groupNames = append(v.groupNames, g)
	}
	v.groupMu.Unlock()
	cache[g] = i
	return i
}

// spillJournals reads every line of every journal once, files in
// parallel, spilling each record line (and each reference it makes) to
// the part of its uuid (of the uuid it names).
func (v *verifyRead) spillJournals(ctx context.Context) error {
	var mu sync.Mutex
	errs := make([]error, len(v.files))
	var flushErrs []error // under mu
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(v.files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs := v.records.writer()
			var refs *spillWriter
			if v.references != nil {
				refs = v.references.writer()
			}
			cache := map[string]uint32{}
			var counts journalTally
			var e [recordEntry]byte
			var seen []string
			var ref []byte
			for i := range next {
				if errs[i] = ctx.Err(); errs[i] != nil {
					continue
				}
				f := v.files[i]
				owner := v.agents[f.agent]
				errs[i] = eachLine(v.layout, f.path, func(l journal.Line) error {
					counts.lines++
					switch {
					case l.Err != nil:
						counts.invalid++
						return nil
					case journal.CheckOwner(&l.Record, owner) != nil:
						counts.foreign++
						return nil
					}
					r := &l.Record
					k := digest(r.UUID)
					var hk uint64
					if v.g != nil {
						hk = hashKey(r.Hash())
					}
					var gi uint32
					if refs != nil {
						gi = v.group(r.GroupID(), cache)
					}
					binary.LittleEndian.PutUint64(e[0:], k)
					binary.LittleEndian.PutUint64(e[8:], hk)
					binary.LittleEndian.PutUint32(e[16:], uint32(i))
					binary.LittleEndian.PutUint32(e[20:], uint32(l.Number))
					binary.LittleEndian.PutUint32(e[24:], gi)
					if err := recs.add(v.partOf(k), e[:]); err != nil {
						return err
					}
					if refs == nil {
						return nil
					}
					seen = seen[:0]
					for fi, field := range referenceFields {
						for _, id := range field.names(r) {
							if id == r.UUID || slices.Contains(seen, id) {
								continue
							}
							tk := digest(id)
							ref = binary.LittleEndian.AppendUint64(ref[:0], tk)
							ref = binary.LittleEndian.AppendUint32(ref, uint32(i))
							ref = binary.LittleEndian.AppendUint32(ref, uint32(l.Number))
							ref = binary.LittleEndian.AppendUint32(ref, uint32(len(seen)))
							ref = append(ref, byte(fi))
							ref = binary.LittleEndian.AppendUint32(ref, uint32(f.agent))
							ref = binary.AppendUvarint(ref, uint64(len(r.UUID)))
							ref = append(ref, r.UUID...)
							ref = binary.AppendUvarint(ref, uint64(len(id)))
							ref = append(ref, id...)
							seen = append(seen, id)
							if err := refs.add(v.partOf(tk), ref); err != nil {
								return err
							}
						}
					}
					return nil
				})
			}
			err := recs.flush()
			if refs != nil {
				err = errors.Join(err, refs.flush())
			}
			mu.Lock()
			v.counts.lines += counts.lines
			v.counts.invalid += counts.invalid
			v.counts.foreign += counts.foreign
			if err != nil {
				flushErrs = append(flushErrs, err)
			}
			mu.Unlock()
		}()
	}
	for i := range v.files {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(append(errs, flushErrs...)...)
}

// at is where a record line or a reference is in the journals: the order
// the journals are read in (the file's index, the line, the reference's
// place among its record's).
type at struct{ file, line, pos uint32 }

func (a at) compare(b at) int {
	return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line), cmp.Compare(a.pos, b.pos))
}

// groupAt is the group of a uuid's first record line, and where it is.
type groupAt struct {
	at    at
	group uint32
}

// noGroup marks a uuid that references name and no record line holds.
const noGroup = ^uint32(0)

// comparePart compares part pt: the spilled records with the graph's
// (comparePart) and, at the same time, the references to its uuids with
// the groups of their records, each from its own read of the spill.
func (v *verifyRead) comparePart(ctx context.Context, pt partition, refs *refCheck) (VerifyReport, error) {
	var rep VerifyReport
	var wg sync.WaitGroup
	var cerr, rerr error
	if v.g != nil {
		wg.Go(func() { rep, cerr = v.compareRecords(ctx, pt) })
	}
	if v.refs {
		wg.Go(func() { rerr = v.checkReferences(pt, refs) })
	}
	wg.Wait()
	if err := errors.Join(cerr, rerr); err != nil {
		return VerifyReport{}, err
	}
	return rep, nil
}

// eachSpilled calls fn with every entry of size bytes in r.
func eachSpilled(r io.Reader, size int, dir string, fn func([]byte)) error {
	buf := make([]byte, 4096*size)
	for {
		k, err := io.ReadFull(r, buf)
		if err == io.EOF {
			return nil
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			return fmt.Errorf("verify: %w", err)
		}
		if k%size != 0 {
			return fmt.Errorf("verify: spill file in %s: a torn entry", dir)
		}
		for b := buf[:k]; len(b) > 0; b = b[size:] {
			fn(b[:size])
		}
	}
}

// compareRecords reads part pt's spilled record lines back into what the
// journals want and compares the graph's spilled part with it.
func (v *verifyRead) compareRecords(ctx context.Context, pt partition) (VerifyReport, error) {
	tally := &journalTally{want: make(expected, v.records.size(pt.index)/recordEntry)}
	if pt.index == 0 {
		tally.merge(&v.counts, nil)
	}
	list := make([]lineVersion, 0, 4096)
	err := eachSpilled(v.records.read(pt.index), recordEntry, v.records.dir, func(b []byte) {
		list = append(list, lineVersion{binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])})
		if len(list) == cap(list) {
			tally.merge(&journalTally{}, list)
			list = list[:0]
		}
	})
	if err != nil {
		return VerifyReport{}, err
	}
	tally.merge(&journalTally{}, list)
	if tally.conflicts > 0 {
		if err := resolveClashes(v.layout, v.agents, v.files, tally.want); err != nil {
			return VerifyReport{}, fmt.Errorf("verify: read journals: %w", err)
		}
	}
	return comparePart(ctx, v.layout, v.g, tally, pt, func(mark func(uuid, hash uint64)) error {
		return eachSpilled(v.graph.read(pt.index), 16, v.graph.dir, func(b []byte) {
			mark(binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:]))
		})
	})
}

// eachReference calls fn with every reference spilled to part pt: the
// digest of its target, where it is, the writer's agent index, and the
// source and target uuids (valid until fn returns).
func (v *verifyRead) eachReference(pt partition, fn func(k uint64, where at, field int, agent uint32, source, target []byte)) error {
	br := bufio.NewReader(v.references.read(pt.index))
	head := make([]byte, referenceHead)
	var src, tgt []byte
	fail := func(err error) error { return fmt.Errorf("verify: spill file in %s: %w", v.references.dir, err) }
	str := func(b []byte) ([]byte, error) {
		n, err := binary.ReadUvarint(br)
		if err != nil {
			return b, err
		}
		b = slices.Grow(b[:0], int(n))[:n]
		_, err = io.ReadFull(br, b)
		return b, err
	}
	for {
		if _, err := io.ReadFull(br, head); err == io.EOF {
			return nil
		} else if err != nil {
			return fail(err)
		}
		var err error
		if src, err = str(src); err != nil {
			return fail(err)
		}
		if tgt, err = str(tgt); err != nil {
			return fail(err)
		}
		where := at{binary.LittleEndian.Uint32(head[8:]), binary.LittleEndian.Uint32(head[12:]), binary.LittleEndian.Uint32(head[16:])}
		fn(binary.LittleEndian.Uint64(head[0:]), where, int(head[20]), binary.LittleEndian.Uint32(head[21:]), src, tgt)
	}
}

// checkReferences checks the references to part pt's uuids: a read of
// them gathers their targets, a read of the part's record lines the group
// of each target's first line, and a second read of them checks each, so
// that only the uuids references name are held.
func (v *verifyRead) checkReferences(pt partition, refs *refCheck) error {
	groups := map[uint64]groupAt{}
	err := v.eachReference(pt, func(k uint64, _ at, _ int, _ uint32, _, _ []byte) { groups[k] = groupAt{group: noGroup} })
	if err != nil || len(groups) == 0 {
		return err
	}
	err = eachSpilled(v.records.read(pt.index), recordEntry, v.records.dir, func(b []byte) {
		k := binary.LittleEndian.Uint64(b[0:])
		g, ok := groups[k]
		if !ok {
			return
		}
		a := at{binary.LittleEndian.Uint32(b[16:]), binary.LittleEndian.Uint32(b[20:]), 0}
		if g.group == noGroup || a.compare(g.at) < 0 {
			groups[k] = groupAt{a, binary.LittleEndian.Uint32(b[24:])}
		}
	})
	if err != nil {
		return err
	}
	return v.eachReference(pt, func(k uint64, where at, field int, agent uint32, source, target []byte) {
		blocked := ""
		switch g := groups[k]; {
		case g.group == noGroup:
			blocked = BlockedNoRecord
		case !journal.Sees(v.agents[agent], v.groupNames[g.group]):
			blocked = BlockedNotVisible
		default:
			return
		}
		refs.add(blockedRef{where, field, blocked, string(source), string(target)})
	})
}

// blockedRef is one reference that changes nothing.
type blockedRef struct {
	at             at
	field          int // index in referenceFields
	blocked        string
	source, target string
}

func (b blockedRef) String() string { return b.source + " -> " + b.target }

// refCheck gathers the references that change nothing, part after part:
// their counts, and the first of them in journal order, whatever part
// found them.
type refCheck struct {
	dangling, crossing int
	sample             []blockedRef           // the first SampleSize
	kinds              map[[2]string]*refKind // by field and why
	list               *ReferenceListing      // every one, when asked
}

type refKind struct {
	count  int
	sample []blockedRef // the first KindSampleSize
}

func (c *refCheck) add(b blockedRef) {
	if b.blocked == BlockedNoRecord {
		c.dangling++
	} else {
		c.crossing++
	}
	c.sample = keepFirst(c.sample, b, SampleSize)
	key := [2]string{referenceFields[b.field].name, b.blocked}
	k := c.kinds[key]
	if k == nil {
		k = &refKind{}
		c.kinds[key] = k
	}
	k.count++
	k.sample = keepFirst(k.sample, b, KindSampleSize)
	if c.list != nil {
		c.list.add(b)
	}
}

// keepFirst inserts b into list, sorted by place in the journals, keeping
// the first n.
func keepFirst(list []blockedRef, b blockedRef, n int) []blockedRef {
	if len(list) == n && b.at.compare(list[n-1].at) >= 0 {
		return list
	}
	i, _ := slices.BinarySearchFunc(list, b, func(x, y blockedRef) int { return x.at.compare(y.at) })
	list = slices.Insert(list, i, b)
	if len(list) > n {
		list = list[:n]
	}
	return list
}

// report is the ReferenceReport.
func (c *refCheck) report() ReferenceReport {
	rep := ReferenceReport{Dangling: c.dangling, Crossing: c.crossing}
	for _, b := range c.sample {
		rep.Sample = append(rep.Sample, b.String())
	}
	for _, f := range referenceFields {
		for _, why := range []string{BlockedNoRecord, BlockedNotVisible} {
			k := c.kinds[[2]string{f.name, why}]
			if k == nil {
				continue
			}
			kind := ReferenceKind{Field: f.name, Blocked: why, Count: k.count}
			for _, b := range k.sample {
				kind.Sample = append(kind.Sample, b.String())
			}
			rep.ByKind = append(rep.ByKind, kind)
		}
	}
	return rep
}
