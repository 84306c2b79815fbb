package memsync

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Reject is one line of sync/rejects.jsonl: a journal line that can never
// be projected, where it is and why.
type Reject struct {
	Time   time.Time `json:"time"`
	File   string    `json:"file"`
	Line   int       `json:"line"`
	Offset int64     `json:"offset"`
	UUID   string    `json:"uuid,omitempty"`
	Reason string    `json:"reason"`
}

func (r Reject) key() string { return fmt.Sprintf("%s:%d:%d:%s", r.File, r.Line, r.Offset, r.Reason) }

// loadRejectKeys reads the keys of the rejects already recorded, so that a
// journal read again (after a rewrite or a lost cursor) does not record them twice.
func loadRejectKeys(path string) (map[string]bool, error) {
	keys := map[string]bool{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return keys, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var r Reject
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			keys[r.key()] = true
		}
	}
	return keys, sc.Err()
}

// ReadRejects returns every reject recorded for a file of rejects.
func ReadRejects(path string) ([]Reject, error) {
	f, err := os.Open(path)
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
