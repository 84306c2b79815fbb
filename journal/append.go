package journal

import (
	"bytes"
	"encoding/base32"
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

// AppendOptions tune Append.
type AppendOptions struct {
	// NoSync skips the fsync after the write: faster, but a power cut may
	// lose the line (a process crash cannot).
	NoSync bool
	// Now is the clock for records without a ts; time.Now when nil.
	Now func() time.Time
	// IfAbsent writes nothing and returns ErrExists when a line of the
	// file already holds rec's uuid (checked under the lock): records
	// memsync derives with deterministic uuids are journaled once however
	// many processes derive them.
	IfAbsent bool
	// SequenceFile is the agent's host-local high-water file for uuid
	// sequences (memsync.Layout.SequenceFile). Without it, or when it
	// cannot be used, every allocated uuid costs a scan of the whole day
	// file and its archive.
	SequenceFile string
	// Host, when set, is this host's id (HostID): uuids are then allocated
	// as mem_<second>_<agent>_<host>-<NNNN>, unique across hosts sharing
	// the repository (SPEC §12), numbered per host. Empty: the older
	// mem_<second>_<agent>_<NNNN>, unique on one host only.
	Host string
	// Random, when set, makes allocated uuids unguessable: each ends in
	// "-" and RandomPartLen characters of lowercase base32 read from it
	// (crypto/rand.Reader in memsync append), mem_<second>_<agent>_
	// [<host>-]<NNNN>-<random>. Agents of one clone share the host id and
	// the sequence counts up, so without it an agent can name another's
	// uuids it never saw (SPEC §12). The sequence still makes the uuid
	// unique; the random part only hides it.
	Random io.Reader
	// Root, when set, is the repository dir is in: every directory from
	// it down to dir must be a real one, not a symbolic link (RealDir).
	// The day file itself is never written through a link.
	Root string
}

// ErrExists is returned by Append with IfAbsent when the uuid is already
// in the file.
var ErrExists = errors.New("a record with this uuid is already in the journal")

// FileName is the journal file that holds records of ts's UTC day.
func FileName(ts time.Time) string { return ts.UTC().Format("2006-01-02") + ".jsonl" }

// Append writes rec as one line to its UTC day's file in dir, under an
// exclusive lock on that file, in a single write, then fsyncs. A missing ts
// is set to now; a missing uuid is allocated as mem_<ts>_<agent>_<NNNN>
// (with opts.Host and opts.Random: mem_<ts>_<agent>_<host>-<NNNN>-<random>),
// never one that this agent's journal or archive of that day holds or that
// an Append sharing opts.SequenceFile handed out, whatever the line lengths,
// lock waits and clock steps (see sequence.go). Concurrent Appends from any
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
	hostPart := ""
	if opts.Host != "" {
		if !ValidHostID(opts.Host) {
			return "", fmt.Errorf("append: host id %q is not 1-16 characters of a-z and 0-9", opts.Host)
		}
		hostPart = opts.Host + "-"
	}
	probe := *rec
	if probe.UUID == "" {
		// An allocated uuid has this shape and length; the line limit is
		// checked with it so that nothing is created for an oversized record.
		probe.UUID = fmt.Sprintf("mem_%s_%s_%s9999", UUIDTime(rec.TS), rec.Agent, hostPart)
	}
	random := "" // "-<random part>" of an allocated uuid, read before any lock
	if rec.UUID == "" && opts.Random != nil {
		r, err := randomPart(opts.Random)
		if err != nil {
			return "", fmt.Errorf("append: %w", err)
		}
		random = "-" + r
		probe.UUID += random
	}
	if err := probe.Validate(); err != nil {
		return "", err
	}
	if err := checkLineSize(probe.Canonical()); err != nil {
		return "", err
	}
	if opts.Root != "" {
		if err := RealDir(opts.Root, dir); err != nil {
			return "", fmt.Errorf("append: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("append: %w", err)
	}
	// A shared lock on the journal directory: whoever replaces journal
	// files there (the exchange's git merge, which writes a merged file as
	// a new inode) holds it exclusively, since a lock on the old file does
	// not keep an append off the new one while git is still writing it.
	d, err := LockDir(dir, false)
	if err != nil {
		return "", fmt.Errorf("append: %w", err)
	}
	defer d.Close()
	path := filepath.Join(dir, FileName(rec.TS))
	f, err := openLocked(path)
	if err != nil {
		return "", err
	}
	// Closing the file releases the lock.
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("append: %w", err)
	}
	size := st.Size()
	if opts.IfAbsent && rec.UUID != "" {
		data := make([]byte, size)
		if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("append: read %s: %w", path, err)
		}
		if bytes.Contains(data, []byte(`"uuid":"`+rec.UUID+`"`)) {
			return path, ErrExists
		}
	}
	if rec.UUID == "" {
		sec := UUIDTime(rec.TS)
		prefix := fmt.Sprintf("mem_%s_%s_%s", sec, rec.Agent, hostPart)
		n, err := reserveSequence(f, size, dir, FileName(rec.TS), prefix, sec, explicitTS, opts.SequenceFile)
		if err != nil {
			return "", fmt.Errorf("append: %w", err)
		}
		rec.UUID = fmt.Sprintf("%s%04d%s", prefix, n, random)
	}
	line := rec.Canonical()
	if err := checkLineSize(line); err != nil {
		return "", err
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
	buf.Write(line)
	buf.WriteByte('\n')
	if _, err := f.Write(buf.Bytes()); err != nil {
		// A short write would leave a torn line; cut it off again.
		_ = f.Truncate(size)
		return "", fmt.Errorf("append: write %s: %w", path, err)
	}
	if !opts.NoSync {
		if err := f.Sync(); err != nil {
			return "", fmt.Errorf("append: fsync %s: %w", path, err)
		}
		if size == 0 {
			// The file may be new: its directory entry must survive too.
			if err := SyncDir(dir); err != nil {
				return "", fmt.Errorf("append: fsync %s: %w", dir, err)
			}
		}
	}
	return path, nil
}

func checkLineSize(line []byte) error {
	if len(line) > MaxLineBytes {
		return &FieldError{Field: "text", Reason: fmt.Sprintf("record is %d bytes, over the 1 MiB line limit", len(line))}
	}
	return nil
}

// openLocked opens path for appending, creating it, and holds an exclusive
// lock on it; a path that is a symbolic link is refused (*LinkError). A file replaced while we waited for its lock (a rename by
// compaction, a git checkout) would swallow the line into an unlinked inode,
// so the lock only counts if path still names the locked file.
func openLocked(path string) (*os.File, error) {
	for {
		f, err := OpenNoFollow(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("append: %w", err)
		}
		if err := flock(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("append: lock %s: %w", path, err)
		}
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("append: %w", err)
		}
		now, err := os.Stat(path)
		if err == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close()
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("append: %w", err)
		}
	}
}

