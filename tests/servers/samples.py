"""A real MCP server (mcp SDK) that asks the client's model to write (MCP sampling):
`samples.py` (stdio).

Tools: can_sample (whether the client declared sampling), haiku (asks for a short text
with a system prompt and returns what came back, or the error), picture (sends an image,
which deskmate refuses).
"""

import base64

from mcp import types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("samples")


@server.tool()
def can_sample(ctx: Context) -> str:
    caps = ctx.client_capabilities
    return "yes" if caps is not None and caps.sampling is not None else "no"


async def _sample(ctx: Context, content, max_tokens: int) -> str:
    try:
        result = await ctx.session.create_message(
            [types.SamplingMessage(role="user", content=content)], max_tokens=max_tokens,
            system_prompt="You are a poet.", temperature=0.0)
    except Exception as exc:  # the client's error: return it so the test can read it
        return f"error: {exc}"
    text = result.content.text if isinstance(result.content, types.TextContent) else "?"
    return f"model={result.model}|stop={result.stop_reason}|text={text}"


@server.tool()
async def haiku(ctx: Context, topic: str = "the sea", max_tokens: int = 16) -> str:
    """Asks the client's model for a haiku about ``topic``."""
    return await _sample(ctx, types.TextContent(type="text", text=f"A haiku about {topic}."),
                         max_tokens)


@server.tool()
async def picture(ctx: Context) -> str:
    """Asks the client's model about an image."""
    pixel = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    return await _sample(ctx, types.ImageContent(type="image", data=pixel,
                                                 mime_type="image/png"), 16)


if __name__ == "__main__":
    server.run("stdio")
