package hooks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/cmd/internal/hooks/hookstest"
)

// TestCodexSessionSource reads the source of a rollout's session_meta,
// and nothing from a file that does not begin with one.
func TestCodexSessionSource(t *testing.T) {
	for _, tc := range []struct{ source, want string }{{`"exec"`, "exec"}, {`"cli"`, "cli"}, {`{"subagent":"review"}`, ""}} {
		got, err := codexSessionSource(hookstest.CodexRollout(t, tc.source))
		if err != nil || got != tc.want {
			t.Errorf("source %s: got %q, %v; want %q", tc.source, got, err, tc.want)
		}
	}
	other := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(other, []byte(`{"type":"response_item"}`+"\n"), 0o644)
	if got, err := codexSessionSource(other); got != "" || err != nil {
		t.Errorf("no session_meta: got %q, %v", got, err)
	}
}
