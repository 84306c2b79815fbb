package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
)

// Flags is a subcommand's flag set with the usage text it prints and the
// Env it reports to.
type Flags struct {
	*flag.FlagSet
	Env         *Env
	Name        string // the command, e.g. "append"
	synopsis    string // e.g. "append --agent A --kind K [flags] [TEXT | -]"
	description string // one paragraph
}

// NewFlags makes the flag set of command name. Its Usage prints the
// synopsis, the description and the flags to the flag set's output.
func NewFlags(env *Env, name, synopsis, description string) *Flags {
	c := &Flags{FlagSet: flag.NewFlagSet("memsync "+name, flag.ContinueOnError), Env: env,
		Name: name, synopsis: synopsis, description: description}
	c.Usage = func() {
		w := c.Output()
		fmt.Fprintf(w, "usage: memsync %s\n\n%s\n", c.synopsis, wrap(c.description, 78))
		// The Neo4j flags come last, under a heading of their own: on the
		// embedded store (the default) they do nothing.
		for _, group := range []struct {
			heading string
			neo4j   bool
		}{{"Flags", false}, {"Neo4j flags (only with --graph neo4j)", true}} {
			first := true
			c.VisitAll(func(f *flag.Flag) {
				if strings.HasPrefix(f.Name, neo4jFlagPrefix) != group.neo4j {
					return
				}
				if first {
					fmt.Fprintf(w, "\n%s:\n", group.heading)
					first = false
				}
				printFlag(w, f)
			})
		}
	}
	return c
}

// neo4jFlagPrefix starts the name of every flag that only Neo4j reads.
const neo4jFlagPrefix = "neo4j-"

// printFlag prints one flag the way the SPEC writes them: --name VALUE.
func printFlag(w io.Writer, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if name != "" {
		line += " " + name
	}
	fmt.Fprintln(w, line)
	if def := f.DefValue; def != "" && def != "false" && def != "[]" {
		usage += fmt.Sprintf(" (default %s)", def)
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

// ParseArgs parses args, letting flags and positional arguments mix ("--"
// ends the flags). It returns the positional arguments, or done with the
// exit code when the command must stop: 0 after --help (usage on stdout),
// 2 after a bad flag (one line on stderr naming it).
func (c *Flags) ParseArgs(args []string) (positional []string, code int, done bool) {
	c.SetOutput(io.Discard) // errors are reported here, in one line
	for {
		err := c.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			c.SetOutput(c.Env.Stdout)
			c.Usage()
			return nil, ExitOK, true
		}
		if err != nil {
			return nil, c.UsageErr("%s (see memsync %s --help)", c.flagError(err), c.Name), true
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

// flagError is the flag package's error said in memsync's own words: flags
// named as they are written (--limit, not -limit), a flag it does not know
// that is a slip away from one it does (--agnet) with the one it meant,
// and a value that does not parse with what the flag takes.
func (c *Flags) flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimPrefix(name, "-")
		if s := c.SuggestFlag(name); s != "" {
			return fmt.Sprintf("unknown flag --%s; did you mean --%s?", name, s)
		}
		return fmt.Sprintf("unknown flag --%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("--%s needs a value", strings.TrimPrefix(name, "-"))
	}
	// invalid boolean value "maybe" for -json: parse error
	if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok {
		if i := strings.Index(rest, " for -"); i >= 0 {
			name, _, _ := strings.Cut(rest[i+len(" for -"):], ":")
			return fmt.Sprintf("--%s: invalid value %s: want true or false", name, rest[:i])
		}
	}
	// invalid value "abc" for flag -limit: parse error
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if i := strings.Index(rest, " for flag -"); i >= 0 {
			value, tail := rest[:i], rest[i+len(" for flag -"):]
			name, why, _ := strings.Cut(tail, ": ")
			return fmt.Sprintf("--%s: invalid value %s: %s", name, value, c.valueHint(name, why))
		}
	}
	return msg
}

// valueHint says what flag name takes, for a value the flag package could
// not parse (why is its reason).
func (c *Flags) valueHint(name, why string) string {
	f := c.Lookup(name)
	if f == nil {
		return why
	}
	switch f.Value.(type) {
	case interface{ IsBoolFlag() bool }:
		return "want true or false"
	}
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
		return "want a whole number"
	case "*flag.float64Value":
		return "want a number"
	case "*flag.durationValue":
		return "want a duration (90s, 5m, 1h)"
	}
	if why == "parse error" {
		return "does not parse"
	}
	return why
}

// SuggestFlag is the flag of c that name (without dashes) most likely
// meant to name, or "" (see Suggest).
func (c *Flags) SuggestFlag(name string) string {
	return Suggest(name, FlagNames(c.FlagSet))
}

// UsageErr reports bad usage in one line and returns ExitUsage.
func (c *Flags) UsageErr(format string, args ...any) int {
	fmt.Fprintf(c.Env.Stderr, "memsync %s: %s\n", c.Name, fmt.Sprintf(format, args...))
	return ExitUsage
}

// Fail reports a failure in one line and returns ExitFail.
func (c *Flags) Fail(format string, args ...any) int {
	fmt.Fprintf(c.Env.Stderr, "memsync %s: %s\n", c.Name, fmt.Sprintf(format, args...))
	return ExitFail
}

// AddRepoFlag registers --repo; resolve it with RepoDir or ExistingRepo.
func AddRepoFlag(fs *Flags) *string {
	return fs.String("repo", "", "memory repository `DIR` (default $MEMSYNC_REPO, else the current directory)")
}

// RepoDir is the absolute repository directory: the --repo flag, else
// $MEMSYNC_REPO, else the working directory.
func RepoDir(env *Env, flagValue string) (string, error) {
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

// ExistingRepo is RepoDir for every command but init: the directory must
// exist and be a memory repository (see IsMemoryRepo). Its error is one
// line naming the directory and how to fix it; commands report it as bad
// usage (exit 2).
func ExistingRepo(env *Env, flagValue string) (string, error) {
	dir, err := RepoDir(env, flagValue)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("repository %s does not exist: create it with \"memsync init --repo %s\"", dir, dir)
		}
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("repository %s is not a directory", dir)
	}
	if !IsMemoryRepo(dir) {
		return "", fmt.Errorf("%s is not a memory repository (no memsync.yaml or agents/ in it): "+
			"create one with \"memsync init --repo %s\", or name one with --repo DIR or $MEMSYNC_REPO", dir, dir)
	}
	return dir, nil
}

