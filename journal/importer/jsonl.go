package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/memsync/memsync/journal"
)

// memsync's own journal lines (`memsync export --format jsonl`, or any
// agent's journal files: the source is a .jsonl file or a directory of
// them), one record a line. Every record becomes a record of the
// importing agent (SPEC §3: no agent writes as another) with its text,
// kind, time, entities, tags, tier, max_age, confidence, why and
// metadata; its uuid is new, and the uuid it had is kept as origin_uuid,
// so that importing it again, or back into the agent it came from, writes
// nothing. Links and supersedes name the new uuids of their targets where
// the targets come along (a link to a record not in the source is
// reported and left out). A private record stays private, whatever
// --scope says: an import never shares what one agent kept to itself;
// and a record private to another agent than the importing one is left
// out, reported, unless the import moves it (Options.IncludePrivate).
// memsync's own records (feedback, promotions,
// compaction) are skipped: a flag is a person's word through memsync,
// never imported (SPEC §7). A declared importance is left behind.
//
// Files are read a line at a time (memory holds the items, not the
// file); only regular files are read, and a symbolic link inside the
// source is never followed.

// maxJSONLLine is the longest journal line the jsonl importer reads.
const maxJSONLLine = 1 << 20

// jsonlDropped are the metadata a copied record leaves behind: what
// memsync itself sets on the record it writes (or never imports).
var jsonlDropped = []string{FieldImport, FieldOriginUUID, FieldSourceVerified, FieldSourceVerifiedBy,
	journal.FieldFeedback, journal.FieldConsolidation, journal.FieldSupports, "importance"}

func parseJSONL(root string, out *Source) error {
	st, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if !st.IsDir() {
		return jsonlFile(root, filepath.Base(root), true, out)
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case path == root:
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			if strings.HasSuffix(d.Name(), ".jsonl") {
				out.skip(rel, "a symbolic link: not followed")
			}
			return nil
		case d.IsDir():
			if strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		case !strings.HasSuffix(d.Name(), ".jsonl"):
			return nil
		case !d.Type().IsRegular():
			out.skip(rel, "%v", errNotRegular)
			return nil
		}
		return jsonlFile(path, rel, false, out)
	})
}

// jsonlFile reads one file of journal lines into out; a file that cannot
// be opened is a problem of the source, not an error.
func jsonlFile(path, rel string, follow bool, out *Source) error {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			out.skip(rel, "a symbolic link: not followed")
			return nil
		}
		out.problem(rel, 1, "%v", err)
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		out.skip(rel, "%v", errNotRegular)
		return nil
	}
	return jsonlLines(f, rel, out)
}

// jsonlLines reads journal lines from r.
func jsonlLines(r io.Reader, rel string, out *Source) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br, maxJSONLLine)
		if errors.Is(err, errLineTooLong) {
			out.problem(rel, n, "line over %d bytes", maxJSONLLine)
		} else if len(bytes.TrimSpace(line)) > 0 {
			jsonlRecord(line, rel, n, out)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return fmt.Errorf("import: read %s: %w", rel, err)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine is the next line of br without its newline, at most max bytes
// kept (errLineTooLong, the rest of the line consumed, when longer); io.EOF
// with the last line.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > max+1 {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			if long {
				return nil, errLineTooLong
			}
			return bytes.TrimRight(line, "\r\n"), err
		}
		if long {
			return nil, errLineTooLong
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

// jsonlRecord turns one journal line into an item.
func jsonlRecord(line []byte, rel string, n int, out *Source) {
	rec, err := journal.Parse(line)
	if err != nil {
		out.problem(rel, n, "not a journal record: %s", oneLine(err))
		return
	}
	where := rel + ":" + itoa(n)
	switch rec.Kind {
	case journal.KindFeedback, journal.KindPromotion, journal.KindCompaction:
		out.skip(where, "a %s record is memsync's own: not imported", rec.Kind)
		return
	}
	it := Item{Key: "uuid:" + rec.UUID, Names: []string{rec.UUID}, Origin: rec.UUID, File: rel, Line: n,
		Links: rec.Links, Replaces: rec.Supersedes, Private: rec.Scope != journal.ScopeShared, Owner: rec.Agent}
	if o := extraString(&rec, FieldOriginUUID); o != "" {
		// A copy of a copy is the original.
		it.Origin = o
		it.Names = append(it.Names, o)
		it.Key = "uuid:" + o
	}
	r := &it.Record
	r.TS, r.Kind, r.Text = rec.TS, rec.Kind, rec.Text
	r.Refs, r.Entities, r.Tags = rec.Refs, rec.Entities, rec.Tags
	r.Confidence, r.MaxAge, r.Tier, r.Why = rec.Confidence, rec.MaxAge, rec.Tier, rec.Why
	r.Session, r.Task = rec.Session, rec.Task
	if rec.Source != nil {
		r.Source = &journal.Source{Actor: rec.Source.Actor, Context: rec.Source.Context}
	}
	if v := extraString(&rec, FieldSourceVerified); v != "" || string(rec.Extra[FieldSourceVerified]) == "true" {
		it.Verified = true
		it.VerifiedBy = extraString(&rec, FieldSourceVerifiedBy)
	}
	for k, v := range rec.Extra {
		if !containsString(jsonlDropped, k) {
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[k] = v
		}
	}
	if r.Extra == nil {
		r.Extra = map[string]json.RawMessage{}
	}
	r.Extra[FieldOriginUUID] = json.RawMessage(quote(it.Origin))
	out.add(&it)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
