// Package mcpclients holds the tests that drive `memsync mcp` with MCP
// clients memsync does not ship: the official Python MCP SDK (mcp, from
// PyPI) and the MCP Inspector CLI (@modelcontextprotocol/inspector, from
// the npm registry), each at a pinned version installed once into a cache
// directory. They live apart from cmd/memsync-core so that they do not
// slow its tests; a registry that cannot be reached skips them with a
// note, and every other failure fails.
package mcpclients