// IsMemoryRepo reports whether dir is a memory repository: it holds
// memsync.yaml (memsync init writes one) or an agents/ directory (every
// repository has one, those of older versions included). Two stats at
// most, so that append stays quick.
func IsMemoryRepo(dir string) bool {
	if st, err := os.Stat(ConfigFile(dir)); err == nil && st.Mode().IsRegular() {
		return true
	}
	st, err := os.Stat(filepath.Join(dir, "agents"))
	return err == nil && st.IsDir()
}

// ValidAgent is the one agent-name rule every command applies: a valid
// name (journal.ValidAgent) that Windows does not reserve
// (journal.ReservedAgent), so that the agent's directory can be committed
// and checked out everywhere.
func ValidAgent(name string) bool { return journal.ValidAgent(name) && !journal.ReservedAgent(name) }

// AgentNameError says why name cannot name an agent (see ValidAgent).
func AgentNameError(name string) string {
	if journal.ValidAgent(name) && journal.ReservedAgent(name) {
		return fmt.Sprintf("invalid agent name %q: Windows reserves it for a device (CON, PRN, AUX, NUL, COM0-9, LPT0-9, in any case), so git cannot commit or check out agents/%s", name, name)
	}
	return fmt.Sprintf("invalid agent name %q (want [A-Za-z0-9][A-Za-z0-9_-]{0,63})", name)
}

// UnknownAgent is the one line that refuses agent, which is none of known
// (the repository's agents, as its agents/ directory lists them): every
// command that takes an agent refuses an unknown one with it, naming the
// agents and the closest of them when one is a slip away (Suggest).
func UnknownAgent(repo, agent string, known []string) string {
	list := "none yet"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	if s := Suggest(agent, known); s != "" {
		return fmt.Sprintf("unknown agent %q in %s; did you mean %s? (agents: %s)", agent, repo, s, list)
	}
	return fmt.Sprintf("unknown agent %q in %s (agents: %s): create it with \"memsync init --repo %s --agent %s\"",
		agent, repo, list, repo, agent)
}

// KindList is every record kind, comma-separated, for usage texts.
func KindList() string { return joinKinds(journal.Kinds) }

// AgentKindList is the kinds an agent may append (journal.AgentKinds),
// comma-separated: the kinds only memsync writes are left out.
func AgentKindList() string { return joinKinds(journal.AgentKinds) }

func joinKinds(kinds []journal.Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// StringList is a repeatable string flag.
type StringList []string

// String is the values, comma-separated.
func (s *StringList) String() string { return strings.Join(*s, ",") }

// Set adds one value.
func (s *StringList) Set(v string) error { *s = append(*s, v); return nil }

// CommaList is a repeatable flag whose values may also be comma-separated
// (uuids hold no comma): --supports a,b --supports c is a, b, c.
type CommaList []string

// String is the values, comma-separated.
func (s *CommaList) String() string { return strings.Join(*s, ",") }

// Set adds the comma-separated values of v, refusing an empty one.
func (s *CommaList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return fmt.Errorf("empty value in %q", v)
		}
		*s = append(*s, part)
	}
	return nil
}
