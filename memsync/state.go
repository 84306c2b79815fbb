package memsync

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"time"
)

// stateVersion is the format of sync/state.json.
const stateVersion = 1

// hashWindow is how many bytes at the head of a file, and just before the
// cursor, identify what the cursor has read.
const hashWindow = 4096

// Cursor is how far one journal file has been projected, and enough of the
// file's identity to notice that it was replaced, truncated or rewritten.
type Cursor struct {
	Offset int64  `json:"offset"`
	Line   int    `json:"line"`
	Inode  uint64 `json:"inode,omitempty"`
	Head   string `json:"head,omitempty"` // sha256 of bytes [0, min(offset, hashWindow))
	Tail   string `json:"tail,omitempty"` // sha256 of bytes [max(0, offset-hashWindow), offset)
	// Size and ModTime as last seen: unchanged means nothing to read.
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	// Counted says Records and Future describe the bytes [0, Offset):
	// set by every cursor read from zero by a memsync that counts (a
	// cursor written before it lacks them: status reads its file).
	Counted bool `json:"counted,omitempty"`
	// Records counts the valid records the agent owns in [0, Offset), as
	// status reports them (its journal column), so status need not parse
	// what the daemon parsed already.
	Records int `json:"records,omitempty"`
	// Future holds the ts of the records in [0, Offset) dated after the
	// pass that read them (at most maxFuture: status counts those still
	// ahead of its clock).
	Future []time.Time `json:"future,omitempty"`
}

// maxFuture bounds Cursor.Future: a journal with more future-dated
// records than this has its latest maxFuture counted by status.
const maxFuture = 256

// addFuture keeps ts in fs, the latest maxFuture only.
func addFuture(fs []time.Time, ts time.Time) []time.Time {
	fs = append(fs, ts.UTC())
	if len(fs) > maxFuture {
		slices.SortFunc(fs, func(a, b time.Time) int { return b.Compare(a) })
		fs = fs[:maxFuture]
	}
	return fs
}

// State is one agent's sync/state.json: where each journal file stands, the
// graph it was projected into, and how much of the outbox has drained.
type State struct {
	Version int    `json:"version"`
	Graph   string `json:"graph"`
	// Generation is the graph's generation (Generations) the cursors were
	// made against: another, and every journal is projected again.
	Generation string            `json:"generation,omitempty"`
	Files      map[string]Cursor `json:"files"` // by repo-relative path
	// OutboxDone is the byte offset of the outbox up to which entries have
	// reached the graph.
	OutboxDone int64     `json:"outbox_done"`
	Updated    time.Time `json:"updated"`
}

func newState(graph string) *State {
	return &State{Version: stateVersion, Graph: graph, Files: map[string]Cursor{}}
}

func (s *State) clone() *State {
	c := *s
	c.Files = make(map[string]Cursor, len(s.Files))
	for k, v := range s.Files {
		c.Files[k] = v
	}
	return &c
}

// LoadState reads an agent's state file. A missing file is a fresh state; a
// corrupt one is reported with ErrCorruptState and the caller keeps it aside.
func LoadState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return newState(""), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state %s: %w", path, err)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptState, path, err)
	}
	if s.Version != stateVersion {
		return nil, fmt.Errorf("%w: %s: version %d, want %d", ErrCorruptState, path, s.Version, stateVersion)
	}
	if s.Files == nil {
		s.Files = map[string]Cursor{}
	}
	for name, c := range s.Files {
		if c.Offset < 0 || c.Line < 0 {
			return nil, fmt.Errorf("%w: %s: negative cursor for %s", ErrCorruptState, path, name)
		}
	}
	return &s, nil
}

// ErrCorruptState marks a state file that cannot be trusted.
var ErrCorruptState = fmt.Errorf("corrupt state file")

func saveState(d Disk, path string, s *State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := d.WriteAtomic(path, append(data, '\n')); err != nil {
		return diskErr("save state", path, err)
	}
	return nil
}

// fileID is what the cursor checks against the file on disk.
type fileID struct {
	inode   uint64
	size    int64
	modTime time.Time
}

func statID(fi os.FileInfo) fileID {
	id := fileID{size: fi.Size(), modTime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.inode = uint64(st.Ino)
	}
	return id
}

func hashRange(f io.ReaderAt, from, to int64) (string, error) {
	if to <= from {
		return "", nil
	}
	buf := make([]byte, to-from)
	if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
		return "", err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:16]), nil
}

// stamp fills c's identity for the bytes [0, c.Offset) of f.
func stamp(f io.ReaderAt, c *Cursor, id fileID) error {
	var err error
	if c.Head, err = hashRange(f, 0, min(c.Offset, hashWindow)); err != nil {
		return err
	}
	if c.Tail, err = hashRange(f, max(0, c.Offset-hashWindow), c.Offset); err != nil {
		return err
	}
	c.Inode, c.Size, c.ModTime = id.inode, id.size, id.modTime
	return nil
}

// stillValid says whether the bytes c has read are still the first bytes of
// f. A file that shrank below the cursor, or whose head or the window just
// before the cursor changed, was rewritten: it must be read again from zero.
func stillValid(f io.ReaderAt, c Cursor, id fileID) (bool, error) {
	if id.size < c.Offset {
		return false, nil
	}
	if c.Offset == 0 {
		return true, nil
	}
	head, err := hashRange(f, 0, min(c.Offset, hashWindow))
	if err != nil {
		return false, err
	}
	tail, err := hashRange(f, max(0, c.Offset-hashWindow), c.Offset)
	if err != nil {
		return false, err
	}
	return head == c.Head && tail == c.Tail, nil
}

// isZero says whether c is no cursor at all (a file never read).
func (c Cursor) isZero() bool {
	return c.Offset == 0 && c.Line == 0 && c.Inode == 0 && c.Head == "" && c.Tail == "" &&
		c.Size == 0 && c.ModTime.IsZero() && !c.Counted && c.Records == 0 && len(c.Future) == 0
}
