package memsync

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/memsync/memsync/journal"
)

// Reject is one line of sync/rejects.jsonl: a journal line that can never
// be projected, where it is and why.
//
// rejects.jsonl is a host-local projection of the journals as they are
// now, like the graph: a reject is identified by its file, its offset and
// the digest of the line's bytes; when the engine reads a file again from
// its start (rewritten, truncated, replaced, a lost cursor, a rebuild) or
// the file is gone, that file's rejects are dropped first and recorded
// again as found. LiveRejects is what the file means.
type Reject struct {
	Time   time.Time `json:"time"`
	File   string    `json:"file"`   // journal file, relative to the repository
	Line   int       `json:"line"`   // 1-based line number
	Offset int64     `json:"offset"` // byte offset of the line's first byte
	// Digest is the hex SHA-256 (first 16 bytes) of the line's bytes
	// without its newline (LineDigest): the line is still there when the
	// bytes at Offset still have it.
	Digest string `json:"digest,omitempty"`
	UUID   string `json:"uuid,omitempty"`
	Reason string `json:"reason"`
}

// key identifies a reject: the same line of the same file, whatever the
// reason given (the graph may word a clash differently over time).
func (r Reject) key() string {
	return r.File + "\x00" + strconv.FormatInt(r.Offset, 10) + "\x00" + r.Digest
}

// LineDigest is the digest of the line that starts at offset in f: the hex
// SHA-256 (first 16 bytes) of its bytes up to, not including, its newline
// (or the end of f). It reads the line in pieces, so a line over the size
// limit costs no memory.
func LineDigest(f io.ReaderAt, offset int64) (string, error) {
	h := sha256.New()
	buf := make([]byte, 32<<10)
	for off := offset; ; {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			h.Write(buf[:i])
			break
		}
		h.Write(buf[:n])
		off += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// locateLine finds where line number line (1-based, blank lines counted)
// of the file at p starts, and its digest: the graph reports a refused
// record by path and line only.
func locateLine(p string, line int) (offset int64, digest string, err error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; n < line; {
		chunk, err := br.ReadSlice('\n')
		offset += int64(len(chunk))
		if err == nil {
			n++
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return 0, "", fmt.Errorf("line %d of %s: %w", line, p, err)
	}
	digest, err = LineDigest(f, offset)
	return offset, digest, err
}

// locateLoser finds the line that holds d's uuid with other content than
// winner (a hash), where it is now. The graph names a displaced memory by
// the path and line it was first projected from, but compaction may have
// moved that line to the archive of its day since, leaving blanks in its
// place: the named line is checked first, then the rest of its file, then
// the same day's other file (journal or archive). ok is false when no
// file holds such a line.
func locateLoser(layout Layout, d Memory, winner string) (Reject, bool) {
	return locateVersion(layout, d, func(hash string) bool { return hash != winner })
}

// locateWinner is where the version of n's uuid with hash winner is now:
// the line the graph names (where it was first projected), or, when
// compaction moved it since, its line in the same day's other file. A
// clash's reason names the winning line there, not where it once was.
func locateWinner(layout Layout, n Memory, winner string) (path string, line int) {
	if at, ok := locateVersion(layout, n, func(hash string) bool { return hash == winner }); ok {
		return at.File, at.Line
	}
	return n.Path, n.Line
}

// locateVersion finds the line holding d's uuid whose record's hash
// matches, where it is now: d's own line first, then the rest of its
// file, then the same day's other file (journal or archive).
func locateVersion(layout Layout, d Memory, match func(hash string) bool) (Reject, bool) {
	if d.Path == "" {
		return Reject{}, false
	}
	files := []string{d.Path}
	dir, base := path.Split(d.Path)
	journalDir := layout.Rel(layout.JournalDir(d.Agent)) + "/"
	archiveDir := layout.Rel(layout.ArchiveDir(d.Agent)) + "/"
	switch dir {
	case journalDir:
		files = append(files, archiveDir+base)
	case archiveDir:
		files = append(files, journalDir+base)
	}
	for i, rel := range files {
		var found, named Reject
		err := eachLine(layout, filepath.Join(layout.Root, filepath.FromSlash(rel)), func(l journal.Line) error {
			if l.Err != nil || l.Record.UUID != d.UUID || !match(l.Record.Hash()) {
				return nil
			}
			at := Reject{File: rel, Line: l.Number, Offset: l.Offset}
			if i == 0 && l.Number == d.Line {
				named = at
				return errFound
			}
			if found.File == "" {
				found = at
			}
			return nil
		})
		if err != nil && !errors.Is(err, errFound) {
			continue // gone or unreadable: the next candidate
		}
		if named.File != "" {
			found = named
		}
		if found.File == "" {
			continue
		}
		f, err := os.Open(filepath.Join(layout.Root, filepath.FromSlash(found.File)))
		if err != nil {
			continue
		}
		found.Digest, err = LineDigest(f, found.Offset)
		f.Close()
		if err == nil {
			return found, true
		}
	}
	return Reject{}, false
}

// errFound ends a scan early: what was looked for is found.
var errFound = errors.New("found")

// loadRejects reads the rejects already recorded, by file, so that a
// journal read again records none twice and a file read again from zero
// can have its rejects dropped.
func loadRejects(p string) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	rs, err := ReadRejects(p)
	for _, r := range rs {
		if out[r.File] == nil {
			out[r.File] = map[string]bool{}
		}
		out[r.File][r.key()] = true
	}
	return out, err
}

// withoutRejectsOf is the content of a rejects file without the rejects of
// the given journal files, and without repeats (two processes may have
// recorded the same line).
func withoutRejectsOf(data []byte, files map[string]bool) []byte {
	var out bytes.Buffer
	seen := map[string]bool{}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		var r Reject
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &r) != nil || files[r.File] || seen[r.key()] {
			continue
		}
		seen[r.key()] = true
		out.Write(line)
	}
	return out.Bytes()
}

