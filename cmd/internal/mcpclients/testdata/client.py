"""Drives `memsync mcp` with the official Python MCP SDK, as a host would.

Usage: client.py MEMSYNC REPO AGENT CALLS.json
CALLS.json is a list of {"name": tool, "arguments": {...}}. The server is
started over stdio, its tools are listed and each call made in turn; the
answer, one JSON document on stdout, is {"tools": [tool, ...], "results":
[{"is_error": bool, "text": str, "structured": object|null}, ...]}, every
tool and result as the SDK parsed it (aliases, as on the wire).
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(memsync, repo, agent, calls):
    params = StdioServerParameters(command=memsync, args=["mcp", "--agent", agent, "--repo", repo],
                                   env={"MEMSYNC_REPO": "", "MEMSYNC_GRAPH": "", "MEMSYNC_NEO4J_URI": ""})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            out = {"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools.tools], "results": []}
            for call in calls:
                res = await session.call_tool(call["name"], call.get("arguments") or {})
                out["results"].append({
                    "is_error": bool(res.is_error if hasattr(res, "is_error") else res.isError),
                    "text": "\n".join(c.text for c in res.content if getattr(c, "type", "") == "text"),
                    "structured": getattr(res, "structured_content", None) if hasattr(res, "structured_content") else res.structuredContent,
                })
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    with open(sys.argv[4]) as f:
        asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], json.load(f)))
