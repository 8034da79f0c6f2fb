"""The host side of the sandbox's tool channel.

Code in the sandbox calls ``git.git_log(max_count=3)``; the worker forwards that here
as ``("tool", {...})``. This is the one way out of the sandbox, so every call is checked
before it leaves: the tool exists (else "did you mean …"), the arguments fit its input
schema (else the signature), the call is not a runaway repeat, and the permission
policy allows it. Each step is reported as an agent event, through the ``CallContext``
the loop hands over for each turn.
"""

from __future__ import annotations

import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.app.agent.blind_delete import blind_delete_error, readers
from deskmate.app.agent.call_args import BridgeError, Refused, binding, name_hint, validate
from deskmate.app.agent.empty_result import empty_note
from deskmate.app.agent.events import (
    AgentEvent,
    ToolApprovalDecided,
    ToolApprovalNeeded,
    ToolCallFinished,
    ToolCallStarted,
)
from deskmate.app.agent.failure_hints import FailureHints
from deskmate.app.agent.header_rows import header_hint
from deskmate.app.agent.overwrite import loss_error, reader_call
from deskmate.app.agent.request import RULED_OUT, ruled_out, tool_verb
from deskmate.app.agent.tool_errors import PATH_WORDS, Tools, character_note
from deskmate.app.agent.tool_news import CallNews
from deskmate.app.agent.turn_record import REPEAT_LIMIT, TurnRecord, unchanged_note
from deskmate.app.agent.value_hints import Repair, call_with, repair
from deskmate.tools.catalog import Catalog
from deskmate.tools.policy import ApprovalRequest, Policy
from deskmate.tools.signatures import Signature, py_identifier, signature
from deskmate.tools.spec import ToolSpec

if TYPE_CHECKING:
    from deskmate.tools.hub.elicitation import Asker
    from deskmate.tools.hub.published import ResourceContents
    from deskmate.tools.hub.results import ToolResult
    from deskmate.tools.search import ToolSearch

WEB_URL = re.compile(r"https?://", re.I)


def new_call_id() -> str:
    """Unique within a session, whatever the bridge: the TUI rebuilds its bridge (resume,
    model switch, server change) while recording into the same session, and the store
    keys tool calls by (session, call id)."""
    return f"call_{uuid.uuid4().hex[:12]}"


def _nothing() -> str:
    return ""


def _ignore(event: AgentEvent) -> None:
    pass


@dataclass(frozen=True)
class CallContext:
    """What the bridge needs of the running turn; the loop hands one over per turn."""

    emit: Callable[[AgentEvent], None] = _ignore  # where tool-call events go
    max_tool_calls: int = 30  # calls that may run this turn
    cancel: threading.Event | None = None  # set: stop the running call
    step: int = 0  # the turn's step, reported with each call
    said: Callable[[], str] = _nothing  # the text of the user's messages so far
    request: str = ""  # this turn's: a step it rules out ("do not commit it") is not run


