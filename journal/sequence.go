package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// How Append numbers the uuids it allocates.
//
// The uuid mem_<second>_<agent>_<NNNN> must never repeat, whatever the line
// lengths, compactions (which move lines from journal/<day>.jsonl to
// journal/archive/<day>.jsonl), lock waits and clock steps. A second's
// uuids live only in that second's day file and its archive, so NNNN is one
// more than the highest of that second found in:
//
//   - the agent's high-water file (AppendOptions.SequenceFile, host-local):
//     the latest second any Append of this agent numbered, and the highest
//     NNNN it gave there. It is written, under its own lock, before the line,
//     so a number is reserved before it is used; a lost or damaged file is
//     rebuilt from the journals by the next Append.
//   - the journal's tail, read backwards until a whole line from an earlier
//     second is in view: lines written by other tools in this second.
//   - when the second is before the high-water second (a clock stepped
//     back, a ts given by the caller, a wait for the lock across a second
//     boundary while others appended) or there is no high-water file: the
//     whole day file and its archive. The file then also remembers that
//     earlier second, so the appends that follow in it read a few KiB again.
//
// So the common append reads a few KiB; only the first append of a second
// the clock went back to reads the day. The uuid's second is always the
// record's (SPEC: mem_<ts to the second>_…); the sequence within a second
// only grows.

// highWater is the content of a sequence file: the latest second numbered
// and the highest NNNN given in it, and, after the clock stepped back, the
// second being numbered meanwhile (back, earlier than sec) and its highest
// NNNN, so that only the first append of each such second scans the day.
type highWater struct {
	sec     string
	seq     int
	back    string
	backSeq int
}

func (h highWater) encode() []byte {
	if h.back == "" {
		return []byte(fmt.Sprintf("%s %d\n", h.sec, h.seq))
	}
	return []byte(fmt.Sprintf("%s %d\n%s %d\n", h.sec, h.seq, h.back, h.backSeq))
}

func parseHighWater(b []byte) (highWater, bool) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 2 {
		return highWater{}, false
	}
	var h highWater
	var ok bool
	if h.sec, h.seq, ok = parseMark(lines[0]); !ok {
		return highWater{}, false
	}
	if len(lines) == 2 {
		if h.back, h.backSeq, ok = parseMark(lines[1]); !ok || h.back >= h.sec {
			return highWater{}, false
		}
	}
	return h, true
}

func parseMark(line string) (string, int, bool) {
	sec, n, ok := strings.Cut(line, " ")
	if !ok || len(sec) != len(uuidTimeLayout) {
		return "", 0, false
	}
	if _, err := time.Parse(uuidTimeLayout, sec); err != nil {
		return "", 0, false // damaged: a second no clock gives would stick
	}
	seq, err := strconv.Atoi(n)
	if err != nil || seq < 0 {
		return "", 0, false
	}
	return sec, seq, true
}

// reserveSequence returns the NNNN for the next uuid of second sec with
// prefix (mem_<sec>_<agent>_) in the day file f (locked by the caller, size
// bytes, named name) of journal directory dir, and records it in the
// high-water file hwPath (none when empty). whole (a ts given by the
// caller) forces the full scan.
func reserveSequence(f *os.File, size int64, dir, name, prefix, sec string, whole bool, hwPath string) (int, error) {
	var (
		hw   highWater
		hwOK bool
		hwF  *os.File
	)
	if hwPath != "" {
		var err error
		// A sequence file that cannot be used (no permission on .memsync/,
		// a link) only costs the full scan: appends keep working.
		if hwF, hw, hwOK, err = openHighWater(hwPath); err == nil {
			// Closing releases the lock, once the reservation is written.
			defer hwF.Close()
		}
	}
	var best int
	switch {
	case hwOK && !whole && sec >= hw.sec:
		// The usual case: now is the latest second. Only another tool
		// can have numbered in it, and its lines are at the tail.
		n, err := tailSequence(f, size, prefix, sec)
		if err != nil {
			return 0, fmt.Errorf("scan %s: %w", f.Name(), err)
		}
		best = n
		if sec == hw.sec {
			best = max(best, hw.seq)
		}
	case hwOK && !whole && sec == hw.back:
		// Still in the second the clock stepped back to: scanned already.
		n, err := tailSequence(f, size, prefix, sec)
		if err != nil {
			return 0, fmt.Errorf("scan %s: %w", f.Name(), err)
		}
		best = max(n, hw.backSeq)
	default:
		// An earlier second (clock stepped back, a lock wait across a
		// second, a ts given by the caller) or nothing known: this
		// second's uuids may be anywhere in the day or its archive.
		n, err := fileSequence(f, size, prefix)
		if err != nil {
			return 0, fmt.Errorf("scan %s: %w", f.Name(), err)
		}
		best = n
		apath := filepath.Join(dir, "archive", name)
		if n, err = archiveSequence(apath, prefix); err != nil {
			return 0, fmt.Errorf("scan %s: %w", apath, err)
		}
		best = max(best, n)
		if hwOK && sec == hw.sec {
			best = max(best, hw.seq)
		}
		if hwOK && sec == hw.back {
			best = max(best, hw.backSeq)
		}
	}
	seq := best + 1
	if hwF == nil {
		return seq, nil
	}
	next := hw
	switch {
	case !hwOK || sec > hw.sec:
		next = highWater{sec: sec, seq: seq}
	case sec == hw.sec:
		next.seq = seq
	case !whole:
		// The clock is behind the high-water second: remember where.
		next.back, next.backSeq = sec, seq
	case sec == hw.back:
		next.backSeq = seq
	}
	if err := writeHighWater(hwF, next); err != nil {
		// The journal lock still serialises this day; the next Append
		// that finds the file stale or damaged scans.
		return seq, nil
	}
	return seq, nil
}

