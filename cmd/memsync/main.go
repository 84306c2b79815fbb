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
package main

import (
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
	args := os.Args[1:]
	if delegated(args) {
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
