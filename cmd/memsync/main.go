// Command memsync keeps a team of AI agents' memory in git-tracked JSONL
// journals and projects it into a graph. See SPEC.md for the contract; each
// subcommand lives in its own file with its own flag set.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
)

// command is one subcommand. run parses its own flags from args (the
// arguments after the command name) and returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) int
}

// commands is every subcommand, in the order help lists them. Adding a
// command is one line here plus its file.
var commands = []command{
	{"init", "create the repository layout, config and .gitignore", runInit},
	{"append", "append one record to an agent's journal and print its uuid", runAppend},
	{"run", "the daemon: tail every journal and project it into the graph", runRun},
	{"sync", "one full projection pass, then exit", runSync},
	{"status", "per agent: journal records, projected, outbox, rejects, lag", runStatus},
	{"verify", "compare the graph with the journals", runVerify},
	{"compact", "fold old journal lines into MEMORY.md and move them to the archive", runCompact},
	{"rebuild", "drop the projection and rebuild it from git (--from-history: every commit)", runRebuild},
	{"search", "ranked recall within an agent's visible memories (offline from the journals if need be)", runSearch},
	{"cache", "regenerate the agents' markdown snapshots from the graph", runCache},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, osEnv(), os.Args[1:])
	stop()
	os.Exit(code)
}

// Main dispatches args (without the program name) to a subcommand and
// returns the exit code: 0 success, 1 failure, 2 bad usage.
func Main(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		printMainUsage(env.Stderr)
		return exitUsage
	}
	switch name := args[0]; name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := lookupCommand(args[1]); ok {
				return c.run(ctx, env, []string{"--help"})
			}
			fmt.Fprintf(env.Stderr, "memsync: unknown command %q (see memsync help)\n", args[1])
			return exitUsage
		}
		printMainUsage(env.Stdout)
		return exitOK
	default:
		c, ok := lookupCommand(name)
		if !ok {
			fmt.Fprintf(env.Stderr, "memsync: unknown command %q\n\n", name)
			printMainUsage(env.Stderr)
			return exitUsage
		}
		return c.run(ctx, env, args[1:])
	}
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func printMainUsage(w io.Writer) {
	fmt.Fprint(w, `usage: memsync <command> [flags] [args]

memsync keeps the memory of a team of AI agents in append-only JSONL journals
inside a git repository and projects them into a graph (Neo4j, or an embedded
store) for ranked recall. Git is the truth; everything else can be rebuilt.

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
Every command takes --repo DIR (default $MEMSYNC_REPO, else the current
directory). Run "memsync <command> --help" for its flags.
Exit codes: 0 success, 1 failure, 2 bad usage.
`)
}
