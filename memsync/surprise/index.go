package surprise

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/mapped"
)

// Index holds what the gate reads of recent records: per record its uuid,
// its number of distinct words and whether it is negated, and a posting
// list from word to record. Scoring against it touches only the postings
// of the new record's words, so a gate over 5,000 records costs
// microseconds; Load keeps it on disk, host-local, so that `memsync
// append` does not read 5,000 journal lines each time.
type Index struct {
	parts []indexPart // newest first; ids run on across parts
	limit int         // only the first limit records count
	// With an embedder, every part holds each record's vector too.
	emb Embedder
	dim int
	// unmap releases the index file the parts were read from in place
	// (mapFile); Close calls them.
	unmap []func()
}

// Close releases the index file x was read from, if any (Load maps it
// and reads it in place); x must not be used after. An Index that is
// not closed keeps the mapping until the process exits.
func (x *Index) Close() {
	for _, f := range x.unmap {
		f()
	}
	x.unmap, x.parts = nil, nil
}

type indexPart struct {
	n     int    // records
	recs  []byte // recSize-byte entries: distinct u32, neg u8, uuid offset u32, uuid length u16
	uuids []byte // the uuids, end to end
	post  []byte // postingSize-byte entries (hash, ref), sorted
	vecs  []byte // with an embedder: per record, appendQuantised's 4+dim bytes
}

const recSize = 11

func (p *indexPart) rec(i int) indexRec {
	e := p.recs[i*recSize:]
	off, n := binary.LittleEndian.Uint32(e[5:]), binary.LittleEndian.Uint16(e[9:])
	r := indexRec{distinct: binary.LittleEndian.Uint32(e), neg: e[4] == 1}
	if int(off)+int(n) <= len(p.uuids) {
		r.uuid = string(p.uuids[off : int(off)+int(n)])
	}
	return r
}

type indexRec struct {
	uuid     string
	distinct uint32 // distinct words of its text (negations and stop words left out)
	neg      bool
}

// A posting is a word hash (uint64) and a ref (uint32): the record's
// index in its part << 1, | 1 when the word is in the text (else it comes
// from an entity or tag), both little-endian.
const postingSize = 12

// NewIndex indexes recent (newest first).
func NewIndex(recent []Prior) *Index { return NewIndexVectors(recent, nil) }

// NewIndexVectors indexes recent (newest first) with their vectors by
// emb (nil: words only, NewIndex).
func NewIndexVectors(recent []Prior, emb Embedder) *Index {
	x := newIndex(len(recent), emb)
	x.parts = []indexPart{buildPart(recent, x.emb, x.dim)}
	return x
}

func newIndex(limit int, emb Embedder) *Index {
	x := &Index{limit: limit}
	if emb != nil && emb.Dim() > 0 {
		x.emb, x.dim = emb, emb.Dim()
	}
	return x
}

// modelVersion is what an index file of x records of its embedder: ""
// without one.
func (x *Index) modelVersion() string {
	if x.emb == nil {
		return ""
	}
	return x.emb.Version()
}

// Len is the number of records the index holds.
func (x *Index) Len() int {
	n := 0
	for _, p := range x.parts {
		n += p.n
	}
	return min(n, x.limit)
}

func (x *Index) rec(id uint32) indexRec {
	for i := range x.parts {
		p := &x.parts[i]
		if int(id) < p.n {
			return p.rec(int(id))
		}
		id -= uint32(p.n)
	}
	return indexRec{}
}

