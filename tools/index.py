"""The server index in the system prompt, kept within a token budget at any catalog size.

When the whole catalog is small (a user's few servers), every tool is listed with its
signature and summary if that fits ``signatures`` tokens: nothing is left to load, and a
small model calls the right tool with the right argument names instead of guessing from
a name or skipping the search (issue 16). Otherwise four tiers, the first that fits the
budget:
1. every server with its one-line summary and its tool names;
2. as many servers as fit that way (smallest first), the rest on one compact line of
   names, tool counts and summaries;
3. the same with the compact line cut to names and tool counts;
4. the names and counts of the first servers that fit, then how many servers and tools
   are left, and the hint that ``search_tools`` reaches them all.
The fourth tier has a fixed floor (the header, one count line and the hint), so the index
stays within its budget however many servers are connected: with 2,000 tools over 129
servers (shared/toolspace scaled) the first three tiers alone took 1,737 tokens of
SmolLM2's tokenizer against the agent's 600; with the fourth, 597 (benchmarks/RESULTS.md,
issue 16).
"""

from __future__ import annotations

from collections.abc import Callable

from deskmate.tools.catalog import Catalog, ServerInfo
from deskmate.tools.signatures import py_identifier, signature

HEADER = "Servers (call tool_help(server, name) for a tool's signature):"
# The first line of a listing with every signature. The head start still follows the
# request then: without it the 1.5B answered from a guess at once (0d519ab).
SIGNATURES_HEADER = "Tools (every tool of each server, called as server.tool(name=value)):"
SEARCH_HINT = "Tool names are not all listed: use search_tools(...) to find tools."
MORE = "Other servers (tool count):"

Count = Callable[[str], int]


def build_index(catalog: Catalog, count_tokens: Count, budget: int = 600,
                signatures: int = 0) -> str:
    """The index text for ``catalog``: every signature when that fits ``signatures``
    tokens, else at most ``budget`` tokens when the budget is above the fixed floor of
    the last tier."""
    servers = catalog.servers()
    if not servers:
        return ""
    if signatures > 0:
        listing = signature_listing(catalog)
        if count_tokens(listing) <= signatures:
            return listing
    full = {info.name: _line(info, [py_identifier(t.name) for t in catalog.tools(info.name)])
            for info in servers}
    text = "\n".join([HEADER, *full.values()])
    if count_tokens(text) <= budget:
        return text
    for summaries in (True, False):
        if count_tokens(_render(servers, full, set(), summaries)) <= budget:
            return _fill(servers, full, summaries, count_tokens, budget)
    return _counted(servers, count_tokens, budget)


def signature_listing(catalog: Catalog) -> str:
    """Each server with its tools' one-line signatures and summaries."""
    lines = [SIGNATURES_HEADER]
    for info in catalog.servers():
        head = f"- {py_identifier(info.name)}"
        lines.append(f"{head} — {info.summary}:" if info.summary else f"{head}:")
        for spec in catalog.tools(info.name):
            sig = signature(spec)
            # What a call returns, where the tool declares it: a small model otherwise
            # guesses the shape (a dict where it gets text, or the reverse).
            returns = f" -> {sig.returns}" if sig.returns != "Any" else ""
            lines.append(f"  {sig.call_text()}{returns}"
                         + (f" — {sig.summary}" if sig.summary else ""))
    return "\n".join(lines)


def shows_signatures(index: str) -> bool:
    return index.startswith(SIGNATURES_HEADER)


def _fill(servers: list[ServerInfo], full: dict[str, str], summaries: bool,
          count_tokens: Count, budget: int) -> str:
    # Names for as many servers as fit (smallest first keeps the most servers named),
    # the rest on the compact line.
    named: set[str] = set()
    for info in sorted(servers, key=lambda s: len(full[s.name])):
        if count_tokens(_render(servers, full, named | {info.name}, summaries)) > budget:
            break
        named.add(info.name)
    return _render(servers, full, named, summaries)


def _counted(servers: list[ServerInfo], count_tokens: Count, budget: int) -> str:
    # The longest prefix of servers whose names fit; more names never take fewer tokens,
    # so a binary search finds it in log(n) counts however large the catalog.
    low, high = 0, len(servers) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(_count_text(servers, middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return _count_text(servers, low)


def _count_text(servers: list[ServerInfo], shown: int) -> str:
    rest = servers[shown:]
    tools = sum(info.tool_count for info in rest)
    left = f"{len(rest)} {'more ' if shown else ''}servers ({tools} tools)"
    names = [_short(info, summary=False) for info in servers[:shown]]
    return "\n".join([HEADER, f"{MORE} {'; '.join([*names, left])}", SEARCH_HINT])


def _render(servers: list[ServerInfo], full: dict[str, str], named: set[str],
            summaries: bool) -> str:
    rest = [_short(info, summaries) for info in servers if info.name not in named]
    lines = [HEADER, *(full[info.name] for info in servers if info.name in named)]
    if rest:
        lines.append(f"{MORE} {'; '.join(rest)}")
    return "\n".join([*lines, SEARCH_HINT])


def _line(info: ServerInfo, names: list[str]) -> str:
    head = f"- {py_identifier(info.name)}"
    if info.summary:
        head += f" — {info.summary}"
    return f"{head}: {', '.join(names)}"


def _short(info: ServerInfo, summary: bool) -> str:
    text = f"{py_identifier(info.name)} ({info.tool_count})"
    return f"{text} — {info.summary.rstrip('.;')}" if summary and info.summary else text