// LockDir opens dir (a directory, or any file that exists) and takes its
// flock, exclusive or shared, and returns it held (closing it releases the
// lock). journal.Append holds a journal
// directory shared while it appends; a writer that replaces journal files
// in it holds it exclusively.
func LockDir(dir string, exclusive bool) (*os.File, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(d.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return d, nil
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// RandomPartLen is the length of the random part AppendOptions.Random
// adds to a uuid: 40 bits in lowercase base32.
const RandomPartLen = 8

// randomPart reads the random part of a uuid from r.
func randomPart(r io.Reader) (string, error) {
	var b [RandomPartLen * 5 / 8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("random part of the uuid: %w", err)
	}
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:])), nil
}

// isRandomPart: RandomPartLen characters of lowercase base32 (a-z, 2-7).
func isRandomPart[T string | []byte](s T) bool {
	if len(s) != RandomPartLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return true
}

// highestSequence is the highest NNNN of the `"uuid": "<prefix>NNNN"` values
// in buf (4 to 9 digits, any JSON whitespace around the colon): canonical
// lines have no spaces, lines from other tools may, and their uuids must
// not be handed out twice either. A plain substring search, not a regexp:
// it runs on every append, over every line of the current second.
func highestSequence(buf []byte, prefix string) int {
	best := 0
	p := []byte(prefix)
	for off := 0; ; {
		i := bytes.Index(buf[off:], p)
		if i < 0 {
			return best
		}
		at := off + i
		off = at + len(p)
		if !uuidValueAt(buf, at) {
			continue
		}
		j := off
		for j < len(buf) && j-off < 10 && '0' <= buf[j] && buf[j] <= '9' {
			j++
		}
		if n := j - off; n < 4 || n > 9 || j >= len(buf) {
			continue
		}
		// The uuid ends after NNNN, or after NNNN-<random part>.
		if end := j + 1 + RandomPartLen; buf[j] != '"' &&
			(buf[j] != '-' || end >= len(buf) || buf[end] != '"' || !isRandomPart(buf[j+1:end])) {
			continue
		}
		if v, _ := strconv.Atoi(string(buf[off:j])); v > best {
			best = v
		}
	}
}

// uuidValueAt reports whether the string value starting at buf[at] is the
// value of a "uuid" key: buf before it reads `"uuid"`, space, `:`, space, `"`.
func uuidValueAt(buf []byte, at int) bool {
	i := at - 1
	if i < 0 || buf[i] != '"' {
		return false
	}
	i--
	for i >= 0 && isJSONSpace(buf[i]) {
		i--
	}
	if i < 0 || buf[i] != ':' {
		return false
	}
	i--
	for i >= 0 && isJSONSpace(buf[i]) {
		i--
	}
	return i >= 5 && string(buf[i-5:i+1]) == `"uuid"`
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
