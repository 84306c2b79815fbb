package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/realtools"
)

// The importers against the tools that write their formats, each pinned
// and installed by the test itself from its registry into a cache
// ($MEMSYNC_E2E_CACHE, else a directory under os.TempDir()). Installing
// them takes from 40 s (mem0ai) to minutes (basic-memory, on a busy host),
// and every Basic Memory CLI call starts a Python of ~10-30 s, so the
// tests run only with MEMSYNC_E2E_SOURCES=1; a registry that cannot be
// reached is a skip saying so.
const (
	basicMemoryVersion = "0.24.1"
	mem0Version        = "2.2.1"
	sourcesGate        = "MEMSYNC_E2E_SOURCES"
)

func sourcesCache(t *testing.T) string {
	t.Helper()
	root := os.Getenv("MEMSYNC_E2E_CACHE")
	if root == "" {
		root = filepath.Join(os.TempDir(), "memsync-e2e-cache")
	}
	dir := filepath.Join(root, "importer")
	must(t, os.MkdirAll(dir, 0o755))
	return dir
}

func gateSources(t *testing.T) {
	t.Helper()
	if os.Getenv(sourcesGate) != "1" {
		t.Skipf("%s=1 runs this test: it installs a real tool from PyPI (40 s to minutes the first time) and drives it", sourcesGate)
	}
}

// python finds an interpreter of at least 3.minor, the oldest that is:
// python3 on PATH, python3.N on PATH, or one pyenv installed.
func python(t *testing.T, minor int) string {
	t.Helper()
	atLeast := func(p string) bool {
		out, err := exec.Command(p, "-c", "import sys; print(int(sys.version_info[:2] >= (3, "+itoa(minor)+")))").Output()
		return err == nil && strings.TrimSpace(string(out)) == "1"
	}
	if p, err := exec.LookPath("python3"); err == nil && atLeast(p) {
		return p
	}
	for m := minor; m <= 14; m++ {
		if p, err := exec.LookPath("python3." + itoa(m)); err == nil && atLeast(p) {
			return p
		}
	}
	pyenv := os.Getenv("PYENV_ROOT")
	if pyenv == "" {
		home, _ := os.UserHomeDir()
		pyenv = filepath.Join(home, ".pyenv")
	}
	for m := minor; m <= 14; m++ {
		matches, _ := filepath.Glob(filepath.Join(pyenv, "versions", "3."+itoa(m)+".*", "bin", "python3"))
		sort.Strings(matches)
		for _, p := range matches {
			if atLeast(p) {
				return p
			}
		}
	}
	t.Skipf("no Python 3.%d or newer on PATH or in pyenv: the test needs one", minor)
	return ""
}

// venv is a virtual environment with pkg==version installed from PyPI,
// in the cache (made once); it returns its bin directory.
func venv(t *testing.T, py, pkg, version string) string {
	t.Helper()
	return filepath.Dir(realtools.Venv(t, py, filepath.Join(sourcesCache(t), "py-"+pkg+"-"+version), pkg+"=="+version))
}

// activeRecords is every record of opts' agent no record supersedes,
// removal records left out, by source.context.
func activeRecords(t *testing.T, opts Options) map[string]journal.Record {
	t.Helper()
	var recs []journal.Record
	retired := map[string]bool{}
	for _, l := range lines(t, opts) {
		r, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
		for _, s := range r.Supersedes {
			retired[s] = true
		}
	}
	out := map[string]journal.Record{}
	for _, r := range recs {
		if retired[r.UUID] || isRemoval(&r) {
			continue
		}
		if _, dup := out[r.Source.Context]; dup {
			t.Fatalf("two active records for %s", r.Source.Context)
		}
		out[r.Source.Context] = r
	}
	return out
}

func texts(m map[string]journal.Record) map[string]string {
	out := map[string]string{}
	for k, r := range m {
		out[k] = r.Text
	}
	return out
}

