package journal_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/journal")

// testdataDir holds one journal per rule of SPEC §3, named for what it exercises.
const testdataDir = "../testdata/journal"

// want is what one line of a testdata journal must yield: a record (uuid
// set) or a *journal.FieldError naming field with reason in its text.
type want struct {
	line   int
	uuid   string // a record with this uuid; "" with reason set means a reject
	field  string
	reason string
}

func rec(line int, uuid string) want { return want{line: line, uuid: uuid} }
func reject(line int, field, reason string) want {
	return want{line: line, field: field, reason: reason}
}

// cases lists every journal of testdataDir and what reading it yields.
// TestReaderCases fails if a file is missing from here.
var cases = map[string][]want{
	"valid-all-fields": {
		rec(1, "mem_20261121T091500Z_alice_0001"), rec(2, "mem_20261121T091501Z_alice_0001"),
		rec(3, "mem_20261121T091502Z_alice_0001"), rec(4, "mem_20261121T091503Z_alice_0001"),
		rec(5, "mem_20261121T091600Z_alice_0001"), rec(6, "mem_20261121T091601Z_alice_0001"),
		rec(7, "mem_20261121T091602Z_alice_0001"), rec(8, "mem_20261121T091603Z_alice_0001"),
		rec(9, "mem_20261121T091604Z_alice_0001"), rec(10, "mem_20261121T091605Z_alice_0001"),
		rec(11, "mem_20261121T091606Z_alice_0001"), rec(12, "mem_20261121T091607Z_alice_0001"),
		rec(13, "mem_20261121T091608Z_alice_0001"), rec(14, "mem_20261121T091609Z_alice_0001"),
		rec(15, "mem_20261121T091610Z_alice_0001"), rec(16, "mem_20261121T091611Z_alice_0001"),
		rec(17, "mem_20261121T091612Z_alice_0001"), rec(18, "mem_20261121T091613Z_alice_0001"),
	},
	"valid-unicode": {
		rec(1, "mem_20261121T091500Z_alice_h1771a92620477fd6"),
		rec(2, "mem_20261121T091500Z_alice_h435b368c91bab14a"),
		rec(3, "mem_20261121T091500Z_alice_h1fa23966b409e5fe"),
		rec(4, "mem_20261121T091500Z_alice_he0458cd67c1fc112"),
	},
	"valid-crlf":              {rec(1, "crlf-1"), rec(2, "crlf-2"), rec(4, "crlf-3")},
	"valid-blank-lines":       {rec(2, "blank-1"), rec(6, "blank-2"), rec(8, "blank-3")},
	"valid-partial-last-line": {rec(1, "partial-1"), rec(2, "partial-2")},
	"valid-ts-offset":         {rec(1, "tz-1"), rec(2, "tz-2"), rec(3, "tz-3"), rec(4, "tz-4")},
	"valid-unknown-fields":    {rec(1, "extra-1"), rec(2, "extra-1"), rec(3, "extra-2")},
	"valid-derived-uuid": {
		rec(1, "mem_20261121T091500Z_alice_h1ef4291d93c04f1b"),
		rec(2, "mem_20261121T091500Z_alice_h1ef4291d93c04f1b"),
		rec(3, "mem_20261121T091500Z_alice_h1ef4291d93c04f1b"),
		rec(4, "mem_20261121T091500Z_alice_h6d90fb6f0c7585cb"),
		rec(5, "mem_20261121T091500Z_alice_h7ca902dc01aeaa79"),
		rec(6, "mem_20261121T091500Z_bob_hd8be034a3ec236c3"),
	},
	"reject-bad-json": {
		reject(1, "", "bad JSON: unexpected end"),
		rec(2, "good"),
		reject(3, "", "bad JSON: invalid character '}' after top-level value"),
		reject(4, "", "bad JSON: invalid character '{' after top-level value"),
		reject(5, "", "bad JSON"),
		reject(6, "", "bad JSON"),
	},
	"reject-not-object": {
		reject(1, "", "not a JSON object"), reject(2, "", "not a JSON object"),
		reject(3, "", "not a JSON object"), reject(4, "", "not a JSON object"),
		reject(5, "", "not a JSON object"), rec(6, "good"),
	},
	"reject-missing-ts":    {reject(1, "ts", "required"), reject(2, "ts", "required")},
	"reject-missing-agent": {reject(1, "agent", "required"), reject(2, "agent", "required")},
	"reject-missing-kind":  {reject(1, "kind", "required")},
	"reject-missing-text":  {reject(1, "text", "required")},
	"reject-blank-text":    {reject(1, "text", "blank"), reject(2, "text", "blank")},
	"reject-bad-ts": {
		reject(1, "ts", "not an RFC 3339 time"), reject(2, "ts", "not an RFC 3339 time"),
		reject(3, "ts", "not an RFC 3339 time"), reject(4, "ts", "not an RFC 3339 time"),
		reject(5, "ts", "outside the years 0000-9999"),
	},
	"reject-unknown-kind":  {reject(1, "kind", `unknown kind "bogus"`), reject(2, "kind", `unknown kind "Fact"`)},
	"reject-unknown-scope": {reject(1, "scope", `unknown scope "public"`), reject(2, "scope", `unknown scope ""`)},
	"reject-invalid-utf8":  {reject(1, "", "not valid UTF-8"), reject(2, "", "not valid UTF-8"), rec(3, "good")},
	"reject-bad-enum": {
		reject(1, "confidence", `"certain" is not one of low|medium|high`),
		reject(2, "max_age", `"7d" is not one of`),
		reject(3, "tier", `"gold" is not one of`),
		reject(4, "source", `unknown type "dreamt"`),
	},
	"reject-wrong-types": {
		reject(1, "text", "must be a string"),
		reject(2, "ts", "must be a string"),
		reject(3, "agent", "must be a string"),
		reject(4, "tags", "must be an array of strings"),
		reject(5, "links", "must be an array of strings"),
		reject(6, "refs", "must be an array"),
		reject(7, "refs", `key "git" must be a string`),
		reject(8, "refs", `unknown key "sha"`),
		reject(9, "source", "must be an object"),
		reject(10, "source", `unknown key "mood"`),
		reject(11, "confidence", "must be a string"),
		reject(12, "uuid", "must be a string"),
	},
	"reject-bad-ids": {
		reject(1, "agent", "not a valid agent name"),
		reject(2, "agent", "not a valid agent name"),
		reject(3, "uuid", "not a valid uuid"),
		reject(4, "uuid", "must not be empty"),
		reject(5, "links", "cannot point at itself"),
		reject(6, "supersedes", "not a valid uuid"),
		reject(7, "entities", "blank entity"),
	},
}

