package importer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/memsync/memsync/journal"
)

// maxSourceFile is the largest source file read; a journal line holds at
// most 1 MiB of text anyway.
const maxSourceFile = 16 << 20

// frontmatter splits a markdown file into its YAML frontmatter (nil when
// there is none) and its body, which starts at line bodyLine. A
// frontmatter that is not YAML is an error naming its line.
func frontmatter(data string) (fm map[string]any, body string, bodyLine int, err error) {
	data = strings.TrimPrefix(data, "\ufeff")
	if !strings.HasPrefix(data, "---\n") && !strings.HasPrefix(data, "---\r\n") {
		return nil, data, 1, nil
	}
	lines := strings.SplitAfter(data, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], "\r\n") == "---" {
			yml := strings.Join(lines[1:i], "")
			fm = map[string]any{}
			if err := yaml.Unmarshal([]byte(yml), &fm); err != nil {
				return nil, "", 0, &lineError{line: 2 + yamlLine(err), err: fmt.Errorf("frontmatter: %v", oneLine(err))}
			}
			return fm, strings.Join(lines[i+1:], ""), i + 2, nil
		}
	}
	return nil, "", 0, &lineError{line: 1, err: fmt.Errorf("frontmatter: no closing ---")}
}

// lineError is a parse error at a line of a file.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return e.err.Error() }

var yamlLineRe = regexp.MustCompile(`line (\d+)`)

// yamlLine is the 0-based line of the frontmatter yaml.v3 names in err.
func yamlLine(err error) int {
	if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 0 {
			return n - 1
		}
	}
	return 0
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// block is one entry of a markdown body: a top-level list item with its
// continuation lines, or a paragraph, under the headings above it.
type block struct {
	line     int
	text     string
	headings []string // the heading path, outermost first
	bullet   bool
}

var listMarker = regexp.MustCompile(`^(?:[-*+]|\d+[.)])\s+`)

// blocks splits a markdown body (starting at line first) into blocks.
// Headings are not blocks; code fences stay inside their block.
func blocks(body string, first int) []block {
	var out []block
	var headings []string
	var cur *block
	var text []string
	fenced := false
	flush := func() {
		if cur != nil {
			cur.text = strings.TrimSpace(strings.Join(text, "\n"))
			if cur.text != "" {
				out = append(out, *cur)
			}
		}
		cur, text = nil, nil
	}
	for i, raw := range strings.Split(body, "\n") {
		line := strings.TrimRight(raw, "\r")
		n := first + i
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			if cur == nil {
				cur = &block{line: n, headings: append([]string(nil), headings...)}
			}
			text = append(text, line)
			continue
		}
		if fenced {
			text = append(text, line)
			continue
		}
		switch {
		case trimmed == "":
			if cur != nil && !cur.bullet {
				flush()
			}
		case strings.HasPrefix(line, "#") && headingLevel(line) > 0:
			flush()
			level := headingLevel(line)
			h := strings.TrimSpace(strings.TrimLeft(line, "#"))
			if level-1 < len(headings) {
				headings = headings[:level-1]
			}
			for len(headings) < level-1 {
				headings = append(headings, "")
			}
			headings = append(headings, h)
		case line == trimmed && listMarker.MatchString(line):
			flush()
			cur = &block{line: n, headings: append([]string(nil), headings...), bullet: true}
			text = append(text, listMarker.ReplaceAllString(line, ""))
		case line != trimmed && cur != nil && cur.bullet:
			text = append(text, trimmed)
		default:
			if cur != nil && cur.bullet {
				flush()
			}
			if cur == nil {
				cur = &block{line: n, headings: append([]string(nil), headings...)}
			}
			text = append(text, trimmed)
		}
	}
	flush()
	return out
}

// headingLevel is the ATX heading level of line (# to ######), 0 if it
// is not a heading.
func headingLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(line) && line[n] != ' ' && line[n] != '\t' {
		return 0
	}
	return n
}

// section is the innermost non-empty heading of b, "" at the top.
func (b block) section() string {
	for i := len(b.headings) - 1; i >= 0; i-- {
		if b.headings[i] != "" {
			return b.headings[i]
		}
	}
	return ""
}

