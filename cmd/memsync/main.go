// Command memsync is the small front binary that agents' session hooks
// exec for every `memsync append`. It runs append and
// help itself, linking only cmd/internal/cmdline and journal, so a call
// costs little more than the append (lock, one write, fsync); the graph
// backends, the engine and go-git would add milliseconds of start-up
// (page faults and package initialisers) to each call.
//
// Every other command it hands to memsync-core (cmd/memsync-core, the whole
// program) with syscall.Exec: the core replaces this process, with the same
// pid, arguments, environment, standard streams and exit code, so a service
// manager's SIGTERM reaches the daemon directly. memsync-core is looked for
// next to this binary, then on $PATH.
//
// A session hook (`memsync hook HOST EVENT`) is the exception: the host
// reads exit 2 as "block" (Claude Code erases the prompt, or the agent
// cannot stop), so the core runs as a child instead, and whatever becomes
// of it (not found, not executable, not a program, killed by a signal, a
// panic's exit 2) the hook exits 0 with nothing on stdout and the reason
// on stderr.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/memsync/memsync/cmd/internal/cmdline"
)

// coreName is the binary that runs every command but append.
const coreName = "memsync-core"

func main() {
	args := cmdline.Hoist(os.Args[1:])
	if delegated(args) {
		if isHook(args) {
			os.Exit(runHook(args))
		}
		err := execCore(args)
		// execCore returns only when the core could not be started.
		fmt.Fprintf(os.Stderr, "memsync: %v\n", err)
		os.Exit(cmdline.ExitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cmdline.Main(ctx, cmdline.OSEnv(), args, runner)
	stop()
	os.Exit(code)
}

// runner is the function of each command this binary runs itself.
func runner(name string) (cmdline.RunFunc, bool) {
	if name == "append" {
		return cmdline.RunAppend, true
	}
	return nil, false
}

// delegated reports whether args name a command that memsync-core runs,
// directly or as "help CMD". Bare help, append and unknown names are
// answered here.
func delegated(args []string) bool {
	if len(args) == 0 {
		return false
	}
	name := args[0]
	if cmdline.IsHelp(name) {
		if len(args) == 1 {
			return false
		}
		name = args[1]
	}
	_, here := runner(name)
	return !here && cmdline.IsCommand(name)
}

// isHook reports whether args are a session hook as a host runs it
// (`hook HOST EVENT ...`), not `hook install`, which a person runs.
func isHook(args []string) bool {
	return len(args) > 0 && args[0] == "hook" && (len(args) == 1 || args[1] != "install")
}

// runHook runs memsync-core for a session hook as a child and returns the
// hook's exit code, which is always 0 (fail-open): the core's stdout is
// passed on only when it exited 0, and every failure is said on stderr.
func runHook(args []string) int {
	var out bytes.Buffer
	err := runCoreChild(args, &out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "memsync hook: %v (fail-open: the session goes on without memsync)\n", err)
		return cmdline.ExitOK
	}
	os.Stdout.Write(out.Bytes())
	return cmdline.ExitOK
}

// runCoreChild runs memsync-core with args, stdin and stderr inherited and
// stdout into out, forwarding the signals a host sends to stop a hook; an
// error when the core could not be started or did not exit 0.
func runCoreChild(args []string, out *bytes.Buffer) error {
	core, err := findCore(os.Executable, exec.LookPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(core, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, out, os.Stderr
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", core, err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return fmt.Errorf("%s was killed by signal %v", core, st.Signal())
		}
		return fmt.Errorf("%s exited with status %d", core, ee.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", core, err)
	}
	return nil
}

// execCore replaces this process with memsync-core running args, with the
// environment unchanged. It returns only on failure.
func execCore(args []string) error {
	core, err := findCore(os.Executable, exec.LookPath)
	if err != nil {
		return err
	}
	err = syscall.Exec(core, append([]string{core}, args...), os.Environ())
	return fmt.Errorf("run %s: %w", core, err)
}

// errNoCore is findCore's error when memsync-core is in neither place.
var errNoCore = errors.New(coreName + " not found")

// findCore is memsync-core next to this executable (symlinks resolved),
// else the one on $PATH.
func findCore(executable func() (string, error), lookPath func(string) (string, error)) (string, error) {
	beside := "(this binary's directory is unknown)"
	if self, err := executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		beside = filepath.Join(filepath.Dir(self), coreName)
		if st, err := os.Stat(beside); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := lookPath(coreName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w next to this binary (%s) nor on $PATH: it runs every command but append; "+
		"install both binaries (scripts/quickstart, or see the README)", errNoCore, beside)
}
