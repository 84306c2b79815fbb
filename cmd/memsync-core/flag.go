package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/feedback"
)

const flagDescription = `Human feedback on a memory (SPEC §7), journaled as a feedback record
(source type "told", actor --by) that links to it: --important sets its
importance to 0.95, --wrong to 0 and archives it, --verified adds 0.15,
--unimportant takes 0.30; a later flag wins over an earlier one. The record is
written to --agent's journal (default: the memory's author), who must be able
to see the memory (shared, or its own); it is shared when the memory is. An
unknown or invisible uuid writes nothing and exits 3 (not found); not
exactly one flag writes nothing and exits 2.`

// flagResult is the document flag --json prints (cmdline.FlagResult,
// which the MCP server's flag tool reads too).
type flagResult = cmdline.FlagResult

func runFlag(ctx context.Context, env *Env, args []string) int {
	c := newRepoCmd(env, "flag", "flag UUID --important|--wrong|--verified|--unimportant [--by NAME] [--note TEXT] [--agent A] [--json]", flagDescription)
	values := map[string]*bool{}
	for _, v := range journal.Feedbacks {
		values[v] = c.Bool(v, false, "flag the memory "+v)
	}
	by := c.String("by", "", "the `NAME` of the person flagging (default $USER)")
	note := c.String("note", "", "why, in a `TEXT` kept in the record")
	agent := c.String("agent", "", "the agent `A` whose journal holds the flag (default: the memory's author)")
	asJSON := c.Bool("json", false, "print one JSON document")
	positional, code, done := c.parse(args)
	if done {
		return code
	}
	var chosen []string
	for _, v := range journal.Feedbacks {
		if *values[v] {
			chosen = append(chosen, "--"+v)
		}
	}
	switch {
	case len(positional) != 1:
		return c.usageErr("UUID: exactly one memory uuid expected, got %d", len(positional))
	case !journal.ValidUUID(positional[0]):
		return c.usageErr("UUID: %q is not a valid uuid", positional[0])
	case len(chosen) != 1:
		return c.usageErr("one of --important, --wrong, --verified, --unimportant expected, got %d (%s)", len(chosen), strings.Join(chosen, " "))
	case *agent != "" && !validAgent(*agent):
		return c.usageErr("--agent: %s", agentNameError(*agent))
	}
	target, value := positional[0], strings.TrimPrefix(chosen[0], "--")
	actor := *by
	if actor == "" {
		actor = env.Getenv("USER")
	}
	if actor == "" {
		actor = "human"
	}
	repo, err := existingRepo(env, *c.repoFlag)
	if err != nil {
		return c.usageErr("%v", err)
	}
	if err := loadConfig(env, repo, c.FlagSet, &c.cfg); err != nil {
		return c.usageErr("%v", err)
	}
	if *agent != "" {
		if code, done := knownAgent(c.cmdFlags, repo, *agent); done {
			return code
		}
	}
	n, found, err := findMemory(ctx, &c.cfg, repo, "flag", env.Stderr, target)
	if err != nil {
		return c.fail("%v", err)
	}
	writer := *agent
	if found && writer == "" {
		writer = n.Agent
	}
	if !found {
		return c.notFound(target, writer)
	}
	wrote, err := feedback.Journal(layout(repo), n, feedback.Flag{Feedback: value, By: actor, Note: *note, Writer: writer},
		feedback.Options{FSync: c.cfg.Append.FSync, Now: env.Now})
	if errors.Is(err, feedback.ErrNotVisible) {
		return c.notFound(target, writer)
	}
	if err != nil {
		var fe *journal.FieldError
		if errors.As(err, &fe) {
			return c.usageErr("%v", err)
		}
		return c.fail("%v", err)
	}
	rec := wrote.Record
	res := flagResult{UUID: rec.UUID, Target: target, Feedback: value, Path: wrote.Path}
	if *asJSON {
		out, _ := json.Marshal(res)
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return exitOK
	}
	// The uuid alone on stdout, as append prints one, for scripts; what
	// was flagged on stderr, for the person who typed it.
	fmt.Fprintln(env.Stdout, rec.UUID)
	fmt.Fprintf(env.Stderr, "flagged %s %s (by %s): %q; it counts from the next projection (memsync run, or memsync sync)\n",
		target, value, actor, snippet(n.Text, 72))
	return exitOK
}

// snippet is text on one line, cut to at most n characters with an ellipsis.
func snippet(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return text
}
