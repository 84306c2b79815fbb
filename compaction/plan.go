package compaction

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
)

// AbsorbedField is the extra field of a compaction record that lists the
// uuids it absorbed.
const AbsorbedField = "absorbed"

// Item is one journal line a compaction absorbs.
type Item struct {
	File    string       `json:"file"` // journal file name, e.g. 2026-11-20.jsonl
	Line    int          `json:"line"`
	UUID    string       `json:"uuid"`
	Kind    journal.Kind `json:"kind"`
	TS      time.Time    `json:"ts"`
	Text    string       `json:"text"`              // first line, shortened
	Resumed bool         `json:"resumed,omitempty"` // claimed by an earlier, interrupted compaction
}

// FileReport is what compaction does to one journal file.
type FileReport struct {
	File     string `json:"file"`
	Reason   string `json:"reason"`   // why its lines are absorbed
	Absorbed int    `json:"absorbed"` // lines
}

// plan is what one run will absorb.
type plan struct {
	absorb   map[string]bool // uuids whose lines move to the archive
	newUUIDs []string        // absorbed for the first time: listed by this run's compaction record(s)
	resumed  int             // lines finishing an earlier, interrupted compaction
	kinds    map[journal.Kind]int
	first    time.Time // ts range of the newly absorbed records
	last     time.Time
	files    []*FileReport         // journal files with lines to absorb, in name order
	torn     map[string][]tornLine // file → lines an interrupted run left half blanked
	items    []Item                // only when asked for (dry run)
}

type liveFile struct {
	name    string
	path    string
	past    bool // older than the days compaction keeps
	records int  // the agent's valid records, compaction records not counted
}

type candidate struct {
	uuid string
	kind journal.Kind
	ts   time.Time
	item Item
}

