"""Calls the read tools of Graphiti's own MCP server over stdio.

Usage: mcp_probe.py SERVER_DIR CONFIG  (calls JSON on stdin, answers JSON on
stdout). SERVER_DIR holds Graphiti's mcp_server/src; the server is started
as its README says (python graphiti_mcp_server.py --transport stdio) with
CONFIG, in this python. Each call is {"tool": name, "args": {...}}; each
answer is the tool's structured result (or its text parsed as JSON).
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main():
    server_dir, config = sys.argv[1], sys.argv[2]
    calls = json.load(sys.stdin)
    params = StdioServerParameters(
        command=sys.executable,
        args=[os.path.join(server_dir, 'graphiti_mcp_server.py'), '--transport', 'stdio', '--config', config],
        cwd=server_dir,
        env=dict(os.environ),
    )
    answers = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            for call in calls:
                res = await session.call_tool(call['tool'], call['args'])
                out = res.structuredContent
                if out is None:
                    text = ''.join(c.text for c in res.content if getattr(c, 'type', '') == 'text')
                    try:
                        out = json.loads(text)
                    except ValueError:
                        out = {'error': text}
                if isinstance(out, dict) and set(out) == {'result'}:
                    out = out['result']
                answers.append({'is_error': bool(res.isError), 'result': out})
    json.dump({'tools': tools, 'answers': answers}, sys.stdout)


asyncio.run(main())
