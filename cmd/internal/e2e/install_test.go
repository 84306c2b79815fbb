package e2e

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
)

// TestInstallSkipsOnlyWhenRegistryUnreachable: with the registry on a
// loopback port nothing listens on, installing into an empty directory
// asks the test to skip and says why; it neither passes nor fails.
func TestInstallSkipsOnlyWhenRegistryUnreachable(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Setenv("npm_config_registry", fmt.Sprintf("http://127.0.0.1:%d/", port))
	bin, skip, err := installClientsIn(t.TempDir())
	if err != nil || bin != "" || !strings.Contains(skip, "the npm registry is unreachable") {
		t.Fatalf("bin %q, skip %q, err %v; want a skip naming the unreachable registry", bin, skip, err)
	}
}

// TestLatestSkipsOnlyWhenRegistryUnreachable: resolving the latest Claude
// Code or Codex against a registry on a dead loopback port asks the test to skip
// and says why; it neither passes nor fails.
func TestLatestSkipsOnlyWhenRegistryUnreachable(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Setenv("npm_config_registry", fmt.Sprintf("http://127.0.0.1:%d/", port))
	for _, c := range []struct{ pkg, prefix, program string }{
		{claudeLatestPackage, "claude-code-", "claude"},
		{codexLatestPackage, "codex-", "codex"},
	} {
		bin, version, skip, err := installLatestIn(t.TempDir(), c.pkg, c.prefix, c.program)
		if err != nil || bin != "" || version != "" || !strings.Contains(skip, "the npm registry is unreachable") {
			t.Errorf("%s: bin %q, version %q, skip %q, err %v; want a skip naming the unreachable registry", c.pkg, bin, version, skip, err)
		}
	}
}