// openHighWater opens (creating) and locks the high-water file at path. A
// missing, empty or unreadable content is ok == false: nothing known.
func openHighWater(path string) (*os.File, highWater, bool, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, highWater{}, false, fmt.Errorf("sequence file: %w", err)
	}
	f, err := OpenNoFollow(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, highWater{}, false, fmt.Errorf("sequence file: %w", err)
	}
	if err := Flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, highWater{}, false, fmt.Errorf("sequence file: lock %s: %w", path, err)
	}
	buf := make([]byte, 128) // two marks of at most 27 bytes; more is damage
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, highWater{}, false, fmt.Errorf("sequence file: read %s: %w", path, err)
	}
	hw, ok := parseHighWater(buf[:n])
	return f, hw, ok, nil
}

// highWaterSize is the sequence file's fixed size: its content padded with
// spaces, so that one write replaces it whole, never leaving a longer old
// content's tail behind.
const highWaterSize = 64

func writeHighWater(f *os.File, hw highWater) error {
	b := hw.encode()
	if len(b) < highWaterSize {
		b = append(b, bytes.Repeat([]byte{' '}, highWaterSize-len(b))...)
	}
	_, err := f.WriteAt(b, 0)
	return err
}

// tailSequence is the highest NNNN with prefix among the last lines of f,
// read backwards (the window doubling) until a whole line whose uuid is of
// a second before sec is in view, or the file's start.
func tailSequence(f *os.File, size int64, prefix, sec string) (int, error) {
	for window := int64(16 << 10); ; window *= 2 {
		if window >= size {
			window = size
		}
		buf := make([]byte, window)
		if _, err := f.ReadAt(buf, size-window); err != nil && err != io.EOF {
			return 0, err
		}
		best := highestSequence(buf, prefix)
		if window == size {
			return best, nil
		}
		// The first line in view may be cut; only whole ones count.
		if nl := bytes.IndexByte(buf, '\n'); nl >= 0 && hasEarlierLine(buf[nl+1:], sec) {
			return best, nil
		}
	}
}

// hasEarlierLine reports whether one of the lines in b carries a mem_ uuid
// of a second before sec.
func hasEarlierLine(b []byte, sec string) bool {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if s, ok := uuidSecond(line); ok && s < sec {
			return true
		}
	}
	return false
}

// uuidSecond is the <second> of the line's first `"uuid": "mem_<second>_`
// value.
func uuidSecond(line []byte) (string, bool) {
	i := bytes.Index(line, []byte(`"uuid"`))
	if i < 0 {
		return "", false
	}
	i += len(`"uuid"`)
	for i < len(line) && isJSONSpace(line[i]) {
		i++
	}
	if i >= len(line) || line[i] != ':' {
		return "", false
	}
	i++
	for i < len(line) && isJSONSpace(line[i]) {
		i++
	}
	const lead = `"mem_`
	n := len(uuidTimeLayout)
	if !bytes.HasPrefix(line[i:], []byte(lead)) || len(line) < i+len(lead)+n+1 || line[i+len(lead)+n] != '_' {
		return "", false
	}
	return string(line[i+len(lead) : i+len(lead)+n]), true
}

// fileSequence is the highest NNNN with prefix in the first size bytes of
// f, read line by line (a line longer than the buffer, a reject anyway, in
// pieces).
func fileSequence(f *os.File, size int64, prefix string) (int, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10)
	best := 0
	for {
		line, err := br.ReadSlice('\n')
		best = max(best, highestSequence(line, prefix))
		switch {
		case err == io.EOF:
			return best, nil
		case err != nil && !errors.Is(err, bufio.ErrBufferFull):
			return 0, err
		}
	}
}

// archiveSequence is fileSequence of the archive at path; none is 0, and
// so is one behind a symbolic link (the engine does not read it either).
func archiveSequence(path, prefix string) (int, error) {
	if RealDir(filepath.Dir(filepath.Dir(path)), filepath.Dir(path)) != nil {
		return 0, nil
	}
	f, err := OpenNoFollow(path, os.O_RDONLY, 0)
	var le *LinkError
	if errors.Is(err, os.ErrNotExist) || errors.As(err, &le) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fileSequence(f, st.Size(), prefix)
}
