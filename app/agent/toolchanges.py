"""Tools that change during a session: the catalog the agent is built on, and the note
that tells the model what changed.

A server that sends ``notifications/tools/list_changed`` is listed again by the hub at
once; the agent takes the new list on between turns (``factory.follow_tools``): calls,
``tool_help`` and ``search_tools`` use it, and so does the index of a fresh transcript's
system prompt. A transcript already under way keeps its system prompt (the KV cache and
the recorded session are the transcript as the model saw it), so the next user message
starts with ``describe_changes``' note instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from deskmate.tools.catalog import Catalog
from deskmate.tools.hub.connection import ServerState
from deskmate.tools.signatures import py_identifier
from deskmate.tools.spec import ToolSpec

NOTE_NAMES = 12  # tools named per server and kind of change; more are counted


def catalog_of(tools: Iterable[ToolSpec], states: Iterable[ServerState]) -> Catalog:
    """The catalog over live servers: their tools, each summarized by its instructions."""
    tools = list(tools)
    with_tools = {spec.server for spec in tools}
    summaries = {s.name: s.instructions for s in states
                 if s.name in with_tools and s.instructions}
    return Catalog.from_specs(tools, summaries)


def describe_changes(old: Catalog, new: Catalog) -> str:
    """One line per server whose tools changed, for the model; "" when none did."""
    before = {(s.server, s.name): s for s in old}
    after = {(s.server, s.name): s for s in new}
    servers = dict.fromkeys(server for server, _ in [*before, *after])
    lines = []
    for server in servers:
        added = [n for (s, n) in after if s == server and (s, n) not in before]
        removed = [n for (s, n) in before if s == server and (s, n) not in after]
        changed = [n for (s, n) in after if s == server and (s, n) in before
                   and before[(s, n)] != after[(s, n)]]
        parts = [f"{what}: {_names(names)}" for what, names in
                 (("new", added), ("gone", removed), ("changed", changed)) if names]
        if parts:
            lines.append(f"- {py_identifier(server)}: {'; '.join(parts)}")
    if not lines:
        return ""
    return "\n".join(["[The tools changed since the last message (tool_help shows the new "
                      "signatures):", *lines, "]"])


def _names(names: list[str]) -> str:
    shown = ", ".join(py_identifier(n) for n in names[:NOTE_NAMES])
    return shown + (f" and {len(names) - NOTE_NAMES} more" if len(names) > NOTE_NAMES else "")
