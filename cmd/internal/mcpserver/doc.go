// Package mcpserver is `memsync mcp`: an MCP server on stdio bound to one
// agent, whose tools search the agent's memories, remember (append to its
// journal), build its working-memory packet, read the context a session
// starts with, explain and flag a memory, record outcomes and support, and
// show the agent's sync status. Each tool's input schema and the check the
// server makes of every call come from one set of rules, and a malformed
// message is answered with a JSON-RPC error rather than ending the session.
// The MCP Go SDK is the transport.
//
// The package reads flags, configuration and the process environment
// never: the command builds a Deps (streams, clock, the agent, the read
// path, the graph for status, the session context and the commands it runs
// in-process) and calls Run.
package mcpserver
