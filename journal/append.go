package journal

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// AppendOptions tune Append.
type AppendOptions struct {
	// NoSync skips the fsync after the write: faster, but a power cut may
	// lose the line (a process crash cannot).
	NoSync bool
	// Now is the clock for records without a ts; time.Now when nil.
	Now func() time.Time
}

// FileName is the journal file that holds records of ts's UTC day.
func FileName(ts time.Time) string { return ts.UTC().Format("2006-01-02") + ".jsonl" }

// Append writes rec as one line to its UTC day's file in dir, under an
// exclusive lock on that file, in a single write, then fsyncs. A missing ts
// is set to now; a missing uuid is allocated as mem_<ts>_<agent>_<NNNN>, unique
// among the lines of that second in the file. Concurrent Appends from any
// number of processes never interleave, tear or share a uuid. If the file
// ends in a torn line left by another writer, the record starts on a new line
// so that it stays intact. It returns the path written.
func Append(dir string, rec *Record, opts AppendOptions) (string, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	explicitTS := !rec.TS.IsZero()
	if !explicitTS {
		rec.TS = now().UTC().Truncate(time.Microsecond)
	}
	rec.TS = rec.TS.UTC()
	if rec.Scope == "" {
		rec.Scope = ScopePrivate
	}
	probe := *rec
	if probe.UUID == "" {
		probe.UUID = "mem_probe" // validated below once allocated
	}
	if err := probe.Validate(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("append: %w", err)
	}
	path := filepath.Join(dir, FileName(rec.TS))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("append: %w", err)
	}
	defer f.Close()
	if err := flock(f); err != nil {
		return "", fmt.Errorf("append: lock %s: %w", path, err)
	}
	// Closing the file releases the lock.
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("append: %w", err)
	}
	size := st.Size()
	if rec.UUID == "" {
		prefix := fmt.Sprintf("mem_%s_%s_", UUIDTime(rec.TS), rec.Agent)
		n, err := maxSequence(f, size, prefix, explicitTS)
		if err != nil {
			return "", fmt.Errorf("append: scan %s: %w", path, err)
		}
		rec.UUID = fmt.Sprintf("%s%04d", prefix, n+1)
	}
	var buf bytes.Buffer
	if size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return "", fmt.Errorf("append: %w", err)
		}
		if last[0] != '\n' {
			buf.WriteByte('\n')
		}
	}
	buf.Write(rec.Canonical())
	buf.WriteByte('\n')
	if buf.Len() > MaxLineBytes+2 {
		return "", &FieldError{Field: "text", Reason: "record is over the 1 MiB line limit"}
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		// A short write would leave a torn line; cut it off again.
		_ = f.Truncate(size)
		return "", fmt.Errorf("append: write %s: %w", path, err)
	}
	if !opts.NoSync {
		if err := f.Sync(); err != nil {
			return "", fmt.Errorf("append: fsync %s: %w", path, err)
		}
	}
	return path, nil
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// maxSequence finds the highest NNNN among uuids with prefix in the file. It
// reads backwards from the end, widening the window while the oldest line in
// view still carries the prefix; whole says to read the whole file (a ts given
// by the caller may belong anywhere in it).
func maxSequence(f *os.File, size int64, prefix string, whole bool) (int, error) {
	re := regexp.MustCompile(`"uuid":"` + regexp.QuoteMeta(prefix) + `([0-9]{4,9})"`)
	window := int64(64 << 10)
	for {
		if whole || window > size {
			window = size
		}
		buf := make([]byte, window)
		if _, err := f.ReadAt(buf, size-window); err != nil && err != io.EOF {
			return 0, err
		}
		best := 0
		for _, m := range re.FindAllSubmatch(buf, -1) {
			if n, _ := strconv.Atoi(string(m[1])); n > best {
				best = n
			}
		}
		if window == size {
			return best, nil
		}
		// The first line in view may be cut; look at the first whole one.
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 || bytes.Contains(firstLine(buf[nl+1:]), []byte(prefix)) {
			window *= 2
			continue
		}
		return best, nil
	}
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}
