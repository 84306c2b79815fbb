package main

import (
	"os"
	"path/filepath"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/memsync"
)

// The commands' vocabulary, from cmdline (shared with the front binary).

// Exit codes of every command.
const (
	exitOK    = cmdline.ExitOK
	exitFail  = cmdline.ExitFail
	exitUsage = cmdline.ExitUsage
	// exitNotFound: no memory with that uuid that the agent may see.
	exitNotFound = cmdline.ExitNotFound
)

// Env is everything a command takes from its process.
type Env = cmdline.Env

// stringList is a repeatable string flag.
type stringList = cmdline.StringList

func osEnv() *Env { return cmdline.OSEnv() }

// cmdFlags is a subcommand's flag set with the usage text it prints.
type cmdFlags struct {
	*cmdline.Flags
}

// newFlags makes the flag set of command name; see cmdline.NewFlags.
func newFlags(env *Env, name, synopsis, description string) *cmdFlags {
	return &cmdFlags{cmdline.NewFlags(env, name, synopsis, description)}
}

// parse is cmdline.Flags.ParseArgs: flags and positional arguments mix.
func (c *cmdFlags) parse(args []string) (positional []string, code int, done bool) {
	return c.ParseArgs(args)
}

// usageErr reports bad usage in one line and returns exitUsage.
func (c *cmdFlags) usageErr(format string, args ...any) int { return c.UsageErr(format, args...) }

// fail reports a failure in one line and returns exitFail.
func (c *cmdFlags) fail(format string, args ...any) int { return c.Fail(format, args...) }

// notFound reports, in one line, a uuid that no memory the reader may see
// has and returns exitNotFound: an unknown uuid and another agent's
// private memory get the same line and code, so that neither leaks.
func (c *cmdFlags) notFound(uuid, agent string) int {
	if agent == "" {
		c.Fail("no memory %s", uuid)
	} else {
		c.Fail("no memory %s visible to agent %s", uuid, agent)
	}
	return exitNotFound
}

func addRepoFlag(fs *cmdFlags) *string                   { return cmdline.AddRepoFlag(fs.Flags) }
func repoDir(env *Env, flagValue string) (string, error) { return cmdline.RepoDir(env, flagValue) }
func existingRepo(env *Env, flagValue string) (string, error) {
	return cmdline.ExistingRepo(env, flagValue)
}
func agentNameError(name string) string { return cmdline.AgentNameError(name) }
func kindList() string                  { return cmdline.KindList() }

// validAgent reports whether name may name an agent (and so a directory):
// cmdline.ValidAgent, the one rule of every command.
func validAgent(name string) bool { return cmdline.ValidAgent(name) }

// The places of SPEC §2, for commands; memsync.Layout is the one definition.

func layout(repo string) memsync.Layout        { return memsync.Layout{Root: repo} }
func memoryDir(repo, agent string) string      { return layout(repo).MemoryDir(agent) }
func journalDir(repo, agent string) string     { return layout(repo).JournalDir(agent) }
func archiveDir(repo, agent string) string     { return layout(repo).ArchiveDir(agent) }
func syncDir(repo, agent string) string        { return layout(repo).SyncDir(agent) }
func cacheDir(repo, agent string) string       { return layout(repo).CacheDir(agent) }
func entitiesDir(repo, agent string) string    { return filepath.Join(memoryDir(repo, agent), "entities") }
func memoryFile(repo, agent string) string     { return filepath.Join(memoryDir(repo, agent), "MEMORY.md") }
func localDir(repo string) string              { return layout(repo).LocalDir() }
func configFile(repo string) string            { return cmdline.ConfigFile(repo) }
func relPath(repo, path string) string         { return layout(repo).Rel(path) }
func listAgents(repo string) ([]string, error) { return layout(repo).Agents() }

// selectAgents is the agents a per-agent command (compact, consolidate)
// works on: those named by --agent, each checked, or every agent.
func selectAgents(fs *cmdFlags, repo string, named []string) (agents []string, code int, done bool) {
	if len(named) == 0 {
		all, err := listAgents(repo)
		if err != nil {
			return nil, fs.fail("list agents: %v", err), true
		}
		return all, 0, false
	}
	for _, a := range named {
		if code, done := knownAgent(fs, repo, a); done {
			return nil, code, true
		}
	}
	return named, 0, false
}

// knownAgent is the one rule for a named agent on every command: a valid
// name whose agents/NAME/memory/ directory exists (memsync init made it),
// the rule append applies. A refusal is bad usage (exit 2) in one line
// that names the repository's agents and, when the name is a slip away
// from one, that one (cmdline.UnknownAgent).
func knownAgent(fs *cmdFlags, repo, agent string) (code int, done bool) {
	if !validAgent(agent) {
		return fs.usageErr("--agent: %s", agentNameError(agent)), true
	}
	if st, err := os.Stat(memoryDir(repo, agent)); err == nil && st.IsDir() {
		return 0, false
	}
	agents, err := listAgents(repo)
	if err != nil {
		return fs.fail("list agents: %v", err), true
	}
	return fs.usageErr("--agent: %s", cmdline.UnknownAgent(repo, agent, agents)), true
}
