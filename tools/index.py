"""The server index in the system prompt, kept within a token budget.

Servers with their one-line summary and tool names while that fits; past the budget,
servers with their tool counts only (the model then finds tools with ``search_tools``).
Context stays flat as the toolspace grows: the index never outgrows its budget.
"""

from __future__ import annotations

from collections.abc import Callable

from tools.catalog import Catalog
from tools.signatures import py_identifier, signature

HEADER = "Servers (call tool_help(server, name) for a tool's signature):"
SEARCH_HINT = "Tool names are not all listed: use search_tools(...) to find tools."


def build_index(catalog: Catalog, count_tokens: Callable[[str], int], budget: int = 600) -> str:
    """The index text for ``catalog``, at most ``budget`` tokens when it can be."""
    servers = catalog.servers()
    if not servers:
        return ""
    full = [_line(info.name, info.summary, info.tool_count,
                  [signature(t).name for t in catalog.tools(info.name)]) for info in servers]
    text = "\n".join([HEADER, *full])
    if count_tokens(text) <= budget:
        return text
    # Names for as many servers as fit (smallest first keeps the most servers named),
    # counts only for the rest.
    short = {info.name: _line(info.name, info.summary, info.tool_count, None)
             for info in servers}
    lines = dict(short)
    used = count_tokens("\n".join([HEADER, SEARCH_HINT, *lines.values()]))
    for info, line in sorted(zip(servers, full, strict=True), key=lambda p: len(p[1])):
        extra = count_tokens(line) - count_tokens(short[info.name])
        if used + extra > budget:
            break
        lines[info.name] = line
        used += extra
    return "\n".join([HEADER, *(lines[info.name] for info in servers), SEARCH_HINT])


def _line(server: str, summary: str, count: int, names: list[str] | None) -> str:
    head = f"- {py_identifier(server)}"
    if summary:
        head += f" — {summary}"
    if names is None:
        return f"{head} ({count} tools)"
    return f"{head}: {', '.join(names)}"
