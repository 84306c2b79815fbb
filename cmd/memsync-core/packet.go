package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/memsync/memsync/memsync/packet"
)

const packetDescription = `A working-memory packet (SPEC §8): the few hard constraints, procedures,
pitfalls and facts that matter for this step of agent A in this role, not a
flat top-k. Candidates come from the --task and --session, lexical recall of
the goal, constraints, failures and questions, the durable memories (core
tier, preferences, procedures) and the most recent records; they are grouped
into four blocks (task_scoped, session_scoped, durable_global,
recent_fallback), the best blocks are selected, and memories are ranked only
inside them by overlap, scope, importance, confidence, outcomes, freshness,
SUPPORTS and contradiction (SPEC §7's scores). Roles read kinds: planner →
preference, procedure, summary; executor → preference, procedure, episode,
reflection; critic → reflection, preference, summary; responder →
preference, summary, procedure. Those are weights, not walls: a memory of
another kind is in relevant_facts, ranked a little lower, when it belongs
to the --task or --session or answers the goal clearly better (half its
words and 1.5× the best of the role's kinds, or any of its words when none
of the role's kinds holds one: a packet is empty only when no memory shares
a word with the goal). Caps: 4 hard constraints, 3 procedures, 3
pitfalls, 3 facts, 5 open questions (the --questions, then decisions a week
old with no outcome), 5 selected ids besides the core tier, which is always
in. Archived and superseded memories never are. The same memory, request
and --as-of give the same bytes. When the graph cannot be reached the
packet comes from the journals, with "offline": true and a note on stderr.
Output: markdown (default, for a prompt) or --json (one document).`

func runPacket(ctx context.Context, env *Env, args []string) int {
	c := newRepoCmd(env, "packet", "packet --role planner|executor|critic|responder --agent A --goal TEXT [--task T] [--session S] [--constraint C]... [--failure F]... [--question Q]... [--as-of T] [--json|--markdown] [--repo DIR] [flags]", packetDescription)
	role := c.String("role", "", "the step's `ROLE`: planner, executor, critic or responder (required)")
	agent := c.String("agent", "", "the agent `A` the packet is for (required): it sees shared memories and its own private ones")
	goal := c.String("goal", "", "what the step is for, in words (`TEXT`, required)")
	task := c.String("task", "", "the task id `T`: its memories are task-scoped candidates")
	session := c.String("session", "", "the session id `S`: its memories are session-scoped candidates")
	var constraints, failures, questions stringList
	c.Var(&constraints, "constraint", "a constraint `C` of the step (repeatable)")
	c.Var(&failures, "failure", "a recent failure `F` (repeatable)")
	c.Var(&questions, "question", "an open question `Q` (repeatable)")
	asOf := c.String("as-of", "", "build the packet as the memory stood at `T`, RFC 3339 (default now)")
	asJSON := c.Bool("json", false, "print one JSON document")
	asMarkdown := c.Bool("markdown", false, "print markdown (the default)")
	positional, code, done := c.parse(args)
	if done {
		return code
	}
	if len(positional) > 0 {
		return c.usageErr("unexpected argument %q (the goal goes in --goal)", positional[0])
	}
	if *asJSON && *asMarkdown {
		return c.usageErr("--json and --markdown: choose one")
	}
	clock, err := parseAsOf(*asOf, env.Now())
	if err != nil {
		return c.usageErr("--as-of: %v", err)
	}
	req := packet.Request{
		Role: packet.Role(*role), Agent: *agent, Goal: *goal, Task: *task, Session: *session,
		Constraints: constraints, Failures: failures, Questions: questions, AsOf: clock, Cutoff: *asOf != "",
	}
	if *role == "" {
		return c.usageErr("--role: required (planner, executor, critic or responder)")
	}
	if err := req.Validate(); err != nil {
		return c.usageErr("%v", err)
	}
	repo, err := existingRepo(env, *c.repoFlag)
	if err != nil {
		return c.usageErr("%v", err)
	}
	if err := loadConfig(env, repo, c.FlagSet, &c.cfg); err != nil {
		return c.usageErr("%v", err)
	}
	if code, done := knownAgent(c.cmdFlags, repo, *agent); done {
		return code
	}

	p, err := readPacket(ctx, &c.cfg, repo, "packet", env.Stderr, req)
	if err != nil {
		return c.fail("%v", err)
	}
	if !p.Offline {
		hintUnprojected(env, "packet", repo, nil)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(p, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return exitOK
	}
	fmt.Fprint(env.Stdout, packet.Markdown(p))
	return exitOK
}

// readPacket builds req's packet from the configured graph or, when the
// graph cannot be reached or fails while answering, from the journals
// (Offline set, a note on stderr naming cmd), with the same privacy: the
// one way the packet command, the hooks and the MCP server build one.
func readPacket(ctx context.Context, cfg *Config, repo, cmd string, stderr io.Writer, req packet.Request) (packet.Packet, error) {
	r := openReader(ctx, cfg, repo, cmd, stderr)
	defer r.Close()
	return packet.FromReader(ctx, r, req)
}