func wantReport(t *testing.T, step string, rep *Report, imported, superseded, retired int) {
	t.Helper()
	if rep.Imported != imported || rep.Superseded != superseded || rep.Retired != retired {
		t.Fatalf("%s: imported %d superseded %d retired %d, want %d %d %d (%+v)", step,
			rep.Imported, rep.Superseded, rep.Retired, imported, superseded, retired, rep)
	}
}

// TestBasicMemoryRealToolFollowed: notes written by Basic Memory's own CLI
// import with every note and observation (keyed by permalink and place);
// an observation edited with edit-note supersedes on re-import; a note
// removed with delete-note is retired by an import with Prune.
func TestBasicMemoryRealToolFollowed(t *testing.T) {
	gateSources(t)
	bin := venv(t, python(t, 12), "basic-memory", basicMemoryVersion)
	home := t.TempDir()
	bm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "basic-memory"), append([]string{"tool"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "BASIC_MEMORY_NO_PROMOS=1", "BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED=false",
			"NO_COLOR=1", "BASIC_MEMORY_CLOUD_MODE=false")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("basic-memory tool %s: %v\n%s", args[0], err, out)
		}
		t.Logf("basic-memory tool %s: %s", args[0], time.Since(start).Round(100*time.Millisecond))
		return string(out)
	}
	bm("write-note", "--local", "--title", "Espresso", "--folder", "coffee", "--content",
		"# Espresso\n\n## Observations\n- [setting] grind setting 18 #grinder\n- [fact] dose 18 g\n- [decision] use the flat burrs\n\n## Relations\n- pairs_with [[Milk]]\n")
	bm("write-note", "--local", "--title", "Milk", "--folder", "coffee", "--content",
		"# Milk\n\n## Observations\n- [fact] whole milk steams best\n")
	project := filepath.Join(home, "basic-memory")
	opts := repoFor(t, "basic-memory", project)
	rep, err := importNow(context.Background(), opts)
	must(t, err)
	wantReport(t, "first import", rep, 6, 0, 0)
	got := texts(activeRecords(t, opts))
	// The permalinks are the tool's own (main/coffee/espresso with
	// permalinks_include_project): read them from the notes.
	espresso, milk := permalinkOf(t, project, "Espresso"), permalinkOf(t, project, "Milk")
	want := map[string]string{
		espresso:        "Espresso\n- pairs_with [[Milk]]",
		espresso + "#1": "grind setting 18 #grinder",
		espresso + "#2": "dose 18 g",
		espresso + "#3": "use the flat burrs",
		milk:            "Milk",
		milk + "#1":     "whole milk steams best",
	}
	if !mapsEqual(got, want) {
		t.Fatalf("first import: active\n got %q\nwant %q", got, want)
	}

	bm("edit-note", "--local", espresso, "--operation", "find_replace", "--find-text", "grind setting 18", "--content", "grind setting 16")
	rep, err = importNow(context.Background(), opts)
	must(t, err)
	wantReport(t, "after edit-note", rep, 1, 1, 0)
	want[espresso+"#1"] = "grind setting 16 #grinder"
	if got := texts(activeRecords(t, opts)); !mapsEqual(got, want) {
		t.Fatalf("after edit-note: active\n got %q\nwant %q", got, want)
	}

	bm("delete-note", "--local", milk)
	rep, err = importNow(context.Background(), opts)
	must(t, err)
	wantReport(t, "after delete-note, no prune", rep, 0, 0, 0)
	o := opts
	o.Prune = true
	rep, err = importNow(context.Background(), o)
	must(t, err)
	wantReport(t, "after delete-note, prune", rep, 0, 0, 2)
	delete(want, milk)
	delete(want, milk+"#1")
	if got := texts(activeRecords(t, opts)); !mapsEqual(got, want) {
		t.Fatalf("after delete-note: active\n got %q\nwant %q", got, want)
	}
}