// each calls fn with every record (id, counting across parts) that holds
// word hash h, and whether it is in its text.
func (x *Index) each(h uint64, fn func(id uint32, text bool)) {
	offset := uint32(0)
	for _, p := range x.parts {
		n := len(p.post) / postingSize
		// A binary search over the raw bytes (no decoding of the list).
		lo, hi := 0, n
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if binary.LittleEndian.Uint64(p.post[mid*postingSize:]) < h {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		for j := lo; j < n; j++ {
			e := p.post[j*postingSize:]
			if binary.LittleEndian.Uint64(e) != h {
				break
			}
			ref := binary.LittleEndian.Uint32(e[8:])
			if int(ref>>1) >= p.n {
				continue // a damaged file: no such record
			}
			if id := offset + ref>>1; int(id) < x.limit {
				fn(id, ref&1 == 1)
			}
		}
		offset += uint32(p.n)
	}
}

func buildPart(recent []Prior, emb Embedder, dim int) indexPart {
	type posting struct {
		h   uint64
		ref uint32
	}
	var ps []posting
	part := indexPart{n: len(recent), recs: make([]byte, 0, len(recent)*recSize)}
	var words []uint64
	for i := range recent {
		pr := &recent[i]
		words = words[:0]
		neg := false
		eachWord(pr.Text, func(h uint64, isNeg bool) {
			if isNeg {
				neg = true
				return
			}
			words = append(words, h)
		})
		slices.Sort(words)
		words = slices.Compact(words)
		part.recs = binary.LittleEndian.AppendUint32(part.recs, uint32(len(words)))
		part.recs = append(part.recs, boolByte(neg))
		part.recs = binary.LittleEndian.AppendUint32(part.recs, uint32(len(part.uuids)))
		part.recs = binary.LittleEndian.AppendUint16(part.recs, uint16(len(pr.UUID)))
		part.uuids = append(part.uuids, pr.UUID...)
		for _, h := range words {
			ps = append(ps, posting{h, uint32(i)<<1 | 1})
		}
		for _, e := range pr.Entities {
			eachWord(e, func(h uint64, _ bool) { ps = append(ps, posting{h, uint32(i) << 1}) })
		}
		if emb != nil {
			part.vecs = appendQuantised(part.vecs, emb.Embed(pr.Text), dim)
		}
	}
	slices.SortFunc(ps, func(a, b posting) int {
		if a.h != b.h {
			if a.h < b.h {
				return -1
			}
			return 1
		}
		return int(a.ref) - int(b.ref)
	})
	ps = slices.Compact(ps)
	part.post = make([]byte, len(ps)*postingSize)
	for i, p := range ps {
		binary.LittleEndian.PutUint64(part.post[i*postingSize:], p.h)
		binary.LittleEndian.PutUint32(part.post[i*postingSize+8:], p.ref)
	}
	return part
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// coverage is how much of one journal file an index holds.
type coverage struct {
	name string
	size int64 // bytes read: up to and including the last newline
	ino  uint64
}

// rebuildAfter is how many records newer than the index Load reads from
// the journals before it rebuilds the index instead.
const rebuildAfter = 256

// Load returns the index of the n newest records of the journal directory
// journalDir (Recent's records), from the host-local index file at
// indexPath when it still matches the journals (its files unchanged but
// for lines appended since, which are read from the journals), else built
// from the journals and written there for the next call. The index file is
// a cache: deleted, damaged or stale, it is built again; when it cannot be
// written the index is still returned.
//
// Compaction changes a journal without changing its size or inode: it
// blanks archived lines in place. It always appends its compaction record
// (naming every uuid it absorbs) before it blanks one, so an index file is
// taken as stale when a compaction record was appended after it, and is
// not written while a record it would hold is named by a compaction record
// (a compaction under way, or interrupted: its lines are about to go).
func Load(journalDir, indexPath string, n int) (*Index, error) {
	return LoadVectors(journalDir, indexPath, n, nil)
}

// LoadVectors is Load with each record's vector by emb in the index (nil:
// words only, Load). The index file names its model: one of another
// model, or without vectors, is built again. The Index reads the file in
// place (mapped, mapFile): Close it when done with it.
func LoadVectors(journalDir, indexPath string, n int, emb Embedder) (*Index, error) {
	files, err := journalFiles(journalDir)
	if err != nil {
		return nil, err
	}
	x := newIndex(n, emb)
	if loadIndex(x, journalDir, indexPath, files) {
		return x, nil
	}
	recent, cov, pending, err := readRecent(journalDir, files, n)
	if err != nil {
		return nil, err
	}
	part := buildPart(recent, x.emb, x.dim)
	if pending {
		_ = os.Remove(indexPath) // stale: the next call need not read it
	} else {
		_ = writeIndex(indexPath, x, cov, len(recent) >= n, part) // a cache: the next call tries again
	}
	x.parts = []indexPart{part}
	return x, nil
}

type journalFile struct {
	name string
	size int64
	ino  uint64
}

// journalFiles lists the day files of dir, oldest first.
func journalFiles(dir string) ([]journalFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("surprise: %w", err)
	}
	var out []journalFile
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, fmt.Errorf("surprise: %w", err)
		}
		f := journalFile{name: e.Name(), size: info.Size()}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			f.ino = st.Ino
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b journalFile) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// readRecent reads up to n of the newest records of files, newest first,
// and what of each file it read; pending when one of those records is
// named by a compaction record read with them (a compaction has yet to
// blank it).
func readRecent(dir string, files []journalFile, n int) (out []Prior, cov []coverage, pending bool, err error) {
	absorbed := map[string]bool{}
	for i := len(files) - 1; i >= 0 && len(out) < n; i-- {
		data, err := os.ReadFile(filepath.Join(dir, files[i].name))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, nil, false, fmt.Errorf("surprise: %w", err)
		}
		whole := int64(bytes.LastIndexByte(data, '\n') + 1)
		cov = append(cov, coverage{name: files[i].name, size: whole, ino: files[i].ino})
		out, _ = appendPriors(out, data[:whole], n, absorbed)
	}
	if len(absorbed) > 0 {
		for _, p := range out {
			if absorbed[p.UUID] {
				return out, cov, true, nil
			}
		}
	}
	return out, cov, false, nil
}

