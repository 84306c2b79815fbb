package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
)

// Mem0 / OpenMemory exports: memories with id, memory (or content),
// metadata, categories, created_at, updated_at and state, as a JSON array,
// an object holding one ("memories", "results" or "data"), or JSON Lines
// (the source: the file, or a directory holding memories.json or
// memories.jsonl).
//
//	id          → the identity (an edited memory supersedes its previous import)
//	memory      → text (content, text: the same)
//	created_at  → ts (a time without an offset is UTC)
//	categories  → tags; the first category that names a kind gives the
//	              kind, else fact
//	state       → deleted: not imported, and what earlier imports wrote
//	              for its id is retired (follow.go); archived or paused: imported with the
//	              tag mem0-archived / mem0-paused (status is memsync's to
//	              derive); active: imported
//	app_name, agent_id, user_id → source.actor (the first present)
//	metadata    → kept verbatim in the record's "mem0_metadata" field

var errTrailing = errors.New("trailing data after the object")

func itoa(n int) string { return strconv.Itoa(n) }

func parseMem0(root string, out *Source) error {
	root, ok := namedIn(root, []string{"memories.json", "memories.jsonl"}, out)
	if !ok {
		return nil
	}
	return walkFiles(root, func(rel string) bool { return rel == "memories.json" || rel == "memories.jsonl" }, out,
		func(f sourceFile) { mem0File(f, out) })
}

// mem0Memory is one memory of an export.
type mem0Memory struct {
	ID         any             `json:"id"`
	Memory     string          `json:"memory"`
	Content    string          `json:"content"`
	Text       string          `json:"text"`
	Metadata   json.RawMessage `json:"metadata"`
	Categories []string        `json:"categories"`
	CreatedAt  string          `json:"created_at"`
	State      string          `json:"state"`
	AppName    string          `json:"app_name"`
	AgentID    string          `json:"agent_id"`
	UserID     string          `json:"user_id"`
}

// mem0File reads one export file.
func mem0File(f sourceFile, out *Source) {
	data := []byte(strings.TrimPrefix(f.data, "\ufeff"))
	trimmed := bytes.TrimSpace(data)
	lineAt := (&lineCounter{data: data, line: 1}).at
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] == '{' && !looksLikeJSONL(data) || trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(data))
		if trimmed[0] == '{' {
			// Find the array of memories inside the object.
			if !seekArray(dec, out, f.rel, lineAt) {
				return
			}
		} else if _, err := dec.Token(); err != nil {
			out.problem(f.rel, 1, "%v", err)
			return
		}
		for dec.More() {
			off := dec.InputOffset()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				out.problem(f.rel, lineAt(off), "not JSON: %s (the rest of the file is not read)", oneLine(err))
				return
			}
			at := bytes.IndexAny(data[off:], "{[\"0123456789tfn-")
			mem0Entry(f, lineAt(off+int64(max(at, 0))), raw, out)
		}
		return
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		mem0Entry(f, i+1, line, out)
	}
}

// lineCounter turns offsets of data into line numbers, counting each byte
// once while the offsets grow (a decoder's do): reading an export is
// linear in its size, not quadratic.
type lineCounter struct {
	data []byte
	off  int // bytes counted so far
	line int // the line at off
}

// at is the line of the byte at off.
func (c *lineCounter) at(off int64) int {
	o := min(int(max(off, 0)), len(c.data))
	if o < c.off {
		c.off, c.line = 0, 1
	}
	c.line += bytes.Count(c.data[c.off:o], []byte("\n"))
	c.off = o
	return c.line
}

// looksLikeJSONL: a file of several top-level objects, one a line.
func looksLikeJSONL(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return false
	}
	return dec.More()
}

// seekArray moves dec into the array of memories of an export object.
func seekArray(dec *json.Decoder, out *Source, file string, lineAt func(int64) int) bool {
	if _, err := dec.Token(); err != nil {
		out.problem(file, 1, "%v", err)
		return false
	}
	for dec.More() {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			out.problem(file, lineAt(off), "not JSON: %s", oneLine(err))
			return false
		}
		key, _ := tok.(string)
		if key == "memories" || key == "results" || key == "data" {
			t, err := dec.Token()
			if d, ok := t.(json.Delim); err == nil && ok && d == '[' {
				return true
			}
			out.problem(file, lineAt(off), "%q is not an array", key)
			return false
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			out.problem(file, lineAt(off), "not JSON: %s", oneLine(err))
			return false
		}
	}
	out.problem(file, 1, "no memories, results or data array")
	return false
}

// mem0Time parses a Mem0 time: RFC 3339, or ISO 8601 without an offset
// (UTC).
func mem0Time(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// mem0Entry reads one memory at line.
func mem0Entry(f sourceFile, line int, raw []byte, out *Source) {
	var m mem0Memory
	if err := json.Unmarshal(raw, &m); err != nil {
		out.problem(f.rel, line, "not a memory object: %s", oneLine(err))
		return
	}
	id := ""
	switch v := m.ID.(type) {
	case string:
		id = strings.TrimSpace(v)
	case float64:
		id = strconv.FormatFloat(v, 'f', -1, 64)
	}
	text := strings.TrimSpace(m.Memory)
	if text == "" {
		text = strings.TrimSpace(m.Content)
	}
	if text == "" {
		text = strings.TrimSpace(m.Text)
	}
	where := f.rel + ":" + itoa(line)
	if text == "" {
		out.problem(f.rel, line, "memory %q has no memory/content text", id)
		return
	}
	state := strings.ToLower(strings.TrimSpace(m.State))
	if state == "deleted" {
		out.skip(where, "deleted in the source")
		if id != "" {
			out.add(&Item{Key: "mem0:" + id, Keyed: true, Removed: true, File: f.rel, Line: line})
		}
		return
	}
	ts, ok := mem0Time(m.CreatedAt)
	if !ok {
		out.problem(f.rel, line, "created_at: %q is not a time", m.CreatedAt)
		return
	}
	it := Item{Key: "mem0:" + id, Keyed: id != "", File: f.rel, Line: line}
	if id == "" {
		it.Key = f.rel
	}
	r := &it.Record
	r.TS, r.Text = ts, text
	r.Kind = journal.KindFact
	for _, c := range m.Categories {
		if k := kindOf(c, ""); k != "" {
			r.Kind = k
			break
		}
	}
	for _, c := range m.Categories {
		if c = strings.TrimSpace(c); c != "" {
			r.Tags = appendUnique(r.Tags, c)
		}
	}
	if state == "archived" || state == "paused" {
		r.Tags = appendUnique(r.Tags, "mem0-"+state)
	}
	for _, a := range []string{m.AppName, m.AgentID, m.UserID} {
		if a = strings.TrimSpace(a); a != "" {
			r.Source = &journal.Source{Actor: a}
			break
		}
	}
	if md := bytes.TrimSpace(m.Metadata); len(md) > 0 && string(md) != "null" && string(md) != "{}" {
		// Canonical: keys sorted, numbers as written.
		dec := json.NewDecoder(bytes.NewReader(md))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if enc.Encode(v) == nil {
				r.Extra = map[string]json.RawMessage{"mem0_metadata": bytes.TrimSpace(buf.Bytes())}
			}
		}
	}
	out.add(&it)
}
