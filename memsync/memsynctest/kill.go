package memsynctest

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
)

// KillWhenReady runs the test named test of the current test binary in a
// child process with env added to its environment, waits until the child
// prints a line "ready" on its standard output, and kills it with SIGKILL:
// what a crash mid-work leaves behind. It fails t if the child ends before
// saying it is ready.
func KillWhenReady(t testing.TB, test string, env ...string) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run", "^"+test+"$")
	child.Env = append(os.Environ(), env...)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	ready := false
	for lines.Scan() {
		if lines.Text() == "ready" {
			ready = true
			break
		}
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = child.Wait()
	if !ready {
		t.Fatalf("the child %s never said it was ready", test)
	}
}