// appendPriors adds the records of the lines in data, last line first,
// until out holds n; compacted reports whether it read a compaction
// record, and the uuids those absorb go into absorbed (when not nil). A
// compaction record follows every line it absorbs, so reading backwards
// meets it first.
func appendPriors(out []Prior, data []byte, n int, absorbed map[string]bool) (_ []Prior, compacted bool) {
	for end := len(data); end > 0 && len(out) < n; {
		start := bytes.LastIndexByte(data[:end], '\n') + 1
		line := data[start:end]
		end = max(start-1, 0)
		if p, ok := ParsePrior(line); ok {
			out = append(out, p)
		} else if ids, ok := absorbedBy(line); ok {
			compacted = true
			if absorbed != nil {
				for _, id := range ids {
					absorbed[id] = true
				}
			}
		}
	}
	return out, compacted
}

// absorbedField is the field of a compaction record that lists the uuids
// it moves to the archive: compaction.AbsorbedField, which this package
// cannot import (the front binary links it, and must not link compaction);
// compaction.TestSurpriseIndexAfterCompaction runs the real compaction
// against it.
const absorbedField = "absorbed"

// absorbedBy is the uuids a compaction record absorbs; false when line is
// not a compaction record.
func absorbedBy(line []byte) ([]string, bool) {
	if kind, _ := stringField(line, "kind"); kind != "compaction" {
		return nil, false
	}
	return stringsField(line, absorbedField), true
}

// indexMagic starts an index file. Version 3: an index of version 2 may
// hold records compaction blanked since (it did not look for compaction
// records), so it is built again. Version 4: the embedder's model version
// and dimensions, and each record's vector. Version 5: the checksum is
// CRC-32 IEEE (checksum), not Castagnoli.
const indexMagic = "memsync-surprise-index 5\n"

