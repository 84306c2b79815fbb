package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrontGateWithEmbedder is issue 27's gate through the front binary,
// which resolves --embedder itself (no memsync-core on $PATH): with the
// built-in model a paraphrase of a recent learning record is skipped and a
// new fact on the same topic is written; with words only (the default)
// the same paraphrase is written; memsync.yaml's embedder means the same
// as the flag.
func TestFrontGateWithEmbedder(t *testing.T) {
	front := install(t, "")
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "agents", "a", "memory"), 0o755); err != nil { // what init makes for agent a
		t.Fatal(err)
	}
	const (
		seed        = "The laptop battery drains quickly when Docker is running."
		paraphrase  = "Running Docker makes the notebook's battery run down fast."
		newFact     = "The laptop needs a new keyboard."
		paraphrase2 = "Docker running on the laptop empties its battery quickly."
	)
	steps := []struct {
		name     string
		yaml     string // memsync.yaml's embedder line ("" : no file)
		args     []string
		text     string
		wantSkip bool
	}{
		{"seed", "", nil, seed, false},
		{"paraphrase, model", "", []string{"--embedder", "default"}, paraphrase, true},
		{"new fact, model", "", []string{"--embedder", "default"}, newFact, false},
		{"paraphrase, model from memsync.yaml", "embedder: default\n", nil, paraphrase2, true},
		{"paraphrase, --embedder none over memsync.yaml", "embedder: default\n", []string{"--embedder", "none"}, paraphrase, false},
	}
	written := 0
	for _, st := range steps {
		if st.yaml != "" {
			writeExecutable(t, filepath.Join(repo, "memsync.yaml"), st.yaml, 0o644)
		}
		args := append([]string{"append", "--repo", repo, "--agent", "a", "--kind", "fact", "--tier", "learning"}, st.args...)
		out, errOut, code, _ := run(t, front, "", append(args, st.text)...)
		if code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d stdout %q stderr %q", st.name, code, out, errOut)
		}
		if skipped := strings.HasPrefix(out, "skipped: "); skipped != st.wantSkip {
			t.Errorf("%s: %q, want skipped %v", st.name, out, st.wantSkip)
		}
		if !st.wantSkip {
			written++
		}
	}
	files, _ := filepath.Glob(filepath.Join(repo, "agents", "a", "memory", "journal", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("journal files %q", files)
	}
	data, _ := os.ReadFile(files[0])
	if n := strings.Count(string(data), "\n"); n != written {
		t.Errorf("%d lines written, want %d:\n%s", n, written, data)
	}
	if strings.Contains(string(data), "Docker running on the laptop") {
		t.Errorf("a skipped paraphrase was written:\n%s", data)
	}
}
