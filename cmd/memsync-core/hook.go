package main

import (
	"cmp"
	"context"
	"errors"
	"io"

	"github.com/memsync/memsync/cmd/internal/hooks"
	"github.com/memsync/memsync/memsync/read"
)

const hookDescription = `Run as a session hook of Claude Code or Codex: read the host's hook
JSON on stdin and answer in the host's own envelope, through the channels
each host delivers to the model. SessionStart injects a planner packet for
the session (see memsync packet), the rest of the agent's core tier and its
open follow-ups, fitted to the host's budget (Claude Code 9,000 characters,
Codex 6,000), once per session: a resume of a session it already answered
gets nothing, a compaction gets it again. UserPromptSubmit (opt-in) injects
the memories that bear on the prompt (its significant terms) and that the
session was not given yet, else nothing. Stop asks the model, once per
session, to journal what is worth keeping (Claude Code: Stop's
additionalContext; Codex: block-with-reason), unless the session already
journaled; in claude -p, the Agent SDK and codex exec that reminder comes
with the session's context instead, so that the answer stays the last
message. PreCompact and SessionEnd record the
session's boundary in the agent's sync/sessions.jsonl. Per-session state
lives in the agent's sync/hooks/. The agent is --agent, else
$MEMSYNC_AGENT, else hooks.agent in memsync.yaml. Fail-open: whatever goes
wrong (no repository, no graph, bad input, unknown event), it exits 0
within a second, prints nothing on stdout and says why on stderr; it never
exits 2, which would block the host. "memsync hook install" adds these
hooks to the host's settings.`

func runHook(ctx context.Context, env *Env, args []string) int {
	if len(args) > 0 && args[0] == "install" {
		return runHookInstall(ctx, env, args[1:])
	}
	fs := newFlags(env, "hook", "hook claude-code|codex EVENT [--agent A] [--repo DIR] (JSON on stdin)", hookDescription)
	repoFlag := addRepoFlag(fs)
	agentFlag := fs.String("agent", "", "the agent `A` the session is (default $MEMSYNC_AGENT, else hooks.agent in memsync.yaml)")
	var cfg Config
	addGraphFlags(fs.FlagSet, &cfg)
	pos, _, done := fs.parse(args)
	if done {
		return exitOK // --help, or a bad flag already explained on stderr: never block the host
	}
	hooks.Run(ctx, hooks.Deps{
		Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Now: env.Now, Getenv: env.Getenv,
		Resolve: func() (hooks.Target, error) { return hookTarget(env, *repoFlag, *agentFlag, fs, &cfg) },
	}, pos)
	return exitOK // fail-open: a hook never blocks the host
}

// hookTarget is the repository and agent a hook answers for, with its read
// path: --repo (else $MEMSYNC_REPO, ...), its configuration under the
// flags, and the agent --agent, $MEMSYNC_AGENT, then hooks.agent.
func hookTarget(env *Env, repoFlag, agentFlag string, fs *cmdFlags, cfg *Config) (hooks.Target, error) {
	repo, err := existingRepo(env, repoFlag)
	if err != nil {
		return hooks.Target{}, err
	}
	if err := loadConfig(env, repo, fs.FlagSet, cfg); err != nil {
		return hooks.Target{}, err
	}
	agent := cmp.Or(agentFlag, env.Getenv("MEMSYNC_AGENT"), cfg.Hooks.Agent)
	if agent == "" {
		return hooks.Target{}, errors.New("no agent: pass --agent, set MEMSYNC_AGENT, or hooks.agent in memsync.yaml")
	}
	if !validAgent(agent) {
		return hooks.Target{}, errors.New(agentNameError(agent))
	}
	return agentTarget(cfg, repo, agent, env.Stderr), nil
}

// agentTarget is agent's memory in repo for the hooks package: its read
// path is openReader's, its notes on stderr named for the hook (as the
// MCP server's session_context names them too).
func agentTarget(cfg *Config, repo, agent string, stderr io.Writer) hooks.Target {
	return hooks.Target{Layout: layout(repo), Agent: agent,
		Open: func(ctx context.Context) *read.Reader { return openReader(ctx, cfg, repo, "hook", stderr) }}
}