// readAll reads every complete line of data, starting at offset/line.
func readAll(t *testing.T, data []byte, offset int64, line int) ([]journal.Line, *journal.Reader) {
	t.Helper()
	r := journal.NewReader(bytes.NewReader(data[offset:]), offset, line)
	var out []journal.Line
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, l)
	}
}

// lineSpans splits data the way the spec counts lines, independently of the
// Reader: the [start, end) of each complete line, newline included.
func lineSpans(data []byte) [][2]int64 {
	var spans [][2]int64
	start := 0
	for i, b := range data {
		if b == '\n' {
			spans = append(spans, [2]int64{int64(start), int64(i + 1)})
			start = i + 1
		}
	}
	return spans
}

func loadCase(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir, name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReaderCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdataDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		seen[name] = true
		if _, ok := cases[name]; !ok {
			t.Errorf("%s has no expectations in cases", f)
		}
	}
	for name, wants := range cases {
		t.Run(name, func(t *testing.T) {
			if !seen[name] {
				t.Fatalf("no file %s.jsonl", name)
			}
			data := loadCase(t, name)
			lines, r := readAll(t, data, 0, 0)
			checkLines(t, data, lines, wants)
			spans := lineSpans(data)
			last := int64(0)
			if len(spans) > 0 {
				last = spans[len(spans)-1][1]
			}
			if r.Offset() != last || r.LineNumber() != len(spans) {
				t.Errorf("after EOF: Offset %d LineNumber %d, want %d %d", r.Offset(), r.LineNumber(), last, len(spans))
			}
		})
	}
}

