package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// Exit codes of every command.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// Env is everything a command takes from its process, so that tests run
// commands in-process with their own streams, environment and clock.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Now            func() time.Time
	// Getwd is the working directory, the last resort for --repo;
	// os.Getwd when nil.
	Getwd func() (string, error)
}

func osEnv() *Env {
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Now: time.Now, Getwd: os.Getwd}
}

// cmdFlags is a subcommand's flag set with the usage text it prints.
type cmdFlags struct {
	*flag.FlagSet
	env         *Env
	name        string
	synopsis    string // e.g. "append --agent A --kind K [flags] [TEXT | -]"
	description string // one paragraph
}

// newFlags makes the flag set of command name. Its Usage prints the
// synopsis, the description and the flags to the flag set's output.
func newFlags(env *Env, name, synopsis, description string) *cmdFlags {
	c := &cmdFlags{FlagSet: flag.NewFlagSet("memsync "+name, flag.ContinueOnError), env: env,
		name: name, synopsis: synopsis, description: description}
	c.Usage = func() {
		w := c.Output()
		fmt.Fprintf(w, "usage: memsync %s\n\n%s\n", c.synopsis, wrap(c.description, 78))
		first := true
		c.VisitAll(func(f *flag.Flag) {
			if first {
				fmt.Fprint(w, "\nFlags:\n")
				first = false
			}
			printFlag(w, f)
		})
	}
	return c
}

// printFlag prints one flag the way the SPEC writes them: --name VALUE.
func printFlag(w io.Writer, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if name != "" {
		line += " " + name
	}
	fmt.Fprintln(w, line)
	if def := f.DefValue; def != "" && def != "false" && def != "[]" {
		usage += fmt.Sprintf(" (default %q)", def)
	}
	for _, l := range strings.Split(wrap(usage, 72), "\n") {
		fmt.Fprintf(w, "      %s\n", l)
	}
}

// wrap reflows text into lines of at most width columns (longer words stay whole).
func wrap(text string, width int) string {
	var b strings.Builder
	col := 0
	for _, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		switch {
		case col == 0:
		case col+1+n > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

// parse parses args, letting flags and positional arguments mix ("--" ends
// the flags). It returns the positional arguments, or done with the exit
// code when the command must stop: 0 after --help (usage on stdout), 2 after
// a bad flag (one line on stderr naming it).
func (c *cmdFlags) parse(args []string) (positional []string, code int, done bool) {
	c.SetOutput(io.Discard) // errors are reported here, in one line
	for {
		err := c.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			c.SetOutput(c.env.Stdout)
			c.Usage()
			return nil, exitOK, true
		}
		if err != nil {
			return nil, c.usageErr("%v (see memsync %s --help)", err, c.name), true
		}
		rest := c.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), 0, false
		}
		if len(rest) == 0 {
			return positional, 0, false
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// usageErr reports bad usage in one line and returns exitUsage.
func (c *cmdFlags) usageErr(format string, args ...any) int {
	fmt.Fprintf(c.env.Stderr, "memsync %s: %s\n", c.name, fmt.Sprintf(format, args...))
	return exitUsage
}

// fail reports a failure in one line and returns exitFail.
func (c *cmdFlags) fail(format string, args ...any) int {
	fmt.Fprintf(c.env.Stderr, "memsync %s: %s\n", c.name, fmt.Sprintf(format, args...))
	return exitFail
}

// addRepoFlag registers --repo; resolve it with repoDir.
func addRepoFlag(fs *cmdFlags) *string {
	return fs.String("repo", "", "memory repository `DIR` (default $MEMSYNC_REPO, else the current directory)")
}

// repoDir is the absolute repository directory: the --repo flag, else
// $MEMSYNC_REPO, else the working directory.
func repoDir(env *Env, flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		dir = env.Getenv("MEMSYNC_REPO")
	}
	if dir == "" {
		getwd := env.Getwd
		if getwd == nil {
			getwd = os.Getwd
		}
		wd, err := getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.Clean(abs), nil
}

// existingRepo is repoDir for commands that need the directory to exist.
func existingRepo(env *Env, flagValue string) (string, error) {
	dir, err := repoDir(env, flagValue)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("repository %s does not exist (see memsync init)", dir)
		}
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("repository %s is not a directory", dir)
	}
	return dir, nil
}

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
func configFile(repo string) string            { return filepath.Join(repo, "memsync.yaml") }
func relPath(repo, path string) string         { return layout(repo).Rel(path) }
func listAgents(repo string) ([]string, error) { return layout(repo).Agents() }
func agentNameError(name string) string {
	return fmt.Sprintf("invalid agent name %q (want [A-Za-z0-9][A-Za-z0-9_-]{0,63})", name)
}

// validAgent reports whether name may name an agent (and so a directory).
func validAgent(name string) bool { return journal.ValidAgent(name) }

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
