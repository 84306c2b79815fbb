// Package realtools installs the real tools memsync's tests run against
// (a Python package from PyPI, an npm package), each pinned, once per
// version into a cache directory the caller names, and turns a registry
// that cannot be reached into a skip that says so: never a silent pass,
// never a failure of memsync's.
package realtools

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// installed marks a cache directory whose install finished.
const installed = ".installed"

// DefaultPyPI is the index pip reads when PIP_INDEX_URL is not set.
const DefaultPyPI = "https://pypi.org/simple/"

// Reachable is nil when url answers an HTTP GET at all (anything but a
// server error), else why not.
func Reachable(url string) error {
	client := &http.Client{Timeout: 15 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return errors.New(resp.Status)
	}
	return nil
}

// Venv returns the python of a virtual environment at dir made with py
// and holding pkgs (each "name==version"), made once: a finished dir is
// used as it is. If pip fails and the package index (PIP_INDEX_URL, else
// PyPI) does not answer, the test is skipped, naming the index and pkgs;
// any other failure fails it.
func Venv(t testing.TB, py, dir string, pkgs ...string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin", "python")
	if _, err := os.Stat(filepath.Join(dir, installed)); err == nil {
		return bin
	}
	os.RemoveAll(dir)
	if out, err := exec.Command(py, "-m", "venv", dir).CombinedOutput(); err != nil {
		t.Fatalf("%s -m venv %s: %v\n%s", py, dir, err, out)
	}
	start := time.Now()
	args := append([]string{"-m", "pip", "install", "--disable-pip-version-check", "-q"}, pkgs...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		index := os.Getenv("PIP_INDEX_URL")
		if index == "" {
			index = DefaultPyPI
		}
		if reachErr := Reachable(index); reachErr != nil {
			t.Skipf("the Python package index %s is unreachable (%v): the test needs it once, to install %s", index, reachErr, strings.Join(pkgs, " "))
		}
		t.Fatalf("pip install %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	t.Logf("installed %s in %s", strings.Join(pkgs, " "), time.Since(start).Round(time.Second))
	markInstalled(t, dir)
	return bin
}

// NPM installs pkgs (each "name@version") with npm into dir, once, and
// returns dir; env is npm's environment (nil: this process's). Without
// npm the test is skipped; if the install fails and the registry does not
// answer `npm ping`, too, saying so.
func NPM(t testing.TB, dir string, env []string, pkgs ...string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("npm is not installed: the test needs Node and npm to install %s", strings.Join(pkgs, " "))
	}
	if _, err := os.Stat(filepath.Join(dir, installed)); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, pkgs...)
	start := time.Now()
	cmd := exec.Command(npm, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		if ping, pingErr := exec.Command(npm, "ping").CombinedOutput(); pingErr != nil {
			t.Skipf("the npm registry is unreachable (npm ping: %v, %s): the test needs it once, to install %s",
				pingErr, strings.TrimSpace(string(ping)), strings.Join(pkgs, " "))
		}
		t.Fatalf("npm install %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	t.Logf("installed %s in %s", strings.Join(pkgs, " "), time.Since(start).Round(time.Second))
	markInstalled(t, dir)
	return dir
}

func markInstalled(t testing.TB, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, installed), nil, 0o644); err != nil {
		t.Fatalf("mark %s installed: %v", dir, err)
	}
}
