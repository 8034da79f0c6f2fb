"""A real MCP server (mcp SDK) whose tools use the client: `asks.py` (stdio).

Tools: whoami (the client's name, version and capabilities), book (asks for a date and
a party size with ``ctx.elicit`` and a pydantic model, as SDK servers do), count
(reports progress with a message at each step).
"""

import asyncio

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

server = MCPServer("asks")


class Booking(BaseModel):
    date: str = Field(description="The day, as YYYY-MM-DD")
    people: int = Field(default=2, ge=1, le=12, description="How many people")
    terrace: bool = Field(default=False, description="A table outside")


@server.tool()
def whoami(ctx: Context) -> str:
    """Who the client says it is, and what it declared."""
    params = ctx.session.client_params
    caps = ctx.client_capabilities
    declared = sorted(k for k, v in (caps.model_dump() if caps else {}).items() if v)
    info = params.client_info if params else None
    return f"{info.name if info else '?'} {info.version if info else '?'}: {', '.join(declared)}"


@server.tool()
async def book(ctx: Context) -> str:
    """Book a table: asks the user for the details."""
    result = await ctx.elicit("Which day, and for how many?", Booking)
    if result.action != "accept":
        return f"not booked ({result.action})"
    booking = result.data
    return f"booked {booking.date} for {booking.people}" + (
        " on the terrace" if booking.terrace else "")


@server.tool()
async def count(ctx: Context, steps: int = 3, pause: float = 0.2) -> str:
    """Count to `steps`, reporting progress at each."""
    for step in range(1, steps + 1):
        await asyncio.sleep(pause)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted to {steps}"


if __name__ == "__main__":
    server.run("stdio")