// kindWords maps words of a heading, a category or a directory to the
// kind they announce.
var kindWords = map[string]journal.Kind{
	"decision": journal.KindDecision, "decisions": journal.KindDecision, "decided": journal.KindDecision,
	"preference": journal.KindPreference, "preferences": journal.KindPreference, "prefer": journal.KindPreference,
	"procedure": journal.KindProcedure, "procedures": journal.KindProcedure, "how-to": journal.KindProcedure, "howto": journal.KindProcedure,
	"technique": journal.KindProcedure, "sop": journal.KindProcedure, "sops": journal.KindProcedure, "workflow": journal.KindProcedure, "method": journal.KindProcedure,
	"lesson": journal.KindReflection, "lessons": journal.KindReflection, "insight": journal.KindReflection, "insights": journal.KindReflection,
	"reflection": journal.KindReflection, "reflections": journal.KindReflection, "learned": journal.KindReflection, "idea": journal.KindReflection, "ideas": journal.KindReflection,
	"correction": journal.KindCorrection, "corrections": journal.KindCorrection,
	"outcome": journal.KindOutcome, "outcomes": journal.KindOutcome, "result": journal.KindOutcome, "results": journal.KindOutcome,
	"task": journal.KindTask, "tasks": journal.KindTask, "todo": journal.KindTask, "pending": journal.KindTask, "threads": journal.KindTask,
	"fact": journal.KindFact, "facts": journal.KindFact,
	"summary": journal.KindSummary, "summaries": journal.KindSummary,
	"observation": journal.KindObservation, "observations": journal.KindObservation,
}

// kindOf is the kind the first word of s that announces one names, else def.
func kindOf(s string, def journal.Kind) journal.Kind {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '-')
	}) {
		if k, ok := kindWords[w]; ok {
			return k
		}
	}
	return def
}

var dayName = regexp.MustCompile(`(\d{4}-\d{2}-\d{2})`)

// dayOf is the date a file name carries (YYYY-MM-DD), at midnight UTC.
func dayOf(name string) (time.Time, bool) {
	m := dayName.FindString(filepath.Base(name))
	if m == "" {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02", m)
	return t, err == nil
}

var clockPrefix = regexp.MustCompile(`^\[?(\d{1,2}):(\d{2})\]?\s*[-–:]?\s+`)

// atClock moves day to the HH:MM a daily-log entry starts with, and
// returns the text without it.
func atClock(day time.Time, text string) (time.Time, string) {
	m := clockPrefix.FindStringSubmatch(text)
	if m == nil {
		return day, text
	}
	h, _ := strconv.Atoi(m[1])
	min, _ := strconv.Atoi(m[2])
	if h > 23 || min > 59 {
		return day, text
	}
	return day.Add(time.Duration(h)*time.Hour + time.Duration(min)*time.Minute), text[len(m[0]):]
}

// createdValue is a note's own date: its frontmatter's created, else its
// date. dated is false when it has neither; ok is false (a problem noted
// at the key's line) when the one it has is not a date.
func createdValue(fm map[string]any, f sourceFile, out *Source) (ts time.Time, dated, ok bool) {
	for _, k := range []string{"created", "date"} {
		if v, has := fm[k]; has {
			ts, ok := timeValue(v)
			if !ok {
				out.problem(f.rel, fmLine(f.data, k), "%s: %q is not a date", k, stringValue(v))
				return time.Time{}, false, false
			}
			return ts, true, true
		}
	}
	return time.Time{}, false, true
}

// timeValue reads a frontmatter time: a YAML timestamp, or a string in
// RFC 3339 or YYYY-MM-DD.
func timeValue(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), true
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
			if ts, err := time.Parse(layout, strings.TrimSpace(t)); err == nil {
				return ts.UTC(), true
			}
		}
	}
	return time.Time{}, false
}

// stringsValue reads a frontmatter list (or a comma-separated string).
func stringsValue(v any) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && utf8.ValidString(s) {
			out = append(out, s)
		}
	}
	switch t := v.(type) {
	case []any:
		for _, x := range t {
			switch y := x.(type) {
			case string:
				add(y)
			case nil:
			default:
				add(fmt.Sprint(y))
			}
		}
	case string:
		for _, s := range strings.Split(t, ",") {
			add(s)
		}
	}
	return out
}

// stringValue reads a frontmatter scalar as a string.
func stringValue(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(t)
	case time.Time:
		return t.UTC().Format("2006-01-02")
	default:
		return strings.TrimSpace(fmt.Sprint(t))
	}
}

// sourceFile is one file a parser reads.
type sourceFile struct {
	rel  string // relative to the source root, slash-separated
	data string
	mod  time.Time
}

// readFiles reads the regular files under root whose relative paths keep
// says yes to, in name order, skipping hidden directories and links; a
// file that is too big or not UTF-8 is a problem. root may be a file.
func readFiles(root string, keep func(rel string) bool, out *Source) ([]sourceFile, error) {
	var files []sourceFile
	if err := walkFiles(root, keep, out, func(f sourceFile) { files = append(files, f) }); err != nil {
		return nil, err
	}
	return files, nil
}

