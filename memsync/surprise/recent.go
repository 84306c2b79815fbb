package surprise

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// DefaultRecent is how many of an agent's latest records the gate
// compares a new one with.
const DefaultRecent = 5000

// Recent reads up to n of the newest records in an agent's journal
// directory (the day files, newest first, each read from its end; not the
// archive), skipping memsync's own bookkeeping records (compaction,
// feedback, promotion) and lines it cannot read. It reads only the fields
// the gate needs, without decoding whole records.
func Recent(journalDir string, n int) ([]Prior, error) {
	files, err := journalFiles(journalDir)
	if err != nil {
		return nil, err
	}
	out, _, _, err := readRecent(journalDir, files, n)
	return out, err
}

// ParsePrior reads the fields the gate needs from one journal line; false
// for a line without text or of one of memsync's bookkeeping kinds.
func ParsePrior(line []byte) (Prior, bool) {
	text, ok := stringField(line, "text")
	if !ok || text == "" || !utf8.ValidString(text) {
		// A line that is not valid UTF-8 is a reject, never a record.
		return Prior{}, false
	}
	switch kind, _ := stringField(line, "kind"); kind {
	case "compaction", "feedback", "promotion":
		return Prior{}, false
	}
	p := Prior{Text: text}
	p.UUID, _ = stringField(line, "uuid")
	p.Entities = append(stringsField(line, "entities"), stringsField(line, "tags")...)
	return p, true
}

// valueOf finds the raw JSON value of a top-level-looking key in line:
// `"key"`, spaces, `:`. Inside a JSON string a quote is always escaped, so
// an unescaped `"key"` followed by a colon can only be a key (a nested
// object's key of the same name is not told apart; memsync's records have
// none in these fields' names but unknown fields might: the first wins).
func valueOf(line []byte, key string) ([]byte, bool) {
	pat := `"` + key + `"`
	for off := 0; ; {
		i := bytes.Index(line[off:], []byte(pat))
		if i < 0 {
			return nil, false
		}
		at := off + i
		off = at + len(pat)
		if at > 0 && line[at-1] == '\\' {
			continue
		}
		j := off
		for j < len(line) && isSpace(line[j]) {
			j++
		}
		if j >= len(line) || line[j] != ':' {
			continue
		}
		j++
		for j < len(line) && isSpace(line[j]) {
			j++
		}
		return line[j:], true
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// stringField is the string value of key; false when absent or not a string.
func stringField(line []byte, key string) (string, bool) {
	v, ok := valueOf(line, key)
	if !ok || len(v) == 0 || v[0] != '"' {
		return "", false
	}
	escaped := false
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			if !escaped {
				return string(v[1:i]), true
			}
			var s string
			if json.Unmarshal(v[:i+1], &s) != nil {
				return "", false
			}
			return s, true
		}
	}
	return "", false
}

// stringsField is the string array value of key (nil when absent or not
// an array of strings).
func stringsField(line []byte, key string) []string {
	v, ok := valueOf(line, key)
	if !ok || len(v) == 0 || v[0] != '[' {
		return nil
	}
	inString := false
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && c == ']':
			var out []string
			if json.Unmarshal(v[:i+1], &out) != nil {
				return nil
			}
			return out
		}
	}
	return nil
}