class ToolBridge:
    # Answers the servers' questions during calls (the app's modal, run's terminal
    # prompt); None: they are declined. Set by build_agent.
    asker: Asker | None = None

    def __init__(self, catalog: Catalog, call: Callable[..., ToolResult], policy: Policy, *,
                 search: ToolSearch | None = None, search_cache: Path | None = None,
                 read: Callable[[str], ResourceContents] | None = None) -> None:
        self.catalog = catalog
        self._read = read  # hub.read_resource(uri): the sandbox's read_resource
        self._call = call  # hub.call(server, tool, arguments, cancel=...) -> ToolResult
        self.policy = policy
        # Where embeddings of the catalog are cached; None: BM25 search only.
        self.search_cache = search_cache
        self.context = CallContext()
        self.turn = TurnRecord()  # what this turn's calls were given and returned
        self._servers: dict[str, str] = {}  # python name -> server name
        self._tools: dict[tuple[str, str], tuple[ToolSpec, Signature]] = {}
        self._search: ToolSearch | None = None
        # The hints after a tool's error; its ``calling``: a hint is making its own call.
        self._hints = FailureHints(self.tools, self.call_json)
        # (server, tool) the user turned off: absent from the catalog, refused by name.
        self.disabled: frozenset[tuple[str, str]] = frozenset()
        # Identical calls are limited per step, not per turn (code mode: TurnRecord).
        self.repeats_per_step = False
        self.retool(catalog)
        self._search = search  # given by the benchmark; else made when first asked

    def retool(self, catalog: Catalog) -> None:
        """Take on another catalog (a server's tools changed): calls, ``tool_help`` and
        ``search_tools`` follow it from now on."""
        self.catalog = catalog
        self._search = None  # rebuilt over the new catalog when first asked
        self._servers = {py_identifier(info.name): info.name for info in catalog.servers()}
        self._tools = {}
        for info in catalog.servers():
            for spec in catalog.tools(info.name):
                sig = signature(spec)
                self._tools[(info.name, sig.name)] = (spec, sig)

    def new_turn(self, context: CallContext = CallContext()) -> None:
        """Forget the previous turn's calls; report and limit this turn's by ``context``."""
        self.turn = TurnRecord(per_step=self.repeats_per_step)
        self.context = context

    def new_step(self, step: int) -> None:
        self.context = replace(self.context, step=step)
        self.turn.new_step()

    def objects(self) -> frozenset[str]:
        """The names the sandbox's code calls tools through (one per server)."""
        return frozenset(self._servers)

    def namespace(self) -> dict[str, Any]:
        servers: dict[str, list[str]] = {py: [] for py in self._servers}
        by_server = {name: py for py, name in self._servers.items()}
        for (server, py_tool) in self._tools:
            servers[by_server[server]].append(py_tool)
        helpers = ["search_tools", "tool_help"] + (["read_resource"] if self._read else [])
        # Call lines for the worker's hints (a tool called bare or misspelled).
        signatures = {f"{by_server[server]}.{py_tool}": sig.call_text()
                      for (server, py_tool), (_, sig) in self._tools.items()}
        return {"servers": servers, "helpers": helpers, "signatures": signatures}

    # ---------------------------------------------------------------- channel

    def __call__(self, kind: str, payload: dict[str, Any]) -> Any:
        if kind == "tool":
            return self.call_tool(payload.get("server", ""), payload.get("tool", ""),
                                  payload.get("args") or [], payload.get("kwargs") or {})
        if kind == "search_tools":
            return self.search_tools(str(payload.get("query", "")), int(payload.get("k", 5)))
        if kind == "tool_help":
            return self.tool_help(str(payload.get("server", "")),
                                  [str(n) for n in payload.get("names") or []])
        if kind == "read_resource":
            return self.read_resource(str(payload.get("uri", "")))
        raise BridgeError(f"unknown request {kind!r}")

    def read_resource(self, uri: str) -> str:
        """A resource's contents as text (binary parts described), for the model's code: a
        ``resource_link`` a tool returned is followed this way. Reading asks no approval:
        it changes nothing."""
        if self._read is None:
            raise BridgeError("no MCP server is connected to read resources from")
        try:
            return self._read(uri).text
        except Exception as exc:  # the hub's ToolCallError family
            raise BridgeError(str(exc)) from exc

    def taking(self, names: Iterable[str]) -> list[str]:
        """The calls (``fetch.fetch(url: str, …)``) of the tools with a parameter of one
        of ``names``."""
        wanted = {name.lower() for name in names}
        return [f"{py_identifier(server)}.{sig.call_text()}"
                for (server, _), (_, sig) in self._tools.items()
                if any(p.original.lower() in wanted for p in sig.params)]

    def named(self, names: Iterable[str]) -> list[str]:
        """The calls of the tools called one of ``names``, in the order of ``names``."""
        return [f"{py_identifier(server)}.{sig.call_text()}" for name in names
                for (server, tool), (_, sig) in self._tools.items() if tool == name]

    def takers(self, name: str) -> list[str]:
        """The calls of the tools, on servers this turn used, with a list or object
        parameter called ``name``, when none of them was called this turn."""
        return self.turn.takers(name, self._tools)

    def tools(self) -> Tools:
        """Every tool by (server, name), with its spec and signature."""
        return self._tools

    def marks_read_only(self) -> bool:
        """Whether any connected tool says it only reads (so the others may change
        things): without such marks, no call can be told to have changed nothing."""
        return any(spec.read_only for spec in self.catalog)

    def search_tools(self, query: str, k: int = 5, *, reading: bool = False,
                     servers: bool = False, leave_out: str = "") -> list[str]:
        """The best ``k`` tools for ``query`` as call lines, from the best 3k when asked
        to reorder: ``reading`` (the request asks for information) puts tools marked
        read-only first (a question's words often match a tool that changes things:
        "the most recent commit" ranks git_commit above git_log); ``servers`` gives each
        server found its best tool first (a request that fetches a page and writes a
        file needs both servers, and one server's tools can fill the whole top k).
        ``leave_out``: a request whose ruled-out steps' tools are not offered."""
        if self._search is None:
            self._search = self._make_search()
        k = max(1, min(k, 20))
        if leave_out and not RULED_OUT.search(leave_out):
            leave_out = ""  # (most requests rule nothing out: the search is as it was)
        hits = self._search.search(query, k=3 * k if reading or servers or leave_out else k)
        if leave_out:
            hits = [hit for hit in hits
                    if not ruled_out(leave_out, tool_verb(hit.server, hit.tool))]
        specs = {(hit.server, hit.tool): self.catalog.get(hit.server, hit.tool)
                 for hit in hits}
        if reading and any(spec.read_only for spec in specs.values()):
            # (a server that marks nothing read-only keeps its order)
            hits = sorted(hits, key=lambda hit: not specs[(hit.server, hit.tool)].read_only)
        if servers and hits:
            # Each server's best, where it scores at least half the best hit's score: a
            # server that only matched a word or two stays in its place.
            floor = hits[0].score / 2
            firsts = {hit.server: hit for hit in reversed(hits) if hit.score >= floor}
            hits = sorted(hits, key=lambda hit: firsts.get(hit.server) is not hit)
        hits = hits[:k]
        lines = []
        for hit in hits:
            spec = self.catalog.get(hit.server, hit.tool)
            sig = signature(spec)
            call = sig.call_text()
            lines.append(f"{py_identifier(hit.server)}.{call} — {sig.summary}")
        return lines

    def _make_search(self) -> ToolSearch:
        """Hybrid (MiniLM + BM25) when the ``search`` extra is installed, else BM25.

        The toolspace benchmark measures recall@5 of 0.96 hybrid against 0.84 for BM25.
        """
        from deskmate.tools.search import DenseUnavailable, ToolSearch

        if self.search_cache is not None:
            try:
                return ToolSearch(self.catalog, dense=True, cache_dir=self.search_cache)
            except DenseUnavailable:
                pass
        return ToolSearch(self.catalog)

    def tool_help(self, server: str, names: list[str]) -> str:
        real = self._server(server)
        tools = [(spec, sig) for (s, _), (spec, sig) in self._tools.items() if s == real]
        if not names:
            return "\n".join(sig.def_line() for _, sig in tools)
        out = []
        for name in names:
            out.append(self._tool(real, name)[1].text())
        return "\n\n".join(out)

    # ---------------------------------------------------------------- calls

    def call_tool(self, server: str, tool: str, args: list[Any],
                  kwargs: dict[str, Any]) -> Any:
        real = self._server(server)
        spec, sig = self._tool(real, tool)
        try:
            return self._invoke(real, spec, sig, self._arguments(real, sig, spec, args, kwargs))
        except BridgeError as exc:
            # Positional arguments bind silently in signature order; a small model that
            # put them in another order repeats the call unless the error shows how. (A
            # call refused for what it would do was bound as meant: its fix is another.)
            if not args or len(sig.params) == 1 or isinstance(exc, Refused):
                raise
            raise BridgeError(f"{exc}\n{binding(server, sig, args, str(exc))}") from exc

    def call_json(self, server: str, tool: str, arguments: dict[str, Any],
                  call_id: str | None = None) -> Any:
        """A call whose arguments use the tool's own (JSON) names — the eager mode, which
        passes the id the call has in the transcript."""
        real = self._server(server)
        spec, sig = self._tool(real, tool)
        if not isinstance(arguments, dict):
            raise BridgeError(f"arguments of {spec.name} must be a JSON object")
        validate(spec, sig, arguments, self._tools, real)
        return self._invoke(real, spec, sig, arguments, call_id)

    def call_quietly(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        """A call the agent makes for the model (a first look at the request's files), as
        the code's calls run (policy, events, the turn's count) but without what follows
        a failure (hints, a repaired call): it only raises BridgeError. A call the policy
        would put to the user is not made for a look."""
        real = self._server(server)
        spec, sig = self._tool(real, tool)
        if self.policy.will_ask(spec):
            raise BridgeError(f"{real}.{spec.name} needs approval; not called for a look")
        validate(spec, sig, arguments, self._tools, real)
        calling, self._hints.calling = self._hints.calling, True
        try:
            return self._invoke(real, spec, sig, arguments)
        finally:
            self._hints.calling = calling

    def _invoke(self, real: str, spec: ToolSpec, sig: Signature,
                arguments: dict[str, Any], call_id: str | None = None,
                repaired: str = "") -> Any:
        """Run one call through the policy and the hub; a refused call that a hint can
        write whole runs once more as written (``_repair``), and ``repaired`` is the note
        that says so."""
        self._refuse_url_as_path(spec, arguments)
        context, turn = self.context, self.turn
        if said := ruled_out(context.request, tool_verb(real, spec.name)):
            # The user's own words: a small model, offered git_commit and told by an
            # error to "call git_commit again", spent its steps on the commit it was
            # told to leave out.
            raise BridgeError(f"{real}.{spec.name} was not run: the request says "
                              f"\"{said}\". Leave that step out and do the rest of what "
                              "it asks.")
        if not spec.read_only and (lost := turn.loses(spec.name, arguments, context.request)):
            # The user's file, not the model's scratch: a write of the part to add would
            # have replaced the rest (overwrite.py).
            raise Refused(loss_error(f"{py_identifier(real)}.{sig.name}", lost,
                                     reader_call(self._tools, real)))
        if not spec.read_only and turn.blind_delete(spec.name, arguments):
            raise Refused(blind_delete_error(f"{py_identifier(real)}.{sig.name}",
                                             readers(self._tools, real)))
        if turn.calls >= context.max_tool_calls:
            turn.limit_reached = True
            raise BridgeError(f"tool call limit reached ({context.max_tool_calls} per turn): "
                              "work with the results you have, or give your final answer")
        if turn.repeated(real, spec.name, arguments):
            raise BridgeError(f"{real}.{spec.name} was already called {REPEAT_LIMIT} times "
                              "with these exact arguments; use the result you already have")
        call_id = call_id or new_call_id()
        context.emit(ToolCallStarted(call_id=call_id, step=context.step, server=real,
                                     tool=spec.name, arguments=arguments))
        request = ApprovalRequest(call_id, spec, arguments)
        if self.policy.will_ask(spec):
            context.emit(ToolApprovalNeeded(call_id=call_id, server=real, tool=spec.name,
                                            arguments=arguments, annotations=spec.annotations))
        verdict = self.policy.decide(request)
        context.emit(ToolApprovalDecided(call_id=call_id, decision=verdict.decision,
                                         decided_by=verdict.decided_by))
        if not verdict.allowed:
            self._finished(call_id, real, spec.name, f"denied: {verdict.reason}", True, 0.0)
            raise BridgeError(f"{real}.{spec.name} was not run: {verdict.reason}")
        turn.ran(real, sig.name, arguments)
        started = time.perf_counter()
        news = CallNews(context.emit, self.asker, call_id, context.cancel)
        try:
            result = self._call(real, spec.name, arguments, cancel=context.cancel,
                                hooks=news.hooks)
        except Exception as exc:  # the hub's ToolCallError family, and anything unexpected
            news.close()
            self._finished(call_id, real, spec.name, str(exc), True,
                           time.perf_counter() - started)
            raise BridgeError(str(exc)) from exc
        news.close()
        self._finished(call_id, real, spec.name, result.text, result.is_error,
                       result.duration_s, result.structured)
        if result.is_error:
            fix = (None if self._hints.calling or repaired
                   else repair(self.tools(), real, spec, sig, arguments, result.text,
                               context.said()))
            failed = f"{real}.{spec.name} failed: {result.text[:2000]}"
            if fix is not None:
                return self._repair(real, spec, sig, fix, failed, result.text)
            raise BridgeError(failed + self._hints.text(real, spec, sig, arguments,
                                                         result.text, turn, context.said()))
        # (a server without annotations: its read_file reads)
        reads = spec.read_only or spec.name.lower().startswith("read")
        unchanged = turn.saw(reads, arguments, result.text)
        if not spec.read_only and not unchanged:  # a write that changed nothing is none
            turn.changed_by(arguments)
        value = result.value()  # decoded from JSON: the sandbox can send it back as is
        if not self._hints.calling:  # (a hint's own call is not the code's to print)
            name = f"{py_identifier(real)}.{sig.name}"
            note = (empty_note(self._tools, real, sig, arguments, value)
                    or character_note(name, arguments)
                    or (unchanged_note(name, unchanged) if unchanged else "")
                    or turn.made_up(name, arguments, context.step, context.said))
            turn.result(name, value, result.text, note, repaired)
        return value

    def _repair(self, real: str, spec: ToolSpec, sig: Signature, fix: Repair,
                failed: str, error: str) -> Any:
        """Run the call a refused one likely meant (value_hints.repair): its result goes
        to the code, which carries on, with a note of what was changed. When it fails as
        well, the first error is raised with the second, whose hints are about the call
        as it was run again."""
        try:
            return self._invoke(real, spec, sig, fix.arguments,
                                repaired=fix.note(real, sig, error))
        except BridgeError as exc:
            raise BridgeError(f"{failed}\nRun again as {call_with(real, sig, fix.arguments)} "
                              f"({fix.param}={fix.given!r} {fix.why}), it failed too: "
                              f"{exc}") from None

    def _finished(self, call_id: str, server: str, tool: str, text: str, is_error: bool,
                  duration: float, structured: Any = None) -> None:
        self.context.emit(ToolCallFinished(call_id=call_id, server=server, tool=tool,
                                           result=text, is_error=is_error, duration_s=duration,
                                           structured=structured))

    def _refuse_url_as_path(self, spec: ToolSpec, arguments: dict[str, Any]) -> None:
        """A web address given where a file tool takes a path cannot succeed (the server
        reads it as a folder of the workspace): say where web pages come from instead."""
        for key, value in arguments.items():
            if not (isinstance(value, str) and WEB_URL.match(value)):
                continue
            if not (key.lower().endswith(PATH_WORDS) or key.lower() in ("source", "destination")):
                continue
            web = next(((server, sig) for (server, _), (_, sig) in self._tools.items()
                        if any(p.name == "url" for p in sig.params)), None)
            how = (f"{py_identifier(web[0])}.{web[1].call_text()}" if web
                   else 'search_tools("fetch a web page")')
            raise BridgeError(f"{spec.name}'s {key!r} takes a path, and {value!r} is a web "
                              f"address: get web pages with {how}")

    def _server(self, name: str) -> str:
        if name in self._servers:
            return self._servers[name]
        if name in self._servers.values():
            return name
        hint = name_hint(name, self._servers)
        raise BridgeError(f"there is no server {name!r}{hint}. "
                          f"Servers: {', '.join(self._servers) or 'none connected'}")

    def _tool(self, server: str, name: str) -> tuple[ToolSpec, Signature]:
        found = self._tools.get((server, name)) or next(
            (v for (s, _), v in self._tools.items() if s == server and v[0].name == name), None)
        # Many servers prefix their tools with their own name (git.git_log): a model that
        # writes git.log means that tool, and nothing else could be meant.
        found = found or self._tools.get((server, f"{py_identifier(server)}_{name}"))
        if found:
            return found
        if any(name in (t, py_identifier(t)) for s, t in self.disabled if s == server):
            raise BridgeError(f"{py_identifier(server)}.{name} is turned off by the user: "
                              "do without it, or ask them to turn it on (F3).")
        elsewhere = [f"{py_identifier(s)}.{sig.call_text()}"
                     for (s, t), (_, sig) in self._tools.items()
                     if s != server and name in (t, sig.name)]
        if elsewhere:
            # git.edit_file: the tool is another server's (its nearest git name, git_log,
            # was what this said before, and the model called that).
            raise BridgeError(f"{py_identifier(server)} has no tool {name!r}: {name} is a "
                              f"tool of another server; call it as {' or '.join(elsewhere)}")
        names = [t for (s, t) in self._tools if s == server]
        hint = name_hint(name, names)
        raise BridgeError(f"{py_identifier(server)} has no tool {name!r}{hint}. "
                          f"Try search_tools({name!r}) or tool_help({py_identifier(server)!r})."
                          + module_hint(py_identifier(server), name))

    def _arguments(self, server: str, sig: Signature, spec: ToolSpec, args: list[Any],
                   kwargs: dict[str, Any]) -> dict[str, Any]:
        if len(args) > len(sig.params):
            raise BridgeError(f"too many positional arguments for {sig.name}\n"
                              f"Signature: {sig.def_line()}")
        named = dict(zip((p.name for p in sig.params), args, strict=False))
        for key in kwargs:
            if key in named:
                raise BridgeError(f"{sig.name} got {key!r} twice\nSignature: {sig.def_line()}")
        named.update(kwargs)
        arguments = sig.to_arguments(named)
        known = {p.original for p in sig.params}
        unknown = [k for k in arguments if k not in known]
        # A tool with declared parameters takes only those; one that declares none
        # takes what its schema allows.
        if unknown and (known or spec.input_schema.get("additionalProperties") is False):
            raise BridgeError(f"{sig.name} has no parameter {unknown[0]!r}"
                              f"{name_hint(unknown[0], [p.name for p in sig.params])}\n"
                              f"Signature: {sig.def_line()}")
        try:
            validate(spec, sig, arguments, self._tools, server)
        except BridgeError as exc:
            # A value the schema refuses that is a CSV header's column name: the rows'
            # loop began at the header (a failure at the server gets it from the hints).
            texts = [self.context.said(), *self.turn.results]
            raise BridgeError(f"{exc}{header_hint(arguments, texts)}") from exc
        return arguments


def module_hint(server: str, name: str) -> str:
    """For ``time.datetime(...)`` or ``time.sleep(1)`` where the server's object is named
    like a module of Python's (``time``): the code meant Python's module, which the
    server's name hides; how to reach it under another name. Only a module this process
    has loaded is looked into: importing one here to see its names would run it (and
    ``this`` or ``antigravity`` do things when imported)."""
    if server not in sys.stdlib_module_names:
        return ""
    here = f" Here {server} is the {server} server, not Python's {server} module"
    if hasattr(sys.modules.get(server), name):
        # (an ``import time`` in a cell binds the server's object, whatever its ``as``)
        return (f"{here}: for Python's {server}.{name} write import importlib; py_{server} = "
                f"importlib.import_module({server!r}) and call py_{server}.{name}.")
    if name in sys.stdlib_module_names:
        return f"{here}; {name} is a module of Python's own: import {name} and use it."
    return ""
