package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/cmd/internal/hooks"
	"github.com/memsync/memsync/journal"
)

const hookInstallDescription = `Add memsync's hooks to a host's settings: Claude Code's
~/.claude/settings.json (--user, the default) or DIR/.claude/settings.json
(--project DIR); Codex's ~/.codex/hooks.json (or $CODEX_HOME/hooks.json) or
DIR/.codex/hooks.json. Every other setting and hook is kept as it was; memsync's
own entries are replaced, so installing twice is installing once. The file is
backed up beside itself (NAME.memsync-backup-TIME) before it changes; a file
that is a symlink (dotfiles) stays one, and its target is written.
--dry-run prints the result instead of writing it. SessionStart is installed
with the matcher "startup|clear|compact" (a resumed session already holds its
context).

` + codexTrustStep

// codexTrustStep is what a user does so that Codex runs memsync's hooks
// (Codex skips hooks it has not trusted; the trust is a hash of each hook
// kept under [hooks.state] in ~/.codex/config.toml, so a hook installed
// again with another path or flags must be trusted again).
const codexTrustStep = `Codex runs a hook only once you trust it, and skips it until then. To trust memsync's hooks:
  1. run codex in a terminal;
  2. type /hooks, open each memsync hook and press t.
Codex keeps the trust in ~/.codex/config.toml ([hooks.state]); a hook installed again
with another path or flags must be trusted again (codex exec cannot ask: trust them first).`

// installEvents are the events memsync hooks into, per host; --prompt adds
// UserPromptSubmit. Both hosts: SessionStart (the context), PreCompact
// (the boundary; Claude Code's summarizer note), Stop (the once-per-session
// journaling reminder) and SessionEnd (the boundary).
var installEvents = map[string][]string{
	"claude-code": {"SessionStart", "PreCompact", "Stop", "SessionEnd"},
	"codex":       {"SessionStart", "PreCompact", "Stop", "SessionEnd"},
}

// hookMatchers are the matchers memsync's groups carry, per event; both
// hosts test SessionStart's matcher against its source. Resume is left
// out: the resumed transcript already holds the context (the hook itself
// also prints nothing for a session it already answered).
var hookMatchers = map[string]string{"SessionStart": "startup|clear|compact"}

// hookTimeoutSeconds is the timeout written for each hook (the hook gives
// up on its own well before). Codex clamps a SessionEnd hook to 3 s and
// warns at every start about a longer one, so that event gets 3.
const hookTimeoutSeconds = 5

// hookTimeout is the timeout written for event ev's hook.
func hookTimeout(ev string) int {
	if ev == "SessionEnd" {
		return 3
	}
	return hookTimeoutSeconds
}