// checksum is the index body's: a damaged file is rebuilt, never read.
// CRC-32 IEEE, whose tables cost a process ~13 µs to make on its first
// use, where Castagnoli's SSE4.2 tables took 130–200 µs (measured on
// 2026-11-26): every `memsync append` of a learning record pays it once.
func checksum(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// loadIndex reads the index file and the journal lines appended since it
// was written; false when it is missing, damaged or no longer matches the
// journals (a file rewritten, truncated or replaced; an older day file
// appeared; too many new lines; a compaction record among them).
func loadIndex(x *Index, dir, path string, files []journalFile) (ok bool) {
	data, unmap, err := mapped.File(path)
	if err != nil {
		return false
	}
	defer func() {
		if ok { // x's parts may lie in the mapped file: Close unmaps it
			x.unmap = append(x.unmap, unmap)
		} else {
			unmap()
		}
	}()
	cov, full, part, decoded := decodeIndex(data, x.modelVersion(), x.dim)
	if !decoded || len(cov) == 0 {
		return false
	}
	covered := map[string]coverage{}
	newest, oldest := cov[0].name, cov[len(cov)-1].name
	for _, c := range cov {
		covered[c.name] = c
	}
	var extra []Prior
	read := map[string]coverage{} // what of each file the index and the lines read since hold
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		c, isCovered := covered[f.name]
		from := int64(0)
		switch {
		case isCovered:
			if f.ino != c.ino || f.size < c.size || f.size > c.size && f.name != newest {
				// Rewritten, or lines added to an older day (an import
				// with --ts): they belong among the indexed records.
				return false
			}
			from = c.size
			delete(covered, f.name)
		case f.name > newest:
		case full && f.name < oldest:
			continue // older than every record the index holds
		default:
			return false
		}
		if from == f.size {
			continue
		}
		fh, err := journal.OpenNoFollow(filepath.Join(dir, f.name), os.O_RDONLY, 0)
		if err != nil {
			return false
		}
		buf := make([]byte, f.size-from)
		_, err = fh.ReadAt(buf, from)
		fh.Close()
		if err != nil {
			return false
		}
		read[f.name] = coverage{name: f.name, size: from + int64(bytes.LastIndexByte(buf, '\n')+1), ino: f.ino}
		if n := bytes.Count(buf, []byte{'\n'}); n+len(extra) > rebuildAfter {
			return false
		}
		var compacted bool
		if extra, compacted = appendPriors(extra, buf, rebuildAfter+1, nil); compacted {
			return false // lines the index holds may have been blanked since
		}
	}
	if len(covered) > 0 {
		return false // a covered file is gone
	}
	if len(extra) == 0 {
		x.parts = append(x.parts, part)
		return true
	}
	newer := buildPart(extra, x.emb, x.dim)
	if len(extra) < refreshAt {
		x.parts = append(x.parts, newer, part)
		return true
	}
	// Enough new lines to fold them into the file: the next calls read
	// (and, with vectors, embed) none of them again.
	merged := mergeParts(newer, part, x.limit, x.dim)
	for _, c := range cov {
		if _, ok := read[c.name]; !ok {
			read[c.name] = c
		}
	}
	cov = cov[:0]
	for _, c := range read {
		cov = append(cov, c)
	}
	slices.SortFunc(cov, func(a, b coverage) int { return strings.Compare(b.name, a.name) }) // newest first
	_ = writeIndex(path, x, cov, full || merged.n >= x.limit, merged)
	x.parts = append(x.parts, merged)
	return true
}

// refreshAt is how many records newer than the index file make Load
// write it again, with them (fewer are read from the journals each time).
const refreshAt = 32

// mergeParts is newer's records then older's, the first limit of them.
func mergeParts(newer, older indexPart, limit, dim int) indexPart {
	k := min(limit, newer.n+older.n)
	kn := min(k, newer.n)
	ko := k - kn
	m := indexPart{n: k}
	m.recs = append(append(m.recs, newer.recs[:kn*recSize]...), older.recs[:ko*recSize]...)
	for i := kn; i < k; i++ { // older's uuids follow newer's
		e := m.recs[i*recSize:]
		binary.LittleEndian.PutUint32(e[5:], binary.LittleEndian.Uint32(e[5:])+uint32(len(newer.uuids)))
	}
	m.uuids = append(append(m.uuids, newer.uuids...), older.uuids...)
	if dim > 0 {
		stride := 4 + dim
		m.vecs = append(append(m.vecs, newer.vecs[:kn*stride]...), older.vecs[:ko*stride]...)
	}
	// Both posting lists are sorted by (hash, ref); older's refs move up
	// by newer.n records, which keeps it sorted: a linear merge.
	m.post = make([]byte, 0, len(newer.post)+len(older.post))
	shift := uint32(newer.n) << 1
	a, b := newer.post, older.post
	for len(a) > 0 || len(b) > 0 {
		var e []byte
		var ref uint32
		switch {
		case len(b) == 0 || len(a) > 0 && binary.LittleEndian.Uint64(a) < binary.LittleEndian.Uint64(b):
			e, a = a[:postingSize], a[postingSize:]
			ref = binary.LittleEndian.Uint32(e[8:])
		default:
			// On equal hashes older's shifted refs are above every one
			// of newer's, so newer's come first.
			if len(a) > 0 && binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) {
				e, a = a[:postingSize], a[postingSize:]
				ref = binary.LittleEndian.Uint32(e[8:])
			} else {
				e, b = b[:postingSize], b[postingSize:]
				ref = binary.LittleEndian.Uint32(e[8:]) + shift
			}
		}
		if int(ref>>1) >= k {
			continue
		}
		m.post = binary.LittleEndian.AppendUint64(m.post, binary.LittleEndian.Uint64(e))
		m.post = binary.LittleEndian.AppendUint32(m.post, ref)
	}
	return m
}

