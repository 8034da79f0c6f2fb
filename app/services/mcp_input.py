"""What the user types that is expanded before the model reads it: ``/server:prompt
arg=value`` (a server's prompt, got and sent as the message), ``@server:uri`` (a
resource, read and attached to the message) and ``@path`` (a local file's text,
attached). The chat and ``deskmate run`` both go through ``expand``; the chat also
completes what is typed from the known names (``suggest``) and asks for a prompt's
missing arguments (``prompt_call``).

``@path`` starts with ``/``, ``./``, ``../`` or ``~/`` (``@notes.txt`` is a word, and
``@server:uri`` names a server): attaching a file is the user's own act, done here on
the user's behalf, not a read by the model's sandbox.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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
FILE_CHARS = 20000  # of one attached file; the rest is cut, and the cut said
_SNIFF = 8192  # bytes looked at for a NUL: a file with one is binary, not attached

# "/server:prompt" then arguments; a server or prompt name may hold "-" and ".".
_PROMPT = re.compile(r"/([\w.-]+):([\w.-]+)(?:\s+(.*))?", re.S)
# "@server:uri", at the start or after white space (so "me@host:port" is not one).
_MENTION = re.compile(r"(?<!\S)@([\w.-]+):(\S+)")
# "@/abs", "@./rel", "@../rel", "@~/home": a local file, also at the start or after space.
_PATH = re.compile(r"(?<!\S)@((?:~|\.{1,2})?/\S+)")
_TRAILING = ".,;:!?)"  # punctuation after a mention is not part of it


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
    found = [(m.group(1), m.group(2).rstrip(_TRAILING)) for m in _MENTION.finditer(text)]
    return list(dict.fromkeys((s, u) for s, u in found if s in known))


@dataclass(frozen=True)
class FileAttachment:
    """A local file named by ``@path``, read for the model."""

    typed: str  # as typed after the @
    path: Path  # resolved
    size: int  # bytes on disk
    text: str  # what is attached ("" for a binary file)
    note: str = ""  # why it is not all there: cut, or binary

    def for_model(self) -> str:
        if not self.text:
            return f"File @{self.typed}: {self.note}"
        fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", self.text)),
                                     default=0))
        return (f"File @{self.typed} ({self.path}):\n{fence}\n{self.text}\n{fence}"
                + (f"\n[{self.note}]" if self.note else ""))


def path_mentions(text: str) -> list[str]:
    """Each ``@path`` in ``text``, as typed (without the @), once."""
    return list(dict.fromkeys(m.group(1).rstrip(_TRAILING) for m in _PATH.finditer(text)))


def read_file(typed: str, limit: int = FILE_CHARS) -> FileAttachment:
    """The file ``@typed`` names, its text cut at ``limit`` characters; ``InputError``
    when it is missing, a folder or unreadable."""
    path = Path(typed).expanduser().absolute()
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise InputError(f"@{typed} is a folder: attach its files one by one (@{typed}"
                             f"{'' if typed.endswith('/') else '/'}NAME)")
        with path.open("rb") as file:
            raw = file.read(limit * 4 + 1)  # UTF-8 has at most 4 bytes a character
    except FileNotFoundError:
        raise InputError(f"@{typed}: no such file ({path}); write the path as /abs, "
                         "./relative or ~/home") from None
    except OSError as exc:
        raise InputError(f"@{typed} cannot be read: {exc.strerror or exc}") from None
    if b"\0" in raw[:_SNIFF]:
        return FileAttachment(typed, path, size, "", f"a binary file ({size:,} bytes), "
                              "not attached: only text files are")
    text = raw.decode("utf-8", errors="replace")
    if len(text) <= limit and len(raw) == size:
        return FileAttachment(typed, path, size, text)
    return FileAttachment(typed, path, size, text[:limit],
                          f"cut: the first {limit:,} characters of {size:,} bytes")


def expand(text: str, hub: Reads | None, servers: Iterable[str]) -> str:
    """What the model gets for ``text``: a prompt command becomes the prompt's text, and
    each mentioned resource, then each ``@path`` file, is attached after the message.
    Blocking (server requests, file reads). With no ``hub``, only files are attached."""
    servers = list(servers)
    files = [read_file(typed) for typed in path_mentions(text)]  # as typed, not expanded
    if hub is None:
        return "\n\n".join([text, *(f.for_model() for f in files)])
    if (call := prompt_call(text, hub.prompts(), servers)) is not None:
        if call.missing:
            raise InputError(f"/{call.spec.server}:{call.spec.name} needs "
                             + ", ".join(f"{m}=…" for m in call.missing))
        try:
            text = hub.get_prompt(call.spec.server, call.spec.name, call.arguments).text
        except ToolCallError as exc:  # the server refused or is gone: said before the turn
            raise InputError(str(exc)) from exc
    attached = [_attachment(hub, server, uri) for server, uri in mentions(text, servers)]
    return "\n\n".join([text, *attached, *(f.for_model() for f in files)])


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