func runHookInstall(_ context.Context, env *Env, args []string) int {
	fs := newFlags(env, "hook install", "hook install claude-code|codex [--user | --project DIR] [--agent A] [--repo DIR] [--prompt] [--dry-run]", hookInstallDescription)
	repoFlag := fs.String("repo", "", "memory repository `DIR` the hooks use (default: theirs, $MEMSYNC_REPO or the working directory)")
	agent := fs.String("agent", "", "the agent `A` the hooks speak for (default: MEMSYNC_AGENT or hooks.agent when they run)")
	user := fs.Bool("user", false, "install in the user's settings (the default)")
	project := fs.String("project", "", "install in the settings of the project in `DIR`")
	prompt := fs.Bool("prompt", false, "also inject memories for every prompt (UserPromptSubmit)")
	dryRun := fs.Bool("dry-run", false, "print the settings file as it would be written, and write nothing")
	pos, code, done := fs.parse(args)
	if done {
		return code
	}
	if len(pos) != 1 || installEvents[pos[0]] == nil {
		return fs.usageErr("want one host: claude-code or codex, got %q", pos)
	}
	host := pos[0]
	if *user && *project != "" {
		return fs.usageErr("--user and --project: pick one")
	}
	if *agent != "" && !validAgent(*agent) {
		return fs.usageErr("--agent: %s", agentNameError(*agent))
	}
	path, err := hostSettingsPath(env, host, *project)
	if err != nil {
		return fs.fail("%v", err)
	}
	repo := ""
	if *repoFlag != "" {
		if repo, err = filepath.Abs(*repoFlag); err != nil {
			return fs.fail("--repo: %v", err)
		}
	}
	exe, err := memsyncExecutable()
	if err != nil {
		return fs.fail("%v", err)
	}
	events := installEvents[host]
	if *prompt {
		events = append(events, "UserPromptSubmit")
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fs.fail("read %s: %v", path, err)
	}
	updated, err := mergeHooks(old, host, hookCommands(exe, host, events, *agent, repo))
	if err != nil {
		return fs.fail("%s: %v", path, err)
	}
	if *dryRun {
		env.Stdout.Write(updated)
		return exitOK
	}
	if bytes.Equal(old, updated) {
		fmt.Fprintf(env.Stdout, "%s: memsync's %s hooks are already installed\n", path, host)
		if host == "codex" {
			fmt.Fprintln(env.Stdout, codexTrustStep)
		}
		return exitOK
	}
	// A settings file that is a symlink (dotfiles) is written through to
	// its target: replacing the link would cut it from the user's files.
	target, err := linkTarget(path)
	if err != nil {
		return fs.fail("%v", err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fs.fail("%v", err)
	}
	if old != nil {
		backup := path + ".memsync-backup-" + env.Now().UTC().Format("20060102T150405Z")
		if err := os.WriteFile(backup, old, 0o600); err != nil {
			return fs.fail("back up %s: %v", path, err)
		}
		fmt.Fprintf(env.Stdout, "backed up %s to %s\n", path, backup)
	}
	if err := journal.WriteAtomic(target, updated); err != nil {
		return fs.fail("%v", err)
	}
	through := ""
	if target != path {
		through = " (written through the symlink to " + target + ")"
	}
	fmt.Fprintf(env.Stdout, "%s: installed memsync's %s hooks (%s)%s\n", path, host, strings.Join(events, ", "), through)
	if host == "codex" {
		fmt.Fprintln(env.Stdout, codexTrustStep)
	}
	return exitOK
}

// hostSettingsPath is the file hook install edits.
func hostSettingsPath(env *Env, host, project string) (string, error) {
	if project != "" {
		dir, err := filepath.Abs(project)
		if err != nil {
			return "", err
		}
		if host == "codex" {
			return filepath.Join(dir, ".codex", "hooks.json"), nil
		}
		return filepath.Join(dir, ".claude", "settings.json"), nil
	}
	if host == "codex" {
		if ch := env.Getenv("CODEX_HOME"); ch != "" {
			return filepath.Join(ch, "hooks.json"), nil
		}
	}
	home := env.Getenv("HOME")
	if home == "" {
		return "", errors.New("$HOME is not set: use --project DIR")
	}
	if host == "codex" {
		return filepath.Join(home, ".codex", "hooks.json"), nil
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// maxLinkHops bounds how many symlinks linkTarget follows (as the kernel's
// ELOOP does).
const maxLinkHops = 40

// linkTarget is the file path names once every symlink is followed, path
// itself when it is not a link. The last target need not exist (a link
// into a dotfiles directory that has no settings yet): it is where the
// file is to be written.
func linkTarget(path string) (string, error) {
	for hops := 0; ; hops++ {
		st, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) || err == nil && st.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		if err != nil {
			return "", fmt.Errorf("follow %s: %w", path, err)
		}
		if hops == maxLinkHops {
			return "", fmt.Errorf("follow %s: more than %d symlinks", path, maxLinkHops)
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("follow %s: %w", path, err)
		}
		if !filepath.IsAbs(to) {
			// Relative to the link's real directory, as the kernel reads
			// it: a ".." in the link climbs out of that one.
			dir, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return "", fmt.Errorf("follow %s: %w", path, err)
			}
			to = filepath.Join(dir, to)
		}
		path = to
	}
}

// memsyncExecutable is the program the hooks run: the small front binary
// beside this one when it is there (faster to start), else this one.
func memsyncExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find memsync's own path: %w", err)
	}
	if front := filepath.Join(filepath.Dir(exe), "memsync"); filepath.Base(exe) == "memsync-core" {
		if st, err := os.Stat(front); err == nil && !st.IsDir() {
			return front, nil
		}
	}
	return exe, nil
}

