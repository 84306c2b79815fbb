package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/surprise"
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

// TestFrontGatePairs: every labelled pair of
// cmd/bench/testdata/gate-pairs.jsonl through the front binary with
// `--embedder default` (the built-in vocabulary read in place, the index
// file mapped, the int8 pass's kernel) gets the score and decision
// surprise.ScoreVectors gives in process, which TestVectorGatePairs pins:
// the append path's speed-ups change no decision.
func TestFrontGatePairs(t *testing.T) {
	front := install(t, "")
	f, err := os.Open(filepath.Join("..", "bench", "testdata", "gate-pairs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := embed.Default()
	pairs := 0
	for sc := bufio.NewScanner(f); sc.Scan(); pairs++ {
		var p struct{ A, B, Label string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		repo := t.TempDir()
		if err := os.MkdirAll(filepath.Join(repo, "agents", "a", "memory"), 0o755); err != nil {
			t.Fatal(err)
		}
		args := []string{"append", "--repo", repo, "--agent", "a", "--kind", "fact", "--tier", "learning", "--embedder", "default", "--json"}
		if out, errOut, code, _ := run(t, front, "", append(args, "--force", p.A)...); code != 0 || errOut != "" {
			t.Fatalf("%q: exit %d stdout %q stderr %q", p.A, code, out, errOut)
		}
		out, errOut, code, _ := run(t, front, "", append(args, p.B)...)
		if code != 0 || errOut != "" {
			t.Fatalf("%q: exit %d stdout %q stderr %q", p.B, code, out, errOut)
		}
		var got struct {
			Skipped  bool     `json:"skipped"`
			Surprise *float64 `json:"surprise"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.Surprise == nil {
			t.Fatalf("%q: %q (%v)", p.B, out, err)
		}
		rec := &journal.Record{Agent: "a", Kind: journal.KindFact, Tier: "learning", Text: p.B}
		want := surprise.ScoreVectors(rec, []surprise.Prior{{UUID: "mem_a", Text: p.A}}, m)
		if *got.Surprise != want.Score || got.Skipped != (want.Decision == surprise.Skip) {
			t.Errorf("%s %q after %q: front surprise %v skipped %v, in process %v %s",
				p.Label, p.B, p.A, *got.Surprise, got.Skipped, want.Score, want.Decision)
		}
	}
	if pairs < 50 {
		t.Fatalf("%d pairs", pairs)
	}
}
