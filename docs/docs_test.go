// Package docs holds memsync's documentation; its tests keep the links of
// README.md and docs/ resolving and the benchmark round logs whole.
package docs

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, seen from this package.
const root = ".."

// markdownFiles is README.md, ARCHITECTURE.md and every .md under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{}
	for _, f := range []string{"README.md", "ARCHITECTURE.md"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			files = append(files, filepath.Join(root, f))
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	// inlineLink is [text](target) or ![alt](target); the target ends at
	// the first space or closing parenthesis.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode = regexp.MustCompile("`[^`]*`")
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// links is every link target of the markdown file at path outside code
// blocks and code spans, with its line number.
func links(t *testing.T, path string) (targets []string, lines []int) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inFence := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
			lines = append(lines, n)
		}
	}
	return targets, lines
}

// anchors is every heading anchor of the markdown file at path, the way
// GitHub makes them: lower case, punctuation dropped, spaces to hyphens,
// a repeated heading numbered -1, -2...
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	out := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(string(text), "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := Slug(h)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Slug is a heading's anchor as GitHub makes it.
func Slug(heading string) string {
	heading = strings.ReplaceAll(heading, "`", "")
	// A link in a heading anchors by its text.
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestLinksResolve: every relative link of README.md, ARCHITECTURE.md and
// docs/**/*.md names a file or directory that exists, and its #anchor, if
// any, a heading of that file.
func TestLinksResolve(t *testing.T) {
	cache := map[string]map[string]bool{}
	for _, file := range markdownFiles(t) {
		targets, lines := links(t, file)
		rel, _ := filepath.Rel(root, file)
		for i, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %s: no such file", rel, lines[i], target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if cache[dest] == nil {
				cache[dest] = anchors(t, dest)
			}
			if !cache[dest][anchor] {
				t.Errorf("%s:%d: link %s: no heading with anchor #%s", rel, lines[i], target, anchor)
			}
		}
	}
}

// roundsSource is the commit whose docs/benchmarks.md held the round logs
// now under docs/benchmarks/rounds/, after its "rounds:begin" marker.
const roundsSource = "6ba24ed"

// TestBenchmarkRoundsKeepEveryLine: the files of docs/benchmarks/rounds/,
// read in the order their index lists them, are line for line the round
// logs docs/benchmarks.md held at roundsSource. It needs git and that
// commit (a shallow clone skips it).
func TestBenchmarkRoundsKeepEveryLine(t *testing.T) {
	dir := filepath.Join(root, "docs", "benchmarks", "rounds")
	index := filepath.Join(dir, "README.md")
	all, _ := links(t, index)
	var targets []string // the rounds: the index's links to files beside it
	for _, target := range all {
		if !strings.Contains(target, "/") && strings.HasSuffix(target, ".md") {
			targets = append(targets, target)
		}
	}
	var got []string
	for _, target := range targets {
		text, err := os.ReadFile(filepath.Join(dir, target))
		if err != nil {
			t.Fatalf("index %s: %v", target, err)
		}
		got = append(got, strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")...)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, target := range targets {
		listed[target] = true
	}
	for _, e := range entries {
		if e.Name() != "README.md" && !listed[e.Name()] {
			t.Errorf("docs/benchmarks/rounds/%s is not in the index", e.Name())
		}
	}
	out, err := exec.Command("git", "-C", root, "show", roundsSource+":docs/benchmarks.md").Output()
	if err != nil {
		t.Skipf("git show %s:docs/benchmarks.md: %v (a shallow clone?)", roundsSource, err)
	}
	orig := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	start := -1
	for i, l := range orig {
		if l == "<!-- rounds:begin -->" {
			start = i
		}
	}
	if start < 0 {
		t.Fatal("no rounds:begin marker at " + roundsSource)
	}
	want := orig[start+1:]
	for len(want) > 0 && want[0] == "" {
		want = want[1:]
	}
	if len(got) != len(want) {
		t.Errorf("the rounds hold %d lines, the original %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			t.Fatalf("line %d of the rounds differs from the original:\n got %q\nwant %q", i+1, got[i], want[i])
		}
	}
}
