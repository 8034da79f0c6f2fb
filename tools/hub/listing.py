"""Listing what a server publishes, every page of it, and again when it says it changed.

At connect the connection lists tools, and prompts, resources and resource templates when
the server declares them. A ``notifications/{tools,prompts,resources}/list_changed``
makes it list that kind again (``changed_kind`` reads the notification); the new state
reaches the hub's ``on_change`` like any other, and the agent takes the new tools on
between turns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from deskmate.tools.hub.published import (
    Published,
    prompt_from_mcp,
    resource_from_mcp,
    template_from_mcp,
    tool_from_mcp,
)
from deskmate.tools.spec import ToolSpec

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import ServerCapabilities

Kind = Literal["tools", "prompts", "resources"]
MAX_PAGES = 1000  # a server that hands back the same cursor forever stops here


async def list_all(fetch: Callable[[Any], Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated MCP list: ``fetch(params)`` returns one page."""
    from mcp.types import PaginatedRequestParams

    items: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await fetch(PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(page, field) or [])
        cursor = page.next_cursor
        if not cursor:
            break
    return items


async def list_published(session: ClientSession, server: str,
                         caps: ServerCapabilities | None) -> Published:
    """Tools (always), and what else the server's capabilities say it has."""
    published = Published(tools=await _tools(session, server))
    for kind in ("prompts", "resources"):
        if caps is not None and getattr(caps, kind, None):
            published = await relist(session, server, kind, published)
    return published


async def relist(session: ClientSession, server: str, kind: Kind,
                 published: Published) -> Published:
    """``published`` with one kind listed again. Prompts and resources are extras: a
    server that fails to list them keeps its tools usable (and lists none)."""
    if kind == "tools":
        return replace(published, tools=await _tools(session, server))
    if kind == "prompts":
        prompts = await _extras(session.list_prompts, "prompts")
        return replace(published, prompts=tuple(prompt_from_mcp(server, p) for p in prompts))
    resources = await _extras(session.list_resources, "resources")
    templates = await _extras(session.list_resource_templates, "resource_templates")
    return replace(published, resources=tuple(resource_from_mcp(server, r) for r in resources),
                   templates=tuple(template_from_mcp(server, t) for t in templates))


async def _extras(method: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    try:
        return await list_all(lambda p: method(params=p), field)
    except Exception:  # the server's own error: nothing of that kind to offer
        return []


async def _tools(session: ClientSession, server: str) -> tuple[ToolSpec, ...]:
    tools = await list_all(lambda p: session.list_tools(params=p), "tools")
    return tuple(tool_from_mcp(server, t) for t in tools)


def changed_kind(message: object) -> Kind | None:
    """The kind a ``notifications/*/list_changed`` is about; None for other messages."""
    from mcp import types

    if isinstance(message, types.ToolListChangedNotification):
        return "tools"
    if isinstance(message, types.PromptListChangedNotification):
        return "prompts"
    if isinstance(message, types.ResourceListChangedNotification):
        return "resources"
    return None