// walkFiles is readFiles handing each file to fn as it is read, so that
// a parser holds one file at a time, not the whole source.
func walkFiles(root string, keep func(rel string) bool, out *Source, fn func(sourceFile)) error {
	st, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	read := func(path, rel string, info fs.FileInfo) {
		if info.Size() > maxSourceFile {
			out.problem(rel, 1, "file is %d bytes, over the %d MiB the importer reads", info.Size(), maxSourceFile>>20)
			return
		}
		data, err := readRegular(path, path == root)
		if err != nil {
			out.problem(rel, 1, "%v", err)
			return
		}
		if !utf8.Valid(data) {
			out.problem(rel, 1, "not UTF-8")
			return
		}
		fn(sourceFile{rel: rel, data: string(data), mod: info.ModTime().UTC().Truncate(time.Second)})
	}
	if !st.IsDir() {
		read(root, filepath.Base(root), st)
		return nil
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !keep(rel) {
			return nil
		}
		if !d.Type().IsRegular() {
			// Never followed: a link may lead out of the source, a FIFO
			// or a device never ends.
			out.skip(rel, "not a regular file (a symbolic link, FIFO or device): not read")
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		read(path, rel, info)
		return nil
	})
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

// errNotRegular is readRegular's error for anything but a regular file.
var errNotRegular = errors.New("not a regular file (a device, pipe, socket or directory): not read")

// readRegular reads the regular file at path, at most maxSourceFile bytes
// (more is an error). It opens without blocking (a FIFO does not hang the
// import) and checks what it opened, so a device (/dev/zero) or a pipe
// swapped in after the walk is never read. A symbolic link is followed only
// when follow is set: root itself, named by the user.
func readRegular(path string, follow bool) ([]byte, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, errors.New("a symbolic link: not followed")
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSourceFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSourceFile {
		return nil, fmt.Errorf("file is over the %d MiB the importer reads", maxSourceFile>>20)
	}
	return data, nil
}

// namedIn is the file a single-file format reads: root when root is not a
// directory, else the first of names present in root (root itself when
// none is, which finds nothing). A name that is a symbolic link is followed
// only when its target stays inside root; one leading out of root, or a
// name that is not a regular file, is skipped (ok false) and said so.
func namedIn(root string, names []string, out *Source) (path string, ok bool) {
	st, err := os.Stat(root)
	if err != nil || !st.IsDir() {
		return root, true
	}
	for _, name := range names {
		p := filepath.Join(root, name)
		lst, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if lst.Mode()&fs.ModeSymlink != 0 {
			target, err1 := filepath.EvalSymlinks(p)
			base, err2 := filepath.EvalSymlinks(root)
			rel, err3 := filepath.Rel(base, target)
			if err1 != nil || err2 != nil || err3 != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				out.skip(name, "a symbolic link out of the source directory: not followed")
				return "", false
			}
			if lst, err = os.Stat(target); err != nil {
				continue
			}
			p = target
		}
		if !lst.Mode().IsRegular() {
			out.skip(name, "%v", errNotRegular)
			return "", false
		}
		return p, true
	}
	return root, true
}

// problemAt records err, a *lineError or another error, at file.
func problemAt(out *Source, file string, err error) {
	if le, ok := err.(*lineError); ok {
		out.problem(file, le.line, "%v", le.err)
		return
	}
	out.problem(file, 1, "%v", err)
}

// hashtags returns the #tags in text.
var hashtag = regexp.MustCompile(`(?:^|\s)#([\p{L}\p{N}_][\p{L}\p{N}_/-]*)`)

func hashtags(text string) []string {
	var out []string
	for _, m := range hashtag.FindAllStringSubmatch(text, -1) {
		out = appendUnique(out, m[1])
	}
	return out
}

func appendUnique(list []string, s ...string) []string {
	for _, x := range s {
		found := false
		for _, y := range list {
			if y == x {
				found = true
				break
			}
		}
		if !found {
			list = append(list, x)
		}
	}
	return list
}

// wikiLinks returns the targets of the [[Wiki Links]] in text (without
// an alias after |).
var wikiLink = regexp.MustCompile(`\[\[([^\[\]|#]+)(?:[#|][^\[\]]*)?\]\]`)

func wikiLinks(text string) []string {
	var out []string
	for _, m := range wikiLink.FindAllStringSubmatch(text, -1) {
		if t := strings.TrimSpace(m[1]); t != "" {
			out = appendUnique(out, t)
		}
	}
	return out
}