// hookCommands is the command line of each event's hook.
func hookCommands(exe, host string, events []string, agent, repo string) map[string]string {
	out := map[string]string{}
	for _, ev := range events {
		cmd := cmdline.ShellQuote(exe) + " hook " + host + " " + ev
		if agent != "" {
			cmd += " --agent " + cmdline.ShellQuote(agent)
		}
		if repo != "" {
			cmd += " --repo " + cmdline.ShellQuote(repo)
		}
		out[ev] = cmd
	}
	return out
}

// ownHook recognizes a command memsync installed for host, whatever path
// or flags it was installed with.
func ownHook(host string) *regexp.Regexp {
	return regexp.MustCompile(`(^|/)memsync(-core)?'? hook ` + regexp.QuoteMeta(host) + ` `)
}

// mergeHooks returns settings (a JSON object, or empty) with memsync's
// hooks for host set to commands: every memsync hook for host is removed,
// then one group per event is added at the end of that event's list.
// Every other key, event, group and hook is kept, in its order.
func mergeHooks(settings []byte, host string, commands map[string]string) ([]byte, error) {
	top, err := parseObject(settings)
	if err != nil {
		return nil, err
	}
	byEvent, err := parseObject(top.vals["hooks"])
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	mine := ownHook(host)
	for _, ev := range slices.Clone(byEvent.keys) {
		var groups []json.RawMessage
		if err := json.Unmarshal(byEvent.vals[ev], &groups); err != nil {
			return nil, fmt.Errorf("hooks.%s: not a list: %w", ev, err)
		}
		kept := groups[:0]
		for _, g := range groups {
			g, keep, err := withoutOwnHooks(g, mine)
			if err != nil {
				return nil, fmt.Errorf("hooks.%s: %w", ev, err)
			}
			if keep {
				kept = append(kept, g)
			}
		}
		if len(kept) == 0 && commands[ev] == "" {
			byEvent.remove(ev)
			continue
		}
		byEvent.set(ev, mustJSON(kept))
	}
	for _, ev := range hooks.Events() { // a stable order for new events
		cmd := commands[ev]
		if cmd == "" {
			continue
		}
		var groups []json.RawMessage
		if raw, ok := byEvent.vals[ev]; ok {
			_ = json.Unmarshal(raw, &groups)
		}
		group := map[string]any{"hooks": []map[string]any{{"type": "command", "command": cmd, "timeout": hookTimeout(ev)}}}
		if m := hookMatchers[ev]; m != "" {
			group["matcher"] = m
		}
		groups = append(groups, mustJSON(group))
		byEvent.set(ev, mustJSON(groups))
	}
	top.set("hooks", byEvent.marshal())
	var out bytes.Buffer
	if err := json.Indent(&out, top.marshal(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// withoutOwnHooks drops memsync's hooks from one matcher group; keep is
// false when nothing else was in it.
func withoutOwnHooks(group json.RawMessage, mine *regexp.Regexp) (json.RawMessage, bool, error) {
	g, err := parseObject(group)
	if err != nil {
		return nil, false, err
	}
	var handlers []json.RawMessage
	if raw, ok := g.vals["hooks"]; ok {
		if err := json.Unmarshal(raw, &handlers); err != nil {
			return nil, false, fmt.Errorf("hooks: not a list: %w", err)
		}
	}
	kept := handlers[:0]
	for _, h := range handlers {
		var cmd struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(h, &cmd)
		if !mine.MatchString(cmd.Command) {
			kept = append(kept, h)
		}
	}
	if len(kept) == len(handlers) {
		return group, true, nil
	}
	if len(kept) == 0 {
		return nil, false, nil
	}
	g.set("hooks", mustJSON(kept))
	return g.marshal(), true, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps, slices and raw JSON of our own
	}
	return b
}

// object is a JSON object that keeps its keys' order, so that a settings
// file is rewritten with its keys where they were.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject reads a JSON object; empty input is an empty object.
func parseObject(data []byte) (*object, error) {
	o := &object{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		o.set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not JSON: trailing data after the object")
	}
	return o, nil
}

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) remove(k string) {
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			return
		}
	}
}

func (o *object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}
