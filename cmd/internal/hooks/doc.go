// Package hooks answers the session hooks of Claude Code and Codex
// (`memsync hook HOST EVENT`): it reads the host's hook JSON, decides by
// the contract of issue 26 what the session's model gets (the session's
// starting context, the memories that bear on a prompt, the reminder to
// journal, once per session) and prints it in the host's own envelope,
// fail-open and within the hook's budget. It keeps each session's state in
// the agent's host-local sync/hooks/ and its boundaries in
// sync/sessions.jsonl.
//
// SessionContext, what a session starts with, is also the MCP tool
// session_context's answer: the one place that decides it.
//
// The package reads flags, configuration and the process environment
// never: the command builds a Deps (streams, clock, environment, and a
// Resolve that finds the repository, the agent and the read path) and
// calls Run.
package hooks