// ReadRejects returns every entry of a rejects file as recorded, repeats
// and stale entries included (see LiveRejects).
func ReadRejects(p string) ([]Reject, error) {
	f, err := os.Open(p)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Reject
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var r Reject
		if err := json.Unmarshal(sc.Bytes(), &r); err == nil {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}

// LiveRejects returns agent's rejects that describe the journals as they
// are now, each line once, in file and offset order: an entry recorded
// twice (two daemons, a re-read) counts once; an entry whose line is no
// longer at its offset (the file was rewritten, a merge conflict resolved,
// the file removed) is dropped; and a line that compaction is moving from
// a journal to its archive (so both files hold it for a moment) counts
// once. `memsync status` counts these.
func LiveRejects(layout Layout, agent string) ([]Reject, error) {
	all, err := ReadRejects(layout.RejectsFile(agent))
	if err != nil {
		return nil, fmt.Errorf("read rejects of %s: %w", agent, err)
	}
	seen := map[string]bool{}
	var live []Reject
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	for _, r := range all {
		if seen[r.key()] {
			continue
		}
		seen[r.key()] = true
		f, ok := files[r.File]
		if !ok {
			f, _ = os.Open(filepath.Join(layout.Root, filepath.FromSlash(r.File)))
			files[r.File] = f
		}
		if f == nil {
			continue // the file is gone
		}
		if r.Digest == "" { // recorded before digests: live while the file reaches it
			if fi, err := f.Stat(); err != nil || fi.Size() <= r.Offset {
				continue
			}
		} else if d, err := LineDigest(f, r.Offset); err != nil || d != r.Digest {
			continue
		}
		live = append(live, r)
	}
	// One day's line in both the journal and its archive is one reject:
	// keep the copies of the file that holds more of that line.
	type dayLine struct{ day, digest string }
	perFile := map[dayLine]map[string]int{}
	for _, r := range live {
		if r.Digest == "" {
			continue
		}
		k := dayLine{path.Base(r.File), r.Digest}
		if perFile[k] == nil {
			perFile[k] = map[string]int{}
		}
		perFile[k][r.File]++
	}
	keep := live[:0]
	for _, r := range live {
		if c := perFile[dayLine{path.Base(r.File), r.Digest}]; len(c) > 1 {
			best := r.File
			for file, n := range c {
				if n > c[best] || (n == c[best] && file < best) {
					best = file
				}
			}
			if r.File != best {
				continue
			}
		}
		keep = append(keep, r)
	}
	sort.SliceStable(keep, func(i, j int) bool {
		if keep[i].File != keep[j].File {
			return keep[i].File < keep[j].File
		}
		return keep[i].Offset < keep[j].Offset
	})
	return keep, nil
}
