package memsync

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/memsync/memsync/journal"
)

// outboxEntry is one line of sync/outbox.jsonl: a record that was read from
// its journal but has not reached the graph yet.
type outboxEntry struct {
	Path   string          `json:"path"`
	Line   int             `json:"line"`
	Queued time.Time       `json:"queued"`
	Record json.RawMessage `json:"record"`
}

func encodeOutbox(batch []Memory, now time.Time) []byte {
	var buf bytes.Buffer
	for _, m := range batch {
		e := outboxEntry{Path: m.Path, Line: m.Line, Queued: now, Record: m.Record.Canonical()}
		b, err := json.Marshal(e)
		if err != nil { // a canonical record is always valid JSON
			panic(fmt.Sprintf("memsync: encode outbox entry: %v", err))
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// ErrCorruptOutbox marks an outbox line that cannot be decoded.
var ErrCorruptOutbox = errors.New("corrupt outbox")

// readOutbox returns up to n entries starting at offset, the offset just past
// them, and the queue time of the first one.
func readOutbox(path string, offset int64, n int) ([]Memory, int64, time.Time, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, offset, time.Time{}, nil
	}
	if err != nil {
		return nil, offset, time.Time{}, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, time.Time{}, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var out []Memory
	var first time.Time
	for len(out) < n {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			break // a partial line is never ours to read: Append cuts failed writes
		}
		if err != nil {
			return nil, offset, first, err
		}
		var e outboxEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, offset, first, fmt.Errorf("%w: %s at byte %d: %v", ErrCorruptOutbox, path, offset, err)
		}
		rec, err := journal.Parse(e.Record)
		if err != nil {
			return nil, offset, first, fmt.Errorf("%w: %s at byte %d: %v", ErrCorruptOutbox, path, offset, err)
		}
		if first.IsZero() {
			first = e.Queued
		}
		out = append(out, Memory{Record: rec, Path: e.Path, Line: e.Line})
		offset += int64(len(line))
	}
	return out, offset, first, nil
}

// repairTail cuts a torn last line (a crash in the middle of a write) off a
// file memsync appends to, so the next append starts on a fresh line.
func repairTail(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return false, err
	}
	size := st.Size()
	buf := make([]byte, min(size, 2<<20))
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && err != io.EOF {
			return false, err
		}
		if end == size && chunk[len(chunk)-1] == '\n' {
			return false, nil
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			if err := f.Truncate(start + int64(i) + 1); err != nil {
				return false, err
			}
			return true, f.Sync()
		}
		end = start
	}
	if err := f.Truncate(0); err != nil {
		return false, err
	}
	return true, f.Sync()
}

// countLines counts complete lines in path from offset on.
func countLines(path string, offset int64) (int, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, err
	}
	return newlines(f, make([]byte, 64<<10))
}
