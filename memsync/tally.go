package memsync

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/memsync/memsync/journal"
)

// JournalTally is what a rebuild learns of the journals as it reads them,
// for VerifyTallied: each record line's uuid and content digests, the lines
// it rejected, and how many lines of each file it read. With it, the verify
// after a rebuild does not parse and hash every journal line a second time
// (at 1M records that second read was 2.5 of verify's 3.4 CPU-s).
//
// The digests, 16 bytes a record, go to an unlinked file, not to memory:
// held in the heap through a 1M rebuild they raised its peak RSS by twice
// their size (the garbage collector's goal grows with the live heap).
//
// Set Options.Tally to one from NewJournalTally before Engine.Rebuild, and
// Close it after VerifyTallied. The engine's reader is its only writer; it
// is not safe for concurrent use.
type JournalTally struct {
	counts journalTally   // lines, invalid and foreign; want stays nil
	spill  *os.File       // the record lines' digests, unlinked
	w      *bufio.Writer  // to spill
	n      int            // digests written
	err    error          // the first failed write: the tally is not used
	files  map[string]int // work-tree path → complete lines read, blank ones too
	rec    [tallyRecord]byte
}

// tallyRecord is the size of a record line's digests in the spill file.
const tallyRecord = 16

// NewJournalTally returns an empty tally whose digests are kept in an
// unlinked file in dir (nothing is left behind if the process dies).
func NewJournalTally(dir string) (*JournalTally, error) {
	f, err := os.CreateTemp(dir, ".tally-*")
	if err != nil {
		return nil, fmt.Errorf("journal tally: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal tally: %w", err)
	}
	return &JournalTally{spill: f, w: bufio.NewWriterSize(f, 64<<10), files: map[string]int{}}, nil
}

// Close releases the tally's file.
func (t *JournalTally) Close() error { return t.spill.Close() }

// line counts one non-blank line: a record the journal may project (m, its
// hash computed), or a rejected one (bad, or another agent's).
func (t *JournalTally) line(l *journal.Line, notOwned error, m *Memory) {
	t.counts.lines++
	switch {
	case l.Err != nil:
		t.counts.invalid++
	case notOwned != nil:
		t.counts.foreign++
	case t.err == nil:
		binary.LittleEndian.PutUint64(t.rec[:8], digest(m.UUID))
		binary.LittleEndian.PutUint64(t.rec[8:], hashKey(m.Hash()))
		if _, err := t.w.Write(t.rec[:]); err != nil {
			t.err = err
		}
		t.n++
	}
}

// read notes that a read of rel reached its end after n complete lines. A
// file read twice (rewritten while the rebuild ran) counts its lines twice,
// and one whose read stopped short counts too few: VerifyTallied sees both.
func (t *JournalTally) read(rel string, n int) { t.files[rel] += n }

// want reads the digests back into what verify compares the graph with.
func (t *JournalTally) want() (*journalTally, error) {
	if err := t.w.Flush(); err != nil {
		return nil, err
	}
	if _, err := t.spill.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	tally := &journalTally{want: make(expected, t.n)}
	tally.merge(&t.counts, nil)
	buf := make([]byte, 4096*tallyRecord)
	list := make([]lineVersion, 0, 4096)
	for left := t.n * tallyRecord; left > 0; {
		b := buf[:min(left, len(buf))]
		if _, err := io.ReadFull(t.spill, b); err != nil {
			return nil, err
		}
		left -= len(b)
		list = list[:0]
		for ; len(b) > 0; b = b[tallyRecord:] {
			list = append(list, lineVersion{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:tallyRecord])})
		}
		tally.merge(&journalTally{}, list)
	}
	return tally, nil
}

