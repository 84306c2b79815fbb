package journal_test

// The fuzz targets run their seed corpus (every line of testdata/journal) on
// every go test. A real fuzzing session, as CI runs it:
//
//	go test -run='^$' -fuzz=FuzzParse -fuzztime=15s ./journal/
//	go test -run='^$' -fuzz=FuzzReader -fuzztime=15s ./journal/
//
// TestFuzzSmoke adds a short deterministic mutation run to plain go test.

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/journal"
)

// seedLines is every line (without newline) and every whole file of testdata/journal.
func seedLines(tb testing.TB) (lines, files [][]byte) {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(testdataDir, "*.jsonl"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no seeds in %s: %v", testdataDir, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, data)
		lines = append(lines, bytes.Split(data, []byte("\n"))...)
	}
	return lines, files
}

// checkParse is FuzzParse's property: Parse never panics, and whatever it
// accepts is a fixed point of Canonical with the same uuid.
func checkParse(t *testing.T, line []byte) {
	rec, err := journal.Parse(line)
	if err != nil {
		var fe *journal.FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("Parse error %v is a %T, not a *FieldError", err, err)
		}
		return
	}
	if rec.UUID == "" || rec.TS.Location().String() != "UTC" {
		t.Fatalf("accepted record without uuid or UTC ts: %+v", rec)
	}
	c := rec.Canonical()
	again, err := journal.Parse(c)
	if err != nil {
		t.Fatalf("canonical form does not parse: %v\ninput: %q\ncanonical: %s", err, line, c)
	}
	if c2 := again.Canonical(); !bytes.Equal(c, c2) {
		t.Fatalf("canonical is not a fixed point:\n%s\n%s", c, c2)
	}
	if again.UUID != rec.UUID {
		t.Fatalf("uuid changed from %s to %s", rec.UUID, again.UUID)
	}
}

func FuzzParse(f *testing.F) {
	lines, _ := seedLines(f)
	for _, l := range lines {
		f.Add(l)
	}
	f.Fuzz(checkParse)
}

// checkReader is FuzzReader's property: reading data, handed over in pieces
// of chunk bytes, with the source growing at split, never panics and yields
// exactly the complete lines of data at their true places.
func checkReader(t *testing.T, data []byte, split uint, chunk uint8) {
	if split > uint(len(data)) {
		split %= uint(len(data)) + 1
	}
	src := &growing{data: data[:split:split]}
	r := journal.NewReader(&chunked{r: src, n: int(chunk)%64 + 1}, 0, 0)
	var got []journal.Line
	grown := false
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			if !grown {
				grown = true
				src.data = data
				continue
			}
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, l)
	}
	spans := lineSpans(data)
	prevEnd := int64(0)
	for _, l := range got {
		if l.Offset < prevEnd || l.End <= l.Offset {
			t.Fatalf("line %d at [%d, %d) after %d: offsets not monotonic", l.Number, l.Offset, l.End, prevEnd)
		}
		if l.Number < 1 || l.Number > len(spans) || spans[l.Number-1] != [2]int64{l.Offset, l.End} {
			t.Fatalf("line %d at [%d, %d) is not a complete line of the input", l.Number, l.Offset, l.End)
		}
		raw := data[l.Offset:l.End]
		if raw[len(raw)-1] != '\n' {
			t.Fatalf("line %d yielded without its newline", l.Number)
		}
		content := bytes.TrimSuffix(raw[:len(raw)-1], []byte("\r"))
		if len(bytes.TrimSpace(content)) == 0 {
			t.Fatalf("blank line %d yielded", l.Number)
		}
		want, wantErr := journal.Parse(content)
		if (l.Err == nil) != (wantErr == nil) {
			t.Fatalf("line %d: Reader says %v, Parse says %v", l.Number, l.Err, wantErr)
		}
		if l.Err == nil && !bytes.Equal(l.Record.Canonical(), want.Canonical()) {
			t.Fatalf("line %d: Reader and Parse disagree", l.Number)
		}
		prevEnd = l.End
	}
	// Every non-blank complete line was yielded, and nothing after the last newline.
	nonBlank := 0
	for _, s := range spans {
		if len(bytes.TrimSpace(data[s[0]:s[1]])) > 0 {
			nonBlank++
		}
	}
	if len(got) != nonBlank {
		t.Fatalf("yielded %d lines, input has %d non-blank complete lines", len(got), nonBlank)
	}
	last := int64(0)
	if len(spans) > 0 {
		last = spans[len(spans)-1][1]
	}
	if r.Offset() != last || r.LineNumber() != len(spans) {
		t.Fatalf("Offset %d LineNumber %d, want %d %d", r.Offset(), r.LineNumber(), last, len(spans))
	}
}

// chunked hands out at most n bytes per Read.
type chunked struct {
	r io.Reader
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

func FuzzReader(f *testing.F) {
	_, files := seedLines(f)
	for i, data := range files {
		f.Add(data, uint(len(data)/2), uint8(i*7))
	}
	f.Add([]byte("\n\r\n  \n"), uint(1), uint8(0))
	f.Add([]byte("no newline at all"), uint(3), uint8(2))
	f.Fuzz(checkReader)
}

// TestFuzzSmoke runs both properties on a few thousand random mutations of
// the seeds, so that plain go test exercises more than the seed corpus.
func TestFuzzSmoke(t *testing.T) {
	lines, files := seedLines(t)
	rng := rand.New(rand.NewSource(1))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		line := mutate(rng, lines[rng.Intn(len(lines))])
		checkParse(t, line)
		data := mutate(rng, files[rng.Intn(len(files))])
		checkReader(t, data, uint(rng.Intn(len(data)+1)), uint8(rng.Intn(256)))
	}
}

// mutate applies a few random byte edits, favouring the bytes JSON cares about.
func mutate(rng *rand.Rand, in []byte) []byte {
	b := append([]byte{}, in...)
	special := []byte("{}[]\":,\\\n\r 0aZ\xff\xe2+-.TZ")
	for k := rng.Intn(4) + 1; k > 0; k-- {
		switch op := rng.Intn(3); {
		case op == 0 && len(b) > 0:
			b[rng.Intn(len(b))] = special[rng.Intn(len(special))]
		case op == 1:
			at := rng.Intn(len(b) + 1)
			b = append(b[:at], append([]byte{special[rng.Intn(len(special))]}, b[at:]...)...)
		case len(b) > 0:
			at := rng.Intn(len(b))
			b = append(b[:at], b[at+1:]...)
		}
	}
	return b
}
