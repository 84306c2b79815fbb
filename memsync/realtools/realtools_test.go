package realtools

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestReachable(t *testing.T) {
	for _, tc := range []struct {
		status int
		ok     bool
	}{{200, true}, {404, true}, {503, false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tc.status) }))
		if err := Reachable(srv.URL); (err == nil) != tc.ok {
			t.Errorf("status %d: Reachable = %v, want ok %v", tc.status, err, tc.ok)
		}
		srv.Close()
	}
	if err := Reachable("http://127.0.0.1:1/"); err == nil {
		t.Error("a closed port is reachable")
	}
}

// TestVenvOnce: a finished environment is used as it is, nothing run.
func TestVenvOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, installed), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := Venv(t, "/nonexistent/python", dir, "x==1"), filepath.Join(dir, "bin", "python"); got != want {
		t.Fatalf("Venv = %s, want %s", got, want)
	}
}

// TestVenvUnreachableIndexSkips: pip failing against an index that does
// not answer is a skip saying so, and the directory is not marked done.
func TestVenvUnreachableIndexSkips(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	t.Setenv("PIP_INDEX_URL", "http://127.0.0.1:1/simple/")
	t.Setenv("PIP_RETRIES", "0")
	t.Setenv("PIP_TIMEOUT", "2")
	dir := filepath.Join(t.TempDir(), "venv")
	skipped := false
	t.Run("install", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Venv(t, py, dir, "memsync-no-such-package==0.0.1")
	})
	if !skipped {
		t.Fatal("an unreachable index did not skip the test")
	}
	if _, err := os.Stat(filepath.Join(dir, installed)); err == nil {
		t.Fatal("a failed install is marked installed")
	}
}
