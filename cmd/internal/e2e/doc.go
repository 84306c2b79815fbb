// Package e2e drives the real agent hosts against memsync: it installs the
// pinned Claude Code and Codex CLIs from the npm registry, points them at a
// fake model API on 127.0.0.1 that logs every request body, installs
// memsync's hooks and MCP server the way a user does, runs a short session
// in each host non-interactively, and asserts on what the model received:
// the session packet once, a prompt packet only where memory bears on the
// prompt, the journaling reminder once, and an MCP search result.
//
// The package holds tests only. `go test ./cmd/internal/e2e -update`
// rewrites testdata/hooks/ (at the repository root) from the hook payloads
// the hosts sent, scrubbed of paths and ids. When the npm registry cannot
// be reached the host tests skip and say so; any other install failure
// fails them.
package e2e
