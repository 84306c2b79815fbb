package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/memsync"
)

// TestRejectsSayWhatIsWrong: through the binary, a line whose ts is the
// zero time and lines with a repeated key are rejected with a reason that
// says so (and names the key), the valid line projects; append --ts with
// the zero time is refused as bad usage. The old code said "required" for
// the first, projected the others with the last value, and appended the
// zero --ts as now.
func TestRejectsSayWhatIsWrong(t *testing.T) {
	repo := newRepo(t, "alice")
	head := `"ts":"2026-11-21T09:15:00Z","agent":"alice","kind":"fact"`
	lines := []string{
		`{"uuid":"mem_20261121T091500Z_alice_0001",` + head + `,"text":"valid"}`,
		`{"uuid":"mem_20261121T091500Z_alice_0002","ts":"0001-01-01T00:00:00Z","agent":"alice","kind":"fact","text":"zero"}`,
		`{"uuid":"mem_20261121T091500Z_alice_0003",` + head + `,"scope":"private","text":"two scopes","scope":"shared"}`,
		`{"uuid":"mem_20261121T091500Z_alice_0004",` + head + `,"text":"nested","source":{"type":"told","type":"read"}}`,
	}
	path := filepath.Join(repo, "agents", "alice", "memory", "journal", "2026-11-21.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustBin(t, repo, "sync", "--once")
	data, err := os.ReadFile(filepath.Join(repo, "agents", "alice", "memory", "sync", "rejects.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[int]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r memsync.Reject
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		reasons[r.Line] = r.Reason
	}
	want := map[int]string{
		2: `is the zero time`,
		3: `key "scope" appears more than once`,
		4: `key "source.type" appears more than once`,
	}
	if len(reasons) != len(want) {
		t.Fatalf("rejects %v, want lines 2, 3, 4", reasons)
	}
	for line, w := range want {
		if !strings.Contains(reasons[line], w) {
			t.Errorf("line %d rejected for %q, want %q", line, reasons[line], w)
		}
	}
	if st := statusJSON(t, repo); st.Agents[0].Projected != 1 {
		t.Fatalf("projected %d, want the valid line only", st.Agents[0].Projected)
	}
	code, out, errOut := runInRepo(t, repo, nil, "append", "--agent", "alice", "--kind", "fact", "--ts", "0001-01-01T00:00:00Z", "x")
	if code != 2 || !strings.Contains(errOut, "zero time") || out != "" {
		t.Fatalf("append --ts zero: exit %d %q %q", code, out, errOut)
	}
}
