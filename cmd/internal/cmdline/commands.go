package cmdline

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// RunFunc runs one command: it parses its own flags from args (the
// arguments after the command name) and returns the process exit code.
type RunFunc func(ctx context.Context, env *Env, args []string) int

// Command is one memsync subcommand as help lists it.
type Command struct {
	Name    string
	Summary string
}

// Commands is every memsync command, in the order help lists them, whichever
// binary runs it. Adding a command is one line here, its file and its case
// in the core's runner.
func Commands() []Command {
	return []Command{
		{"init", "create the repository layout, config and .gitignore"},
		{"append", "append one record to an agent's journal and print its uuid"},
		{"run", "the daemon: tail every journal and project it into the graph"},
		{"sync", "one full projection pass, then exit"},
		{"status", "per agent: journal records, projected, outbox, rejects, lag"},
		{"verify", "compare the graph with the journals"},
		{"compact", "fold old journal lines into MEMORY.md and move them to the archive"},
		{"consolidate", "the consolidation cycle: themes, core proposals, pruning, contradictions, follow-ups"},
		{"rebuild", "drop the projection and rebuild it from git (--from-history: every commit)"},
		{"search", "ranked recall within an agent's visible memories (offline from the journals if need be)"},
		{"list", "an agent's newest memories, newest first, as it may see them (no ranking)"},
		{"agents", "the repository's agents: journal records, shared and private, newest record"},
		{"show", "one memory by uuid, as an agent sees it: the record, where it lives, its edges and status"},
		{"rejects", "the journal lines that can never be projected: file, line and reason"},
		{"cache", "regenerate the agents' markdown snapshots from the graph"},
		{"flag", "human feedback on a memory (important, wrong, verified, unimportant), journaled"},
		{"explain", "why a memory ranks where it does: importance, confidence, status and their events"},
		{"hook", "Claude Code / Codex session hooks (JSON on stdin, fail-open); hook install adds them"},
		{"mcp", "an MCP server on stdio bound to one agent: search, remember, explain, flag, status"},
		{"packet", "a working-memory packet for one step of an agent, routed by its role (SPEC §8)"},
		{"import", "bring memory in: openclaw, vault, tiers, basic-memory, mcp-memory, mem0 (idempotent)"},
		{"export", "write an agent's visible memories out as markdown, mcp-memory or jsonl"},
		{"ui", "serve the web view: fleet, agents, search, memories, graph, packets (loopback by default)"},
	}
}

// IsCommand reports whether name is one of Commands.
func IsCommand(name string) bool {
	for _, c := range Commands() {
		if c.Name == name {
			return true
		}
	}
	return false
}

// IsHelp reports whether arg asks for help ("help", "-h", "-help", "--help").
func IsHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// Main dispatches args (without the program name) to the command that
// runner returns for its name and returns the exit code: 0 success, 1
// failure, 2 bad usage. "help" prints the command list, "help CMD" runs
// CMD --help; a name that is not one of Commands is bad usage. runner must
// know every command args can name.
func Main(ctx context.Context, env *Env, args []string, runner func(name string) (RunFunc, bool)) int {
	args = Hoist(args)
	if len(args) == 0 {
		printUsage(env.Stderr)
		return ExitUsage
	}
	name := args[0]
	if IsVersion(name) {
		PrintVersion(env.Stdout)
		return ExitOK
	}
	if IsHelp(name) {
		if len(args) == 1 {
			printUsage(env.Stdout)
			return ExitOK
		}
		run, ok := lookup(args[1], runner)
		if !ok {
			fmt.Fprintln(env.Stderr, UnknownCommand(args[1]))
			return ExitUsage
		}
		return run(ctx, env, []string{"--help"})
	}
	run, ok := lookup(name, runner)
	if !ok {
		fmt.Fprintln(env.Stderr, UnknownCommand(name))
		return ExitUsage
	}
	return run(ctx, env, args[1:])
}

// globalFlags are the flags that may also stand before the command's
// name, as git and kubectl take theirs (`memsync --repo DIR status`): each
// takes a value. boolGlobalFlags take none (`memsync --json status`). A
// command that does not take one refuses it as it would after its name.
var (
	globalFlags     = []string{"repo", "graph"}
	boolGlobalFlags = []string{"json"}
)

// Hoist moves global flags (globalFlags) that come before the command's
// name to just after it, so that `memsync --repo DIR status` runs as
// `memsync status --repo DIR`. Anything else is left as it is: a leading
// argument that is no global flag ends the hoisting, so "--help" and
// "--version" still answer, and an unknown leading flag is refused as an
// unknown command naming it.
func Hoist(args []string) []string {
	var moved []string
	i := 0
	for i < len(args) {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if strings.HasPrefix(args[i], "-") && slices.Contains(boolGlobalFlags, name) {
			moved = append(moved, args[i])
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") || !slices.Contains(globalFlags, name) {
			break
		}
		if hasValue {
			moved = append(moved, "--"+name+"="+value)
			i++
			continue
		}
		if i+1 >= len(args) {
			break
		}
		moved = append(moved, "--"+name, args[i+1])
		i += 2
	}
	if len(moved) == 0 || i >= len(args) {
		return args
	}
	out := make([]string, 0, len(args))
	out = append(out, args[i])
	out = append(out, moved...)
	return append(out, args[i+1:]...)
}

// UnknownCommand is the one line that refuses name, which is not one of
// Commands: with the closest command when one is a slip away (Suggest).
func UnknownCommand(name string) string {
	if s := Suggest(name, CommandNames()); s != "" {
		return fmt.Sprintf("memsync: unknown command %q; did you mean %s?", name, s)
	}
	return fmt.Sprintf("memsync: unknown command %q (memsync help lists the commands)", name)
}

func lookup(name string, runner func(string) (RunFunc, bool)) (RunFunc, bool) {
	if !IsCommand(name) {
		return nil, false
	}
	return runner(name)
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `usage: memsync <command> [flags] [args]

memsync keeps the memory of a team of AI agents in append-only JSONL journals
inside a git repository and projects them into a graph (Neo4j, or an embedded
store) for ranked recall. Git is the truth; everything else can be rebuilt.

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range Commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
Every command takes --repo DIR (default $MEMSYNC_REPO, else the current
directory), before or after the command's name; every command but init
refuses a directory that is not a memory repository. Run "memsync <command>
--help" for its flags; "memsync version" prints the version.
Exit codes: 0 success, 1 failure, 2 bad usage, 3 not found (a uuid no
memory has, or one the agent may not see).
`)
}
