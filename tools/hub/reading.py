"""Reading a resource and getting a prompt from one connection, on the hub's loop.

Both are requests like a tool call but shorter-lived: no progress, no questions asked,
the server's ``call_timeout`` as their limit. A server that is not connected is started
first, as for a call.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from deskmate.tools.hub.connection import Connection, describe_exception
from deskmate.tools.hub.published import (
    PromptText,
    ResourceContents,
    contents_from_mcp,
    prompt_text_from_mcp,
)
from deskmate.tools.hub.results import ServerUnavailable, ToolCallError, ToolTimeout

if TYPE_CHECKING:
    from mcp import ClientSession


class RequestFailed(ToolCallError):
    """The server answered a resource read or a prompt request with an error."""


async def read_resource(conn: Connection, uri: str, timeout: float) -> ResourceContents:
    session = await _session(conn)
    name = conn.config.name
    try:
        result = await asyncio.wait_for(session.read_resource(uri), timeout)
    except TimeoutError:
        raise ToolTimeout(f"{name} did not send {uri} within {timeout:g} s") from None
    except Exception as exc:
        raise RequestFailed(f"{name} could not read {uri}: {describe_exception(exc)}") from exc
    return contents_from_mcp(name, uri, result)


async def get_prompt(conn: Connection, prompt: str, arguments: dict[str, str],
                     timeout: float) -> PromptText:
    session = await _session(conn)
    name = conn.config.name
    try:
        result = await asyncio.wait_for(session.get_prompt(prompt, arguments), timeout)
    except TimeoutError:
        raise ToolTimeout(f"{name} did not send the prompt {prompt} within {timeout:g} s"
                          ) from None
    except Exception as exc:
        raise RequestFailed(f"{name} could not give the prompt {prompt}: "
                            f"{describe_exception(exc)}") from exc
    return prompt_text_from_mcp(name, prompt, result)


async def _session(conn: Connection) -> ClientSession:
    name = conn.config.name
    if conn.state.status == "disabled":
        raise ServerUnavailable(f"MCP server {name!r} is disabled in the config")
    if conn.session is None:
        state = await conn.start()
        if state.status != "ready" or conn.session is None:
            raise ServerUnavailable(f"MCP server {name!r} is not available: {state.error}")
    return conn.session