// makePlan reads the agent's live journals. A line is absorbed when
//   - an earlier compaction record in the journal claims its uuid (that
//     compaction was interrupted before it removed the line), or its exact
//     record is already in the archive of its day (a leftover copy), or
//   - its day is past the keep window (every record, compaction records
//     too), or its day holds more than maxDayLines records (every record
//     but compaction records).
//
// The second kind only counts when it includes a record other than a
// compaction record, so that compaction records alone never cause a new
// compaction (which would write yet another compaction record).
func makePlan(l journal.Layout, dir, archiveDir string, today time.Time, keepDays, maxDayLines int, withItems bool) (*plan, error) {
	files, err := liveFiles(l, dir, today, keepDays)
	if err != nil {
		return nil, err
	}
	agent := filepath.Base(filepath.Dir(filepath.Dir(dir)))
	claimed := map[string]bool{}
	for _, lf := range files {
		err := eachLine(lf.path, func(l journal.Line) error {
			if l.Err != nil || l.Record.Agent != agent {
				return nil
			}
			if l.Record.Kind != journal.KindCompaction {
				lf.records++
				return nil
			}
			ids, err := absorbedList(&l.Record)
			if err != nil {
				return nil // not one of ours: an ordinary record
			}
			for _, id := range ids {
				claimed[id] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	p := &plan{absorb: map[string]bool{}, kinds: map[journal.Kind]int{}, torn: map[string][]tornLine{}}
	perFile := map[string]*FileReport{}
	var cands []candidate
	candFiles := map[string]map[string]int{} // file → uuid → lines
	substantive := false
	reasons := map[string]string{}
	for _, lf := range files {
		archived, err := archiveKeys(filepath.Join(archiveDir, lf.name))
		if err != nil {
			return nil, err
		}
		overfull := lf.records > maxDayLines
		reason := ""
		switch {
		case lf.past:
			reason = "older than the days kept"
		case overfull:
			reason = fmt.Sprintf("%d records, over %d", lf.records, maxDayLines)
		}
		var bad [][2]int64
		err = eachLine(lf.path, func(l journal.Line) error {
			if l.Err != nil {
				bad = append(bad, [2]int64{l.Offset, l.End})
			}
			if l.Err != nil || l.Record.Agent != agent {
				return nil // never absorbed: rejects stay where a person can fix them
			}
			r := &l.Record
			it := Item{File: lf.name, Line: l.Number, UUID: r.UUID, Kind: r.Kind, TS: r.TS, Text: shortText(r.Text, 100)}
			switch {
			case claimed[r.UUID] || archived[recordKey(r)]:
				p.absorb[r.UUID] = true
				p.resumed++
				fr := perFile[lf.name]
				if fr == nil {
					fr = &FileReport{File: lf.name, Reason: "finishing an interrupted compaction"}
					perFile[lf.name] = fr
				}
				fr.Absorbed++
				if withItems {
					it.Resumed = true
					p.items = append(p.items, it)
				}
			case lf.past || (overfull && r.Kind != journal.KindCompaction):
				if candFiles[lf.name] == nil {
					candFiles[lf.name] = map[string]int{}
				}
				candFiles[lf.name][r.UUID]++
				c := candidate{uuid: r.UUID, kind: r.Kind, ts: r.TS}
				if withItems {
					c.item = it
				}
				cands = append(cands, c)
				if r.Kind != journal.KindCompaction {
					substantive = true
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		reasons[lf.name] = reason
		torn, err := tornLines(lf.path, filepath.Join(archiveDir, lf.name), bad)
		if err != nil {
			return nil, err
		}
		if len(torn) > 0 {
			p.torn[lf.name] = torn
			p.resumed += len(torn)
			fr := perFile[lf.name]
			if fr == nil {
				fr = &FileReport{File: lf.name, Reason: "finishing an interrupted compaction"}
				perFile[lf.name] = fr
			}
			fr.Absorbed += len(torn)
		}
	}
	if substantive {
		for _, c := range cands {
			if p.absorb[c.uuid] {
				continue // also claimed: already counted
			}
			p.absorb[c.uuid] = true
			p.newUUIDs = append(p.newUUIDs, c.uuid)
			p.kinds[c.kind]++
			if p.first.IsZero() || c.ts.Before(p.first) {
				p.first = c.ts
			}
			if c.ts.After(p.last) {
				p.last = c.ts
			}
			if withItems {
				p.items = append(p.items, c.item)
			}
		}
		for name, ids := range candFiles {
			fr := perFile[name]
			if fr == nil {
				fr = &FileReport{File: name, Reason: reasons[name]}
				perFile[name] = fr
			} else {
				fr.Reason += "; " + reasons[name]
			}
			for _, n := range ids {
				fr.Absorbed += n
			}
		}
	}
	for _, fr := range perFile {
		if fr.Absorbed > 0 {
			p.files = append(p.files, fr)
		}
	}
	sort.Slice(p.files, func(i, j int) bool { return p.files[i].File < p.files[j].File })
	sort.SliceStable(p.items, func(i, j int) bool {
		if p.items[i].File != p.items[j].File {
			return p.items[i].File < p.items[j].File
		}
		return p.items[i].Line < p.items[j].Line
	})
	return p, nil
}

// liveFiles lists the journals directly in dir (not the archive), by name:
// the files the engine reads (journal.Layout.DayFiles), nothing through a
// symbolic link.
func liveFiles(l journal.Layout, dir string, today time.Time, keepDays int) ([]*liveFile, error) {
	paths, _, err := l.DayFiles(dir)
	if err != nil {
		return nil, err
	}
	cutoff := today.AddDate(0, 0, -keepDays)
	var out []*liveFile
	for _, path := range paths {
		name := filepath.Base(path)
		lf := &liveFile{name: name, path: path}
		if day, err := time.Parse("2006-01-02", strings.TrimSuffix(name, ".jsonl")); err == nil && keepDays >= 0 {
			lf.past = day.Before(cutoff)
		}
		out = append(out, lf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// tornLine is a journal line that an interrupted compaction left partly
// blanked, and the archived line it was.
type tornLine struct {
	offset   int64
	original []byte
}

// tornLines finds, among the rejected lines of the journal at path (spans
// [offset, end)), those that are an archived line of archivePath partly
// blanked (see isTornCopy).
func tornLines(path, archivePath string, spans [][2]int64) ([]tornLine, error) {
	if len(spans) == 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type suspect struct {
		offset int64
		line   []byte
	}
	var suspects []suspect
	lengths := map[int64]bool{}
	for _, sp := range spans {
		if sp[1]-sp[0] > journal.MaxLineBytes+2 {
			continue // longer than any archived line (a record, its \r and \n)
		}
		b := make([]byte, sp[1]-sp[0])
		if _, err := f.ReadAt(b, sp[0]); err != nil {
			return nil, err
		}
		suspects = append(suspects, suspect{sp[0], b})
		lengths[int64(len(b))] = true
	}
	originals := map[int64][][]byte{} // archived lines of a suspect's length
	a, err := os.Open(archivePath)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer a.Close()
	err = eachLineOf(a, archivePath, func(l journal.Line) error {
		n := l.End - l.Offset
		if l.Err != nil || !lengths[n] {
			return nil
		}
		b := make([]byte, n)
		if _, err := a.ReadAt(b, l.Offset); err != nil {
			return err
		}
		originals[n] = append(originals[n], b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []tornLine
	for _, s := range suspects {
		for _, o := range originals[int64(len(s.line))] {
			if isTornCopy(s.line, o) {
				out = append(out, tornLine{offset: s.offset, original: o})
				break
			}
		}
	}
	return out, nil
}

// absorbedList decodes a compaction record's absorbed uuids.
func absorbedList(r *journal.Record) ([]string, error) {
	raw, ok := r.Extra[AbsorbedField]
	if !ok {
		return nil, fmt.Errorf("no %s field", AbsorbedField)
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// recordKey identifies one version of a record: its uuid and content.
func recordKey(r *journal.Record) string { return r.UUID + "\x00" + r.Hash() }

// archiveKeys lists the record versions an archive file holds (none when
// it does not exist).
func archiveKeys(path string) (map[string]bool, error) {
	keys := map[string]bool{}
	err := eachLine(path, func(l journal.Line) error {
		if l.Err == nil {
			keys[recordKey(&l.Record)] = true
		}
		return nil
	})
	return keys, err
}

// eachLine calls fn for every complete non-blank line of the file at path
// (none when it does not exist).
func eachLine(path string, fn func(l journal.Line) error) error {
	f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return eachLineOf(f, path, fn)
}

// eachLineOf is eachLine over an open file, from its start; a caller that
// needs a line's bytes reads [Offset, End) with ReadAt.
func eachLineOf(f *os.File, path string, fn func(l journal.Line) error) error {
	r := journal.NewReader(io.NewSectionReader(f, 0, 1<<62), 0, 0)
	for {
		l, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
}

// shortText is text on one line, at most n runes.
func shortText(text string, n int) string {
	s := strings.Join(strings.Fields(text), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