// writeIndex replaces the index file (journal.ReplaceDerived: whole or
// not at all, no fsync): it is a cache that is rebuilt when lost.
func writeIndex(path string, x *Index, cov []coverage, full bool, part indexPart) error {
	b := []byte(indexMagic + "0000") // the checksum, set below
	b = appendString(b, x.modelVersion())
	b = binary.LittleEndian.AppendUint32(b, uint32(x.dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(cov)))
	for _, c := range cov {
		b = appendString(b, c.name)
		b = binary.LittleEndian.AppendUint64(b, uint64(c.size))
		b = binary.LittleEndian.AppendUint64(b, c.ino)
	}
	b = append(b, boolByte(full))
	b = binary.LittleEndian.AppendUint32(b, uint32(part.n))
	b = append(b, part.recs...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(part.uuids)))
	b = append(b, part.uuids...)
	b = append(b, part.vecs...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(part.post)/postingSize))
	b = append(b, part.post...)
	body := len(indexMagic) + 4
	binary.LittleEndian.PutUint32(b[len(indexMagic):], checksum(b[body:]))
	return journal.ReplaceDerived(path, b)
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

var errShort = errors.New("short index")

// decodeIndex reads an index file; false when it is not one, or not one
// of model version model with dim dimensions ("" and 0: without vectors).
func decodeIndex(data []byte, model string, dim int) (cov []coverage, full bool, part indexPart, ok bool) {
	d := decoder{b: data}
	if !bytes.HasPrefix(data, []byte(indexMagic)) {
		return nil, false, part, false
	}
	d.b = d.b[len(indexMagic):]
	if sum := d.u32(); d.err != nil || sum != checksum(d.b) {
		return nil, false, part, false
	}
	if v, dm := d.str(), d.u32(); d.err != nil || v != model || int(dm) != dim {
		return nil, false, part, false
	}
	nc := d.u32()
	if d.err != nil || int(nc) > len(d.b) {
		return nil, false, part, false
	}
	for i := uint32(0); i < nc && d.err == nil; i++ {
		cov = append(cov, coverage{name: d.str(), size: int64(d.u64()), ino: d.u64()})
	}
	full = d.byte() == 1
	part.n = int(d.u32())
	if d.err != nil || part.n > len(d.b)/recSize {
		return nil, false, part, false
	}
	part.recs = d.take(part.n * recSize)
	part.uuids = d.take(int(d.u32()))
	if dim > 0 {
		part.vecs = d.take(part.n * (4 + dim))
	}
	np := d.u32()
	if d.err != nil || uint64(len(d.b)) != uint64(np)*postingSize {
		return nil, false, part, false
	}
	part.post = d.b
	return cov, full, part, true
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || len(d.b) < n {
		d.err = errShort
		return make([]byte, n)
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) byte() byte  { return d.take(1)[0] }
func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.take(4)) }
func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.take(8)) }
func (d *decoder) str() string { return string(d.take(int(binary.LittleEndian.Uint16(d.take(2))))) }
