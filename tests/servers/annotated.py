"""A real MCP server (mcp SDK) whose tools carry MCP annotations, for tests of the
per-tool switches and the servers screen's badges: `annotated.py` (stdio).

Tools: read_note (read-only), delete_note (destructive), fetch_page (not destructive,
open world), touch (no annotations: destructive by MCP's default).
"""

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("annotated")
NOTES = {"a": "first note"}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_note(key: str) -> str:
    """Read a note."""
    return NOTES.get(key, "<none>")


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_note(key: str) -> str:
    """Delete a note."""
    return "deleted" if NOTES.pop(key, None) is not None else "no such note"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                         open_world_hint=True))
def fetch_page(url: str) -> str:
    """Pretend to fetch a web page."""
    return f"<html>{url}</html>"


@server.tool()
def touch(key: str) -> str:
    """Create an empty note."""
    NOTES.setdefault(key, "")
    return "ok"


if __name__ == "__main__":
    server.run("stdio")