// checkLines compares what the Reader yielded with wants, and every
// position with the independent split of data.
func checkLines(t *testing.T, data []byte, lines []journal.Line, wants []want) {
	t.Helper()
	spans := lineSpans(data)
	if len(lines) != len(wants) {
		t.Errorf("got %d lines, want %d", len(lines), len(wants))
	}
	for i := 0; i < len(lines) && i < len(wants); i++ {
		l, w := lines[i], wants[i]
		if l.Number != w.line {
			t.Errorf("line %d: yielded as line %d", w.line, l.Number)
			continue
		}
		span := spans[w.line-1]
		if l.Offset != span[0] || l.End != span[1] {
			t.Errorf("line %d: [%d, %d), want [%d, %d)", w.line, l.Offset, l.End, span[0], span[1])
		}
		if w.reason == "" {
			if l.Err != nil {
				t.Errorf("line %d: unexpected error %v", w.line, l.Err)
			} else if l.Record.UUID != w.uuid {
				t.Errorf("line %d: uuid %q, want %q", w.line, l.Record.UUID, w.uuid)
			}
			continue
		}
		var fe *journal.FieldError
		if !errors.As(l.Err, &fe) {
			t.Errorf("line %d: error %v (%T), want a *journal.FieldError", w.line, l.Err, l.Err)
			continue
		}
		if fe.Field != w.field || !strings.Contains(fe.Reason, w.reason) {
			t.Errorf("line %d: field %q reason %q, want field %q reason containing %q", w.line, fe.Field, fe.Reason, w.field, w.reason)
		}
		if w.field != "" && !strings.Contains(fe.Error(), `"`+w.field+`"`) {
			t.Errorf("line %d: %q does not name the field", w.line, fe.Error())
		}
	}
}

// TestReaderResume re-reads every case from the start of each of its lines:
// the lines after that point come out exactly as in a full read.
func TestReaderResume(t *testing.T) {
	for name := range cases {
		t.Run(name, func(t *testing.T) {
			data := loadCase(t, name)
			full, _ := readAll(t, data, 0, 0)
			for n, span := range lineSpans(data) {
				got, _ := readAll(t, data, span[0], n)
				var want []journal.Line
				for _, l := range full {
					if l.Offset >= span[0] {
						want = append(want, l)
					}
				}
				if !sameLines(got, want) {
					t.Fatalf("resuming at line %d (offset %d): got %d lines, want %d", n+1, span[0], len(got), len(want))
				}
			}
		})
	}
}

func sameLines(a, b []journal.Line) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Number != b[i].Number || a[i].Offset != b[i].Offset || a[i].End != b[i].End {
			return false
		}
		if (a[i].Err == nil) != (b[i].Err == nil) {
			return false
		}
		if a[i].Err != nil && a[i].Err.Error() != b[i].Err.Error() {
			return false
		}
		if a[i].Err == nil && !bytes.Equal(a[i].Record.Canonical(), b[i].Record.Canonical()) {
			return false
		}
	}
	return true
}

func TestReaderPartialLastLine(t *testing.T) {
	data := loadCase(t, "valid-partial-last-line")
	lines, r := readAll(t, data, 0, 0)
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want the 2 complete ones", len(lines))
	}
	end := int64(bytes.LastIndexByte(data, '\n') + 1)
	if r.Offset() != end || r.LineNumber() != 2 {
		t.Fatalf("Offset %d LineNumber %d, want %d 2: the partial line must not be consumed", r.Offset(), r.LineNumber(), end)
	}
	// Asked again, the Reader still sees nothing complete.
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("second Next = %v, want io.EOF", err)
	}
	// Once the writer finishes the line, a reader from Offset() gets it whole.
	done := append(append([]byte{}, data...), "ten\"}\n"...)
	more, _ := readAll(t, done, r.Offset(), r.LineNumber())
	if len(more) != 1 || more[0].Err != nil || more[0].Record.UUID != "partial-3" || more[0].Number != 3 ||
		more[0].Offset != end || more[0].End != int64(len(done)) {
		t.Fatalf("after completion: %+v", more)
	}
}

// growing is a file that a writer is still appending to: reads past its end
// return io.EOF until more is written.
type growing struct {
	data []byte
	pos  int
}

func (g *growing) Read(p []byte) (int, error) {
	if g.pos >= len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.pos:])
	g.pos += n
	return n, nil
}

// TestReaderLive keeps one Reader on a growing source: a line seen half
// written at EOF is yielded whole, at its true offset, once it is finished.
func TestReaderLive(t *testing.T) {
	const (
		l1 = `{"uuid":"live-1","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"one"}` + "\n"
		l2 = `{"uuid":"live-2","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"two"}` + "\n"
	)
	src := &growing{data: []byte(l1 + l2[:30])}
	r := journal.NewReader(src, 0, 0)
	if l, err := r.Next(); err != nil || l.Record.UUID != "live-1" {
		t.Fatalf("first: %+v %v", l, err)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("half-written line: %v, want io.EOF", err)
	}
	if r.Offset() != int64(len(l1)) {
		t.Fatalf("Offset %d, want %d", r.Offset(), len(l1))
	}
	src.data = append(src.data, l2[30:50]...)
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("still half-written: %v, want io.EOF", err)
	}
	src.data = append(src.data, l2[50:]...)
	l, err := r.Next()
	if err != nil || l.Err != nil || l.Record.UUID != "live-2" || l.Number != 2 ||
		l.Offset != int64(len(l1)) || l.End != int64(len(l1)+len(l2)) {
		t.Fatalf("finished line: %+v %v", l, err)
	}
}

