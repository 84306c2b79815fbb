package offline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/memsync/memsync/journal"
)

// eachLine calls fn for every complete line of the file at path, the way
// journal.Reader splits them: numbered from 1 (blank lines count), a
// trailing \r dropped, blank lines and lines over journal.MaxLineBytes
// skipped, and a last line without its newline left out (it may still be
// being written). off is the offset of the line's first byte. The slice is
// only valid during the call.
func eachLine(path string, fn func(line []byte, number int, off int64) error) error {
	f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var (
		long    []byte // a line longer than the buffer, gathered
		tooLong bool
		number  int
		off     int64 // offset of the current line's first byte
		size    int64 // bytes of the current line read so far
	)
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			if !tooLong {
				if len(long)+len(chunk) > journal.MaxLineBytes+2 {
					tooLong, long = true, long[:0]
				} else {
					long = append(long, chunk...)
				}
			}
			continue
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		number++
		line := chunk
		if len(long) > 0 || tooLong {
			if !tooLong && len(long)+len(chunk) > journal.MaxLineBytes+2 {
				tooLong = true
			}
			line = append(long, chunk...)
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		if !tooLong && len(line) <= journal.MaxLineBytes && len(bytes.TrimSpace(line)) > 0 {
			if err := fn(line, number, off); err != nil {
				return err
			}
		}
		off += size
		size, long, tooLong = 0, long[:0], false
	}
}

// lightRecord is what ranking needs from a line, read without the cost of
// journal.Parse: no validation beyond the JSON shape of these fields. Byte
// slices point into the line (or into a decoded copy when the JSON string
// had escapes); they are valid while the line is.
type lightRecord struct {
	uuid, ts, agent, kind, scope, text []byte
	entities, tags, supersedes         [][]byte
}

func (r *lightRecord) reset() {
	*r = lightRecord{entities: r.entities[:0], tags: r.tags[:0], supersedes: r.supersedes[:0]}
}

// parse reads line as a JSON object. It reports false when the line is not
// one, or when a field ranking uses has the wrong type: journal.Parse would
// reject such a line too. Duplicate keys keep the last value, as
// encoding/json does.
func (r *lightRecord) parse(b []byte) bool {
	r.reset()
	b = bytes.TrimSpace(b) // as journal.Parse does: any Unicode space
	i := 0
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, end, ok := readString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		switch string(key) {
		case "uuid":
			i, ok = r.str(b, i, &r.uuid)
		case "ts":
			i, ok = r.str(b, i, &r.ts)
		case "agent":
			i, ok = r.str(b, i, &r.agent)
		case "kind":
			i, ok = r.str(b, i, &r.kind)
		case "scope":
			i, ok = r.str(b, i, &r.scope)
		case "text":
			i, ok = r.str(b, i, &r.text)
		case "entities":
			i, ok = r.strs(b, i, &r.entities)
		case "tags":
			i, ok = r.strs(b, i, &r.tags)
		case "supersedes":
			i, ok = r.strs(b, i, &r.supersedes)
		default:
			i, ok = skipValue(b, i, 0)
		}
		if !ok {
			return false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// str reads a string (or null, which leaves dst unset) at b[i:].
func (r *lightRecord) str(b []byte, i int, dst *[]byte) (int, bool) {
	if end, ok := readNull(b, i); ok {
		*dst = nil
		return end, true
	}
	s, end, ok := readString(b, i)
	*dst = s
	return end, ok
}

// strs reads an array of strings (or null) at b[i:].
func (r *lightRecord) strs(b []byte, i int, dst *[][]byte) (int, bool) {
	*dst = (*dst)[:0]
	if end, ok := readNull(b, i); ok {
		return end, true
	}
	if i >= len(b) || b[i] != '[' {
		return i, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		s, end, ok := readString(b, i)
		if !ok {
			return i, false
		}
		*dst = append(*dst, s)
		i = skipSpace(b, end)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func readNull(b []byte, i int) (int, bool) {
	if bytes.HasPrefix(b[i:], []byte("null")) {
		return i + 4, true
	}
	return i, false
}

// readString reads the JSON string starting at b[i] and returns its value
// and the index just past its closing quote. Without escapes the value
// aliases b; with them it is decoded into a new slice. Control characters
// inside the string are not looked for: journal.Parse, which every hit
// goes through, rejects them.
func readString(b []byte, i int) (val []byte, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	q := bytes.IndexByte(b[i+1:], '"')
	if q < 0 {
		return nil, len(b), false
	}
	if bytes.IndexByte(b[i+1:i+1+q], '\\') < 0 {
		return b[i+1 : i+1+q], i + q + 2, true
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			var s string
			if err := json.Unmarshal(b[i:j+1], &s); err != nil {
				return nil, j + 1, false
			}
			return []byte(s), j + 1, true
		case '\\':
			j++
		}
	}
	return nil, len(b), false
}

// maxDepth bounds the nesting skipValue follows.
const maxDepth = 10000

// skipValue steps over the JSON value at b[i:] without decoding it.
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxDepth {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		_, end, ok := skipString(b, i)
		return end, ok
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, true
		}
		for {
			if c == '{' {
				_, end, ok := skipString(b, i)
				if !ok {
					return i, false
				}
				i = skipSpace(b, end)
				if i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = skipSpace(b, i+1)
			}
			end, ok := skipValue(b, i, depth+1)
			if !ok {
				return end, false
			}
			i = skipSpace(b, end)
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case closer:
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
			j++
		}
		return j, true
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if bytes.HasPrefix(b[i:], []byte(lit)) {
		return i + len(lit), true
	}
	return i, false
}

// skipString is readString without decoding.
func skipString(b []byte, i int) (val []byte, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			break
		}
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for k := j + q - 1; k > i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return nil, j + q + 1, true
		}
		j += q + 1
	}
	return nil, len(b), false
}
