"""A real MCP server (mcp SDK) for tests of what a server publishes besides plain tools:
`changing.py stdio | http PORT`.

- Tools whose list changes: ``grow(name)`` adds a tool ``name`` (it answers its own name)
  and sends ``notifications/tools/list_changed``; ``shrink(name)`` removes one again;
  ``jot(name, text)`` adds a resource and sends the resources' list_changed.
- Typed tools with output schemas: ``stat`` (an object), ``count`` (an int, wrapped as
  ``{"result": …}``), ``liar`` (declares an object but returns content that breaks it).
- A resource ``notes://today``, a binary one ``notes://logo.png``, a template
  ``notes://day/{day}``.
- Prompts ``review(path, style="short")`` and ``hello()``.
- Instructions, so a client can show what the server is for.
"""

import sys
from typing import TypedDict

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources import TextResource
from mcp.types import CallToolResult, TextContent

server = MCPServer("changing", instructions="Notes and file facts for the deskmate tests.")


class FileFacts(TypedDict):
    path: str
    size: int


@server.tool()
def stat(path: str) -> FileFacts:
    """Facts about a file (made up: the size is the path's length)."""
    return FileFacts(path=path, size=len(path))


@server.tool()
def count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


@server.tool()
def liar(path: str) -> FileFacts:
    """Declares file facts but returns structured content that breaks its own schema."""
    return CallToolResult(content=[TextContent(type="text", text="oops")],  # type: ignore[return-value]
                          structured_content={"path": path, "size": "big"})


# The schema stays published, but the server no longer checks its own result against it
# (FuncMetadata reads output_model live): the client's check is the one that fails.
server._tool_manager.get_tool("liar").fn_metadata.output_model = None  # type: ignore[union-attr]


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called ``name`` and tell the client that the tool list changed."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description=f"The tool {name}, added by grow.")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@server.tool()
async def shrink(name: str, ctx: Context) -> str:
    """Remove the tool ``name`` and tell the client."""
    server.remove_tool(name)
    await ctx.session.send_tool_list_changed()
    return f"removed {name}"


@server.tool()
async def jot(name: str, text: str, ctx: Context) -> str:
    """Add a resource ``notes://NAME`` holding ``text`` and tell the client."""
    server.add_resource(TextResource(uri=f"notes://{name}", name=name, text=text,
                                     mime_type="text/plain"))
    await ctx.session.send_resource_list_changed()
    return f"noted notes://{name}"


@server.resource("notes://today", name="today", description="Today's notes",
                 mime_type="text/plain")
def today() -> str:
    return "Buy milk. Call Ada."


@server.resource("notes://logo.png", name="logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + bytes(24)


@server.resource("notes://day/{day}", name="day", description="The notes of one day",
                 mime_type="text/plain")
def day(day: str) -> str:
    return f"Notes of {day}: nothing planned."


@server.prompt()
def review(path: str, style: str = "short") -> str:
    """Ask for a review of one file."""
    return f"Review the file {path}. Keep the review {style}."


@server.prompt()
def hello() -> str:
    """Say hello."""
    return "Say hello to me."


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
