"""A real MCP server (mcp SDK) for tests: `toy.py stdio | http PORT | sse PORT`.

Tools: echo, add (structured result), slow (sleeps), crash (the process dies mid-call),
env (reads one environment variable — to check what a server inherits).
"""

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("toy")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
def crash() -> str:
    """Kill this server in the middle of the call."""
    sys.stderr.write("toy: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable, or <unset>."""
    return os.environ.get(name, "<unset>")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
