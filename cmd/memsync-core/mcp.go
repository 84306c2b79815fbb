package main

import (
	"context"
	"flag"
	"io"

	"go.uber.org/zap"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/cmd/internal/hooks"
	"github.com/memsync/memsync/cmd/internal/mcpserver"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

const mcpDescription = `Serve memsync to an MCP client (Claude Code, Claude Desktop, OpenClaw,
Cursor...) over stdio, bound to agent A: tools to search A's memories, remember
(append to A's journal), build A's working-memory packet for a step, read the
context a session of A starts with, explain
and flag a memory A may see, record the outcome of A's decisions, say that a
memory supports another, and show A's sync status. Each result is short text
for the model and the full JSON document as structured content. No tool argument can widen what it reads beyond the shared
memories (CONSTELLATION) and A's own (AGENT:A), or write as another agent: the
agent is this flag, never an argument. A failed call is a tool error, and a
malformed message (not JSON or not UTF-8, a batch, not JSON-RPC 2.0) is answered
with a JSON-RPC error; either way the server keeps serving.`

func runMCP(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "mcp", "mcp --agent A [--repo DIR] [--graph embedded|neo4j] [flags]", mcpDescription)
	repoFlag := addRepoFlag(fs)
	agent := fs.String("agent", "", "the agent `A` the server is bound to (required): it reads shared memories and A's own, and writes only A's journal")
	var cfg Config
	addGraphFlags(fs.FlagSet, &cfg)
	if _, code, done := fs.parse(args); done {
		return code
	}
	switch {
	case *agent == "":
		return fs.usageErr("--agent: required")
	case !validAgent(*agent):
		return fs.usageErr("--agent: %s", agentNameError(*agent))
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return fs.usageErr("%v", err)
	}
	if err := loadConfig(env, repo, fs.FlagSet, &cfg); err != nil {
		return fs.usageErr("%v", err)
	}
	if code, done := knownAgent(fs, repo, *agent); done {
		return code
	}
	if err := mcpserver.Run(ctx, mcpDeps(env, fs, &cfg, repo, *agent)); err != nil {
		return fs.fail("%v", err)
	}
	return exitOK
}

// mcpDeps is what the MCP server bound to agent takes from the command:
// env's streams and clock, the read path and graph of cfg in repo (notes
// named for mcp; session_context's for the hook, whose context it is),
// and append, explain and flag run in-process with the graph flags mcp
// was given.
func mcpDeps(env *Env, fs *cmdFlags, cfg *Config, repo, agent string) mcpserver.Deps {
	return mcpserver.Deps{
		Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Now: env.Now,
		Layout: layout(repo), Agent: agent, Backend: cfg.graph(),
		Open: func(ctx context.Context) *read.Reader { return openReader(ctx, cfg, repo, "mcp", env.Stderr) },
		OpenGraph: func(ctx context.Context) memsync.Graph {
			g, err := openGraph(ctx, cfg, repo, zap.NewNop())
			if err != nil {
				return unreachable{err: err, identity: cfg.graph()}
			}
			return g
		},
		SessionContext: func(ctx context.Context, session string) (string, error) {
			return hooks.SessionContext(ctx, agentTarget(cfg, repo, agent, env.Stderr), session, "", env.Stderr, env.Now())
		},
		Append:  mcpCommand(env, fs, repo, cmdline.RunAppend),
		Explain: mcpCommand(env, fs, repo, runExplain),
		Flag:    mcpCommand(env, fs, repo, runFlag),
	}
}

// mcpCommand is run for the MCP server: in-process, in repo, with the
// graph flags given to mcp (fs) before the server's arguments, and env
// but for its streams.
func mcpCommand(env *Env, fs *cmdFlags, repo string, run cmdline.RunFunc) mcpserver.Command {
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		full := []string{"--repo=" + repo}
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "graph", "neo4j-uri", "neo4j-user", "neo4j-database":
				full = append(full, "--"+f.Name+"="+f.Value.String())
			}
		})
		e := *env
		e.Stdin, e.Stdout, e.Stderr = stdin, stdout, stderr
		return run(ctx, &e, append(full, args...))
	}
}