// permalinkOf is the permalink in the frontmatter of the note titled
// title under dir.
func permalinkOf(t *testing.T, dir, title string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		data, _ := os.ReadFile(p)
		fm, _, _, ferr := frontmatter(string(data))
		if ferr == nil && stringValue(fm["title"]) == title {
			found = stringValue(fm["permalink"])
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no note titled %q under %s", title, dir)
	}
	return found
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// mem0Run drives a real Mem0 through testdata/mem0_driver.py with the
// commands given; it returns Mem0's answers.
func mem0Run(t *testing.T, py, data string, cmds ...map[string]string) []map[string]any {
	t.Helper()
	var in bytes.Buffer
	for _, c := range cmds {
		b, _ := json.Marshal(c)
		in.Write(append(b, '\n'))
	}
	driver, _ := filepath.Abs(filepath.Join("testdata", "mem0_driver.py"))
	cmd := exec.Command(py, driver, data)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mem0 driver: %v\n%s", err, stderr.String())
	}
	t.Logf("mem0 driver, %d commands: %s", len(cmds), time.Since(start).Round(100*time.Millisecond))
	var answers []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var a map[string]any
		if json.Unmarshal(sc.Bytes(), &a) == nil {
			answers = append(answers, a)
		}
	}
	if len(answers) != len(cmds) {
		t.Fatalf("mem0 driver: %d answers to %d commands:\n%s\n%s", len(answers), len(cmds), out, stderr.String())
	}
	return answers
}

func mem0ID(t *testing.T, answer map[string]any) string {
	t.Helper()
	res, _ := answer["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("mem0 add: %v", answer)
	}
	id, _ := res[0].(map[string]any)["id"].(string)
	return id
}

// TestMem0RealToolFollowed: memories added to a real Mem0 (infer=False, a
// local Qdrant and a hash embedder: no network) import from its get_all
// JSON; m.update supersedes on re-import; a memory removed with m.delete
// is gone from get_all, so an import retires it only with Prune.
func TestMem0RealToolFollowed(t *testing.T) {
	gateSources(t)
	bin := venv(t, python(t, 10), "mem0ai", mem0Version)
	py := filepath.Join(bin, "python")
	data, src := t.TempDir(), t.TempDir()
	export := filepath.Join(src, "memories.json")
	a := mem0Run(t, py, data,
		map[string]string{"op": "add", "text": "prefers green tea"},
		map[string]string{"op": "add", "text": "lives in Oslo"},
		map[string]string{"op": "add", "text": "has a cat named Miso"},
		map[string]string{"op": "get_all", "out": export})
	tea, oslo, cat := mem0ID(t, a[0]), mem0ID(t, a[1]), mem0ID(t, a[2])
	opts := repoFor(t, "mem0", src)
	rep, err := importNow(context.Background(), opts)
	must(t, err)
	wantReport(t, "first import", rep, 3, 0, 0)
	want := map[string]string{"mem0:" + tea: "prefers green tea", "mem0:" + oslo: "lives in Oslo", "mem0:" + cat: "has a cat named Miso"}
	recs := activeRecords(t, opts)
	if got := texts(recs); !mapsEqual(got, want) {
		t.Fatalf("first import: active\n got %q\nwant %q", got, want)
	}
	if actor := recs["mem0:"+tea].Source.Actor; actor != "u1" {
		t.Errorf("source.actor = %q, want the Mem0 user u1", actor)
	}

	mem0Run(t, py, data,
		map[string]string{"op": "update", "id": tea, "text": "prefers black tea"},
		map[string]string{"op": "delete", "id": cat},
		map[string]string{"op": "get_all", "out": export})
	rep, err = importNow(context.Background(), opts)
	must(t, err)
	wantReport(t, "after update and delete, no prune", rep, 1, 1, 0)
	want["mem0:"+tea] = "prefers black tea"
	if got := texts(activeRecords(t, opts)); !mapsEqual(got, want) {
		t.Fatalf("after update: active\n got %q\nwant %q", got, want)
	}
	o := opts
	o.Prune = true
	rep, err = importNow(context.Background(), o)
	must(t, err)
	wantReport(t, "after delete, prune", rep, 0, 0, 1)
	delete(want, "mem0:"+cat)
	if got := texts(activeRecords(t, opts)); !mapsEqual(got, want) {
		t.Fatalf("after delete: active\n got %q\nwant %q", got, want)
	}
}