// VerifyTallied is Verify with the journals' side taken from t, a rebuild's
// tally, instead of a second read: the graph is still walked whole. The
// tally is used only when every journal file under root still has exactly
// the complete lines the rebuild read of it (counted again here, without
// parsing: about a tenth of the cost of reading them); otherwise, or with
// t nil, the journals are read as Verify reads them. The journals may then
// have grown since the rebuild, and a difference is reported as by Verify.
func VerifyTallied(ctx context.Context, root string, g Graph, t *JournalTally) (VerifyReport, error) {
	layout := Layout{Root: root}
	if t == nil {
		return Verify(ctx, root, g)
	}
	agents, files, err := listJournals(layout)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("verify: read journals: %w", err)
	}
	same, err := t.matches(layout, files)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("verify: read journals: %w", err)
	}
	var tally *journalTally
	if same && t.err == nil {
		tally, err = t.want()
	}
	if tally == nil || err != nil {
		// Changed since, or the tally's file failed: read them again.
		return Verify(ctx, root, g)
	}
	if tally.conflicts > 0 {
		if err := resolveClashes(layout, agents, files, tally.want); err != nil {
			return VerifyReport{}, fmt.Errorf("verify: read journals: %w", err)
		}
	}
	// The journals' side is ready: the graph's is compared as it streams.
	rep, err := compare(ctx, layout, g, tally, func(mark func(uuid, hash uint64)) error {
		return walkDigests(ctx, g, func(batch []lineVersion) {
			for _, d := range batch {
				mark(d.uuid, d.hash)
			}
		})
	})
	rep.JournalsFromRebuild = err == nil
	return rep, err
}

// walkDigests calls fn with the digests of every memory's uuid and hash in
// g, a batch at a time, one call at a time. A PartHasher is read in one
// part per core at once, each part digesting its own rows (nothing writes
// the graph while a rebuild's verify runs); another Graph in one part.
func walkDigests(ctx context.Context, g Graph, fn func([]lineVersion)) error {
	const batch = 4096
	ph, ok := g.(PartHasher)
	if !ok {
		ph = onePart{g}
	}
	var mu sync.Mutex
	bufs := make([][]lineVersion, runtime.GOMAXPROCS(0))
	flush := func(part int) {
		mu.Lock()
		defer mu.Unlock()
		fn(bufs[part])
		bufs[part] = bufs[part][:0]
	}
	err := ph.HashParts(ctx, len(bufs), func(part int, uuid, hash string) error {
		if bufs[part] == nil {
			bufs[part] = make([]lineVersion, 0, batch)
		}
		if bufs[part] = append(bufs[part], lineVersion{digest(uuid), hashKey(hash)}); len(bufs[part]) == batch {
			flush(part)
		}
		return nil
	})
	for part := range bufs {
		flush(part)
	}
	return err
}

// onePart is a Graph's Hashes as a PartHasher of a single part.
type onePart struct{ g Graph }

func (o onePart) HashParts(ctx context.Context, _ int, fn func(part int, uuid, hash string) error) error {
	return o.g.Hashes(ctx, func(uuid, hash string) error { return fn(0, uuid, hash) })
}

// matches reports whether files are the files t read, each holding the
// complete lines t read of it.
func (t *JournalTally) matches(layout Layout, files []journalFile) (bool, error) {
	if len(files) != len(t.files) {
		return false, nil
	}
	buf := make([]byte, 256<<10)
	for _, f := range files {
		want, ok := t.files[layout.Rel(f.path)]
		if !ok {
			return false, nil
		}
		n, err := completeLines(f.path, buf)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("count lines of %s: %w", layout.Rel(f.path), err)
		}
		if n != want {
			return false, nil
		}
	}
	return true, nil
}

// CountJournalLines counts the complete lines (blank ones too) of every
// journal and archive of every agent under root, without parsing them.
func CountJournalLines(root string) (int, error) {
	layout := Layout{Root: root}
	_, files, err := listJournals(layout)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 256<<10)
	total := 0
	for _, f := range files {
		n, err := completeLines(f.path, buf)
		if err != nil {
			return 0, fmt.Errorf("count lines of %s: %w", layout.Rel(f.path), err)
		}
		total += n
	}
	return total, nil
}

// completeLines counts the newlines of the file at path, reading it through buf.
func completeLines(path string, buf []byte) (int, error) {
	f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return newlines(f, buf)
}

// newlines counts the newlines r holds, reading it through buf; on an
// error, those before it.
func newlines(r io.Reader, buf []byte) (int, error) {
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
