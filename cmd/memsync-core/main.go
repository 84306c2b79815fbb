// Command memsync keeps a team of AI agents' memory in git-tracked JSONL
// journals and projects it into a graph. See SPEC.md for the contract; each
// subcommand lives in its own file with its own flag set.
//
// This is the whole program, every command in one process; it is installed
// as memsync-core beside the small front binary (cmd/memsync,
// installed as memsync), which runs `memsync append` itself and execs this
// one for every other command. Run on its own it behaves exactly the same,
// only with a slower start for append.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/memsync/memsync/cmd/internal/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, osEnv(), os.Args[1:])
	stop()
	os.Exit(code)
}

// Main dispatches args (without the program name) to a subcommand and
// returns the exit code: 0 success, 1 failure, 2 bad usage, 3 not found.
func Main(ctx context.Context, env *Env, args []string) int {
	return cmdline.Main(ctx, env, args, runner)
}

// runner is the function of every command of cmdline.Commands.
func runner(name string) (cmdline.RunFunc, bool) {
	switch name {
	case "init":
		return runInit, true
	case "append":
		return cmdline.RunAppend, true
	case "run":
		return runRun, true
	case "sync":
		return runSync, true
	case "status":
		return runStatus, true
	case "verify":
		return runVerify, true
	case "compact":
		return runCompact, true
	case "consolidate":
		return runConsolidate, true
	case "rebuild":
		return runRebuild, true
	case "search":
		return runSearch, true
	case "cache":
		return runCache, true
	case "flag":
		return runFlag, true
	case "explain":
		return runExplain, true
	case "list":
		return runList, true
	case "agents":
		return runAgents, true
	case "show":
		return runShow, true
	case "rejects":
		return runRejects, true
	case "hook":
		return runHook, true
	case "mcp":
		return runMCP, true
	case "packet":
		return runPacket, true
	case "import":
		return runImport, true
	case "export":
		return runExport, true
	case "ui":
		return runUI, true
	}
	return nil, false
}
