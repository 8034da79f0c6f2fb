"""The server index in the system prompt, kept within a token budget.

Servers with their one-line summary and tool names while that fits; past the budget,
the remaining servers share one compact line of names and tool counts (the model then
finds their tools with ``search_tools``). Every server is always named, so the index can
only outgrow its budget by the length of that line: with the 70 servers of
shared/toolspace it is ~800 tokens of SmolLM2's tokenizer, where one line per server
took ~1,100 (benchmarks/toolspace.py).
"""

from __future__ import annotations

from collections.abc import Callable

from deskmate.tools.catalog import Catalog, ServerInfo
from deskmate.tools.signatures import py_identifier

HEADER = "Servers (call tool_help(server, name) for a tool's signature):"
SEARCH_HINT = "Tool names are not all listed: use search_tools(...) to find tools."
MORE = "Other servers (tool count):"


def build_index(catalog: Catalog, count_tokens: Callable[[str], int], budget: int = 600) -> str:
    """The index text for ``catalog``, at most ``budget`` tokens when it can be."""
    servers = catalog.servers()
    if not servers:
        return ""
    full = {info.name: _line(info, [py_identifier(t.name) for t in catalog.tools(info.name)])
            for info in servers}
    text = "\n".join([HEADER, *full.values()])
    if count_tokens(text) <= budget:
        return text
    # Names for as many servers as fit (smallest first keeps the most servers named),
    # the rest on the compact line.
    named: set[str] = set()
    for info in sorted(servers, key=lambda s: len(full[s.name])):
        trial = _render(servers, full, named | {info.name})
        if count_tokens(trial) > budget:
            break
        named.add(info.name)
    return _render(servers, full, named)


def _render(servers: list[ServerInfo], full: dict[str, str], named: set[str]) -> str:
    rest = [_short(info) for info in servers if info.name not in named]
    lines = [HEADER, *(full[info.name] for info in servers if info.name in named)]
    if rest:
        lines.append(f"{MORE} {'; '.join(rest)}")
    return "\n".join([*lines, SEARCH_HINT])


def _line(info: ServerInfo, names: list[str]) -> str:
    head = f"- {py_identifier(info.name)}"
    if info.summary:
        head += f" — {info.summary}"
    return f"{head}: {', '.join(names)}"


def _short(info: ServerInfo) -> str:
    text = f"{py_identifier(info.name)} ({info.tool_count})"
    return f"{text} — {info.summary.rstrip('.;')}" if info.summary else text
