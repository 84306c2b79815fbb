// Package e2e drives the real agent hosts against memsync: it installs the
// pinned Claude Code and Codex CLIs from the npm registry, and the latest
// of each the registry serves (npm view at test time; every Claude Code
// test, and TestCodexTerminal, runs as subtests pinned and latest, latest
// skipping when it is the pinned version), points them at a fake
// model API on 127.0.0.1 that logs every request body (and loads MCP tools
// through the tool search either host defers them behind), installs
// memsync's hooks and MCP server the way a user does, runs short sessions
// in each host non-interactively, and asserts on what the model received:
// the session packet once, a prompt packet only where memory bears on the
// prompt, the journaling reminder once, and an MCP search result; that
// claude -p and codex exec print the answer, not the reply to the
// reminder; and that an attended Claude Code session (also claude itself
// in a pseudo-terminal, terminal_test.go) gets the reminder at Stop once
// and as no error, as does the Codex TUI in a pseudo-terminal, which
// also shows no warning of memsync's at start. The hook wrapper saves each hook's stdin and
// environment (the artifacts show both).
//
// The package holds tests only. `go test ./cmd/internal/e2e -update`
// rewrites testdata/hooks/ (at the repository root) from the hook payloads
// the hosts sent, scrubbed of paths and ids; -record-requests writes the
// model requests to testdata/requests/ (the checker's table test holds
// those recorded with the hooks from before issue 26). When the npm
// registry cannot be reached the host tests skip and say so; any other
// install failure fails them; -short skips them.
//
// Environment: MEMSYNC_E2E_CACHE is where the clients are installed
// (default $XDG_CACHE_HOME/memsync-e2e, reused while the versions match;
// the latest Claude Code in its claude-code-VERSION/, the latest Codex in
// codex-VERSION/, the older ones removed);
// MEMSYNC_E2E_BIN a directory with memsync and memsync-core to test
// instead of building them; MEMSYNC_E2E_ARTIFACTS where each session's
// requests and hook calls are saved (by default only when a test fails,
// under the temporary directory).
package e2e