func TestReaderLongLines(t *testing.T) {
	good := []byte(`{"uuid":"after","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"after the long line"}` + "\n")
	// A valid record padded with spaces to exactly n bytes (spaces are JSON whitespace).
	line := func(n int, eol string) []byte {
		b := []byte(`{"uuid":"long","ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact","text":"x"}`)
		b = append(b, bytes.Repeat([]byte(" "), n-len(b))...)
		return append(b, eol...)
	}
	for _, tc := range []struct {
		name   string
		line   []byte
		reject bool
	}{
		{"exactly 1 MiB", line(journal.MaxLineBytes, "\n"), false},
		{"exactly 1 MiB with CRLF", line(journal.MaxLineBytes, "\r\n"), false},
		{"1 MiB + 1", line(journal.MaxLineBytes+1, "\n"), true},
		{"1 MiB + 2 with CRLF", line(journal.MaxLineBytes+1, "\r\n"), true},
		{"3 MiB", line(3*journal.MaxLineBytes, "\n"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(append([]byte{}, tc.line...), good...)
			lines, r := readAll(t, data, 0, 0)
			if len(lines) != 2 {
				t.Fatalf("got %d lines, want 2", len(lines))
			}
			l := lines[0]
			if l.Number != 1 || l.Offset != 0 || l.End != int64(len(tc.line)) {
				t.Errorf("long line at %d [%d, %d), want 1 [0, %d)", l.Number, l.Offset, l.End, len(tc.line))
			}
			if tc.reject {
				var fe *journal.FieldError
				if !errors.As(l.Err, &fe) || fe.Field != "" || !strings.Contains(fe.Reason, "over the 1 MiB limit") {
					t.Errorf("long line: %v, want a 1 MiB reject", l.Err)
				}
			} else if l.Err != nil || l.Record.UUID != "long" {
				t.Errorf("line at the limit: %v", l.Err)
			}
			if lines[1].Err != nil || lines[1].Record.UUID != "after" || lines[1].Number != 2 || lines[1].Offset != int64(len(tc.line)) {
				t.Errorf("line after: %+v", lines[1])
			}
			if r.Offset() != int64(len(data)) {
				t.Errorf("Offset %d, want %d", r.Offset(), len(data))
			}
		})
	}
	// An over-long partial line at the end is not yielded either.
	data := append(append([]byte{}, good...), bytes.Repeat([]byte("x"), 2*journal.MaxLineBytes)...)
	lines, r := readAll(t, data, 0, 0)
	if len(lines) != 1 || r.Offset() != int64(len(good)) {
		t.Fatalf("over-long partial tail: %d lines, Offset %d", len(lines), r.Offset())
	}
}

// TestGolden compares the canonical encodings of each valid case with its
// .golden file; go test ./journal/ -run TestGolden -update rewrites them.
func TestGolden(t *testing.T) {
	for name := range cases {
		if !strings.HasPrefix(name, "valid-") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			lines, _ := readAll(t, loadCase(t, name), 0, 0)
			var got bytes.Buffer
			for _, l := range lines {
				if l.Err != nil {
					t.Fatalf("line %d: %v", l.Number, l.Err)
				}
				got.Write(l.Record.Canonical())
				got.WriteByte('\n')
			}
			path := filepath.Join(testdataDir, name+".golden")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wantBytes, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), wantBytes) {
				t.Errorf("canonical encodings differ from %s:\n got:\n%s\nwant:\n%s", path, got.Bytes(), wantBytes)
			}
			// The golden file is itself a valid journal that encodes to itself.
			again, _ := readAll(t, wantBytes, 0, 0)
			for i, l := range again {
				if l.Err != nil || !bytes.Equal(l.Record.Canonical(), lines[i].Record.Canonical()) || l.Record.UUID != lines[i].Record.UUID {
					t.Errorf("golden line %d does not re-read as itself: %v", i+1, l.Err)
				}
			}
		})
	}
}
