"""What the user types that reaches MCP servers rather than the model: ``/server:prompt
arg=value`` (a server's prompt, got and sent as the message) and ``@server:uri`` (a
resource, read and attached to the message). The chat and ``deskmate run`` both go
through ``expand``; the chat also completes what is typed from the known names
(``suggest``) and asks for a prompt's missing arguments (``prompt_call``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from deskmate.tools.hub.connection import ServerState
from deskmate.tools.hub.published import (
    PromptSpec,
    PromptText,
    ResourceContents,
    ResourceSpec,
    TemplateSpec,
)
from deskmate.tools.hub.results import ToolCallError
from deskmate.tools.suggest import did_you_mean

RESOURCE_CHARS = 8000  # of one attached resource; the rest is cut, and the cut said

# "/server:prompt" then arguments; a server or prompt name may hold "-" and ".".
_PROMPT = re.compile(r"/([\w.-]+):([\w.-]+)(?:\s+(.*))?", re.S)
# "@server:uri", at the start or after white space (so "me@host:port" is not one).
_MENTION = re.compile(r"(?<!\S)@([\w.-]+):(\S+)")


class InputError(ValueError):
    """A prompt command or a mention that cannot be used; the message says the fix."""


@runtime_checkable
class Reads(Protocol):
    """What ``expand`` needs of the hub."""

    def states(self) -> list[ServerState]: ...

    def prompts(self) -> list[PromptSpec]: ...

    def get_prompt(self, server: str, name: str,
                   arguments: dict[str, str] | None = None) -> PromptText: ...

    def read_resource(self, uri: str, server: str | None = None) -> ResourceContents: ...

    def resources(self) -> list[ResourceSpec]: ...

    def templates(self) -> list[TemplateSpec]: ...


@dataclass(frozen=True)
class PromptCall:
    """A typed ``/server:prompt``: the prompt and the arguments given so far."""

    spec: PromptSpec
    arguments: dict[str, str] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        return [a.name for a in self.spec.missing(self.arguments)]

    def text(self) -> str:
        """The command as it would be typed, with every argument given."""
        args = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.arguments.items() if v)
        return f"/{self.spec.server}:{self.spec.name}" + (f" {args}" if args else "")


def prompt_call(text: str, prompts: Sequence[PromptSpec],
                servers: Iterable[str]) -> PromptCall | None:
    """The prompt command ``text`` is: None when it names none of ``servers`` (then it is
    a message: ``/usr:bin …``); InputError for a prompt the server does not have, or an
    argument the prompt does not take."""
    match = _PROMPT.fullmatch(text.strip())
    if match is None or match.group(1) not in set(servers):
        return None
    server, name, rest = match.group(1), match.group(2), match.group(3) or ""
    of_server = [p for p in prompts if p.server == server]
    if not of_server:
        raise InputError(f"{server} has no prompts")
    spec = next((p for p in of_server if p.name == name), None)
    if spec is None:
        names = [p.name for p in of_server]
        hint = did_you_mean(name, names)
        raise InputError(f"{server} has no prompt {name!r}" + (f" ({hint})" if hint else "")
                         + f"; its prompts: {', '.join(names)}")
    return PromptCall(spec, _arguments(spec, rest))


def _arguments(spec: PromptSpec, rest: str) -> dict[str, str]:
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise InputError(f"/{spec.server}:{spec.name}: {exc} (quote values with spaces: "
                         "name=\"two words\")") from None
    known = [a.name for a in spec.arguments]
    given: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:  # a bare value: the next argument not given yet
            free = [k for k in known if k not in given]
            if not free:
                raise InputError(f"/{spec.server}:{spec.name} takes no more arguments: "
                                 f"{word!r} is one too many")
            key, value = free[0], word
        elif key not in known:
            raise InputError(f"/{spec.server}:{spec.name} has no argument {key!r}; "
                             + (f"it takes {', '.join(known)}" if known else "it takes none"))
        given[key] = value
    return given


def mentions(text: str, servers: Iterable[str]) -> list[tuple[str, str]]:
    """The ``(server, uri)`` of each ``@server:uri`` whose server is one of ``servers``."""
    known = set(servers)
    found = [(m.group(1), m.group(2).rstrip(".,;:!?)")) for m in _MENTION.finditer(text)]
    return list(dict.fromkeys((s, u) for s, u in found if s in known))


def expand(text: str, hub: Reads, servers: Iterable[str]) -> str:
    """What the model gets for ``text``: a prompt command becomes the prompt's text, and
    each mentioned resource is attached after the message. Blocking (server requests)."""
    servers = list(servers)
    if (call := prompt_call(text, hub.prompts(), servers)) is not None:
        if call.missing:
            raise InputError(f"/{call.spec.server}:{call.spec.name} needs "
                             + ", ".join(f"{m}=…" for m in call.missing))
        try:
            text = hub.get_prompt(call.spec.server, call.spec.name, call.arguments).text
        except ToolCallError as exc:  # the server refused or is gone: said before the turn
            raise InputError(str(exc)) from exc
    attached = [_attachment(hub, server, uri) for server, uri in mentions(text, servers)]
    return "\n\n".join([text, *attached])


def _attachment(hub: Reads, server: str, uri: str) -> str:
    try:
        body = hub.read_resource(uri, server).text
    except Exception as exc:  # the hub's ToolCallError family: the model is told, as the user
        return f"Resource @{server}:{uri} could not be read: {exc}"
    if len(body) > RESOURCE_CHARS:
        body = (body[:RESOURCE_CHARS]
                + f"\n[… cut: {len(body) - RESOURCE_CHARS:,} more characters]")
    return f"Resource @{server}:{uri}:\n```\n{body}\n```"


def completions(hub: Reads) -> list[str]:
    """What ``suggest`` completes: each resource as ``@server:uri``, each template up to
    its first variable, each prompt as ``/server:prompt``."""
    found = [f"@{r.server}:{r.uri}" for r in hub.resources()]
    found += [f"@{t.server}:{t.uri_template.split('{')[0]}" for t in hub.templates()]
    return found + [f"/{p.server}:{p.name}" for p in hub.prompts()]


def suggest(before: str, candidates: Iterable[str]) -> str:
    """The rest of the word being typed at the end of ``before``, when one candidate (an
    ``@server:uri`` or a ``/server:prompt``) starts with it; else ""."""
    word = re.split(r"\s", before)[-1]
    if len(word) < 2 or word[0] not in "@/":
        return ""
    if word[0] == "/" and before.strip() != word:
        return ""  # a prompt command is the whole message
    matching = sorted(c for c in candidates if c.startswith(word) and c != word)
    if not matching:
        return ""
    common = matching[0]
    for other in matching[1:]:  # the part all matches share, so Right never over-commits
        while not other.startswith(common):
            common = common[:-1]
    return common[len(word):]
