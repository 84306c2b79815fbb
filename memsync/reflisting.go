package memsync

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// ReferenceListing holds every reference that changes nothing VerifyAll
// found, to list them in journal order in bounded memory: they come part
// by part, so they are sorted in runs of listRun, each spilled to an
// unlinked file (in VerifyOptions.SpillDir), and Each merges the runs.
type ReferenceListing struct {
	dir  string
	buf  []blockedRef
	runs []*os.File
	err  error // the first failed spill: VerifyAll fails
}

// listRun is how many references a sorted run holds (some 20 MB; a
// variable for the tests' many small runs).
var listRun = 1 << 17

// add keeps b for Each.
func (l *ReferenceListing) add(b blockedRef) {
	if l.err != nil {
		return
	}
	l.buf = append(l.buf, b)
	if len(l.buf) == listRun {
		l.err = l.spillRun()
	}
}

func byPlace(a, b blockedRef) int { return a.at.compare(b.at) }

// spillRun writes the buffered references, sorted, as a run.
func (l *ReferenceListing) spillRun() error {
	slices.SortFunc(l.buf, byPlace)
	dir := l.dir
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := createSpillFile(dir)
	if err != nil {
		return fmt.Errorf("spill file in %s: %w", dir, err)
	}
	l.runs = append(l.runs, f)
	w := bufio.NewWriterSize(f, 64<<10)
	var e []byte
	for _, b := range l.buf {
		e = binary.LittleEndian.AppendUint32(e[:0], b.at.file)
		e = binary.LittleEndian.AppendUint32(e, b.at.line)
		e = binary.LittleEndian.AppendUint32(e, b.at.pos)
		e = append(e, byte(b.field))
		if b.blocked == BlockedNotVisible {
			e = append(e, 1)
		} else {
			e = append(e, 0)
		}
		e = binary.AppendUvarint(e, uint64(len(b.source)))
		e = append(e, b.source...)
		e = binary.AppendUvarint(e, uint64(len(b.target)))
		e = append(e, b.target...)
		if _, err := w.Write(e); err != nil {
			return fmt.Errorf("write spill file in %s: %w", dir, err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write spill file in %s: %w", dir, err)
	}
	l.buf = l.buf[:0]
	return nil
}

// runReader reads one run back, a reference at a time.
type runReader struct {
	r    *bufio.Reader
	head blockedRef
	ok   bool
}

func (rr *runReader) next() error {
	var h [14]byte
	if _, err := io.ReadFull(rr.r, h[:]); err == io.EOF {
		rr.ok = false
		return nil
	} else if err != nil {
		return err
	}
	str := func() (string, error) {
		n, err := binary.ReadUvarint(rr.r)
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		_, err = io.ReadFull(rr.r, b)
		return string(b), err
	}
	src, err := str()
	if err != nil {
		return err
	}
	tgt, err := str()
	if err != nil {
		return err
	}
	blocked := BlockedNoRecord
	if h[13] == 1 {
		blocked = BlockedNotVisible
	}
	rr.head = blockedRef{at{binary.LittleEndian.Uint32(h[0:]), binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])},
		int(h[12]), blocked, src, tgt}
	rr.ok = true
	return nil
}

// Each calls fn with every reference, in journal order (file, line, then
// the record's fields in referenceFields order), until fn fails.
func (l *ReferenceListing) Each(fn func(field, blocked, source, target string) error) error {
	if l.err != nil {
		return l.err
	}
	slices.SortFunc(l.buf, byPlace)
	var runs []*runReader
	for _, f := range l.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("read spill file: %w", err)
		}
		rr := &runReader{r: bufio.NewReaderSize(f, 64<<10)}
		if err := rr.next(); err != nil {
			return fmt.Errorf("read spill file: %w", err)
		}
		runs = append(runs, rr)
	}
	mem := 0 // the next of the buffered references
	for {
		best := -1
		for i, rr := range runs {
			if rr.ok && (best < 0 || rr.head.at.compare(runs[best].head.at) < 0) {
				best = i
			}
		}
		var b blockedRef
		switch {
		case mem < len(l.buf) && (best < 0 || l.buf[mem].at.compare(runs[best].head.at) < 0):
			b = l.buf[mem]
			mem++
		case best >= 0:
			b = runs[best].head
			if err := runs[best].next(); err != nil {
				return fmt.Errorf("read spill file: %w", err)
			}
		default:
			return nil
		}
		if err := fn(referenceFields[b.field].name, b.blocked, b.source, b.target); err != nil {
			return err
		}
	}
}

// Close releases the runs' files.
func (l *ReferenceListing) Close() error {
	var errs []error
	for _, f := range l.runs {
		errs = append(errs, f.Close())
	}
	l.runs = nil
	return errors.Join(errs...)
}
