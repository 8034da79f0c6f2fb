"""One MCP server connection, living as a task on the hub's event loop.

The mcp SDK's transports and sessions are async context managers that must be entered
and left in the same task, so each connection is one long-lived task that holds them
open until asked to stop. Tool calls from other tasks use the session meanwhile.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterable, Callable
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from deskmate.tools.hub.callbacks import ClientCallbacks
from deskmate.tools.hub.listing import Kind, changed_kind, list_published, relist
from deskmate.tools.hub.published import PromptSpec, Published, ResourceSpec, TemplateSpec
from deskmate.tools.hub.servers import ServerConfig, child_environment, expand
from deskmate.tools.spec import ToolSpec

if TYPE_CHECKING:  # the mcp SDK is imported when the first server starts
    from anyio.streams.memory import MemoryObjectReceiveStream
    from mcp import ClientSession
    from mcp.shared.message import SessionMessage

    from deskmate.tools.hub.oauth import OAuthSetup, ServerAuth

    ServerMessage: TypeAlias = SessionMessage | Exception  # what a transport reads

Status = Literal["stopped", "starting", "ready", "failed", "disabled", "needs-sign-in"]
RUN_MARK = "----- deskmate started this server at "


@dataclass(frozen=True)
class ServerState:
    """A snapshot of one server, safe to hand to another thread."""

    name: str
    status: Status
    error: str = ""
    tools: tuple[ToolSpec, ...] = ()
    prompts: tuple[str, ...] = ()  # names
    resources: tuple[str, ...] = ()  # URIs
    server_info: str = ""
    instructions: str = ""  # what the server says about itself at initialize
    prompt_specs: tuple[PromptSpec, ...] = ()
    resource_specs: tuple[ResourceSpec, ...] = ()
    templates: tuple[TemplateSpec, ...] = ()
    connect_s: float = 0.0
    describe: str = ""
    log_path: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Connection:
    def __init__(self, config: ServerConfig, log_path: Path,
                 on_change: Callable[[ServerState], None], *,
                 oauth: OAuthSetup | None = None) -> None:
        self.config = config
        self.oauth = oauth  # where HTTP/SSE sign-ins are kept, who answers a new one
        self.auth: ServerAuth | None = None  # this run's OAuth, to tell a 401 from a failure
        self.log_path = log_path
        self._on_change = on_change
        self.session: ClientSession | None = None  # while the server is ready
        self.task: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[ServerState] | None = None
        self.ready = asyncio.Event()
        self.stop = asyncio.Event()
        self.lost = asyncio.Event()  # the server's output ended: its process exited
        self._relists: set[asyncio.Task[None]] = set()  # re-listings after list_changed
        # One at a time: each starts from the state the one before it left.
        self._relist_lock = asyncio.Lock()
        self.last_stream_error = ""
        # Client info, elicitation and roots for the session; the calls in flight.
        self.callbacks = ClientCallbacks(config)
        self.state = ServerState(config.name, "disabled" if not config.enabled else "stopped",
                                 describe=config.describe(), log_path=str(log_path))

    def set(self, **changes: Any) -> None:
        self.state = replace(self.state, **changes)
        self._on_change(self.state)

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> ServerState:
        """Connect (or reconnect) and wait until ready, failed, or timed out.

        Callers that come while a start is under way wait for that one: a second start
        would shut the first down under the callers waiting on it.
        """
        if self._starting is None or self._starting.done():
            self._starting = asyncio.create_task(self._start())
        # Shielded: one waiter being cancelled must not cancel the start for the others.
        return await asyncio.shield(self._starting)

    async def _start(self) -> ServerState:
        await self.shutdown()
        self.ready, self.stop, self.lost = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self.set(status="starting", error="", tools=(), connect_s=0.0)
        self.task = asyncio.create_task(self._run(), name=f"mcp:{self.config.name}")
        waiter = asyncio.create_task(self.ready.wait())
        done, _ = await asyncio.wait({waiter, self.task}, timeout=self.config.startup_timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if not done:
            await self.shutdown()
            self.set(status="failed", error=self._explain(
                f"did not finish connecting within {self.config.startup_timeout:g} s"))
        return self.state

    async def shutdown(self) -> None:
        task, self.task = self.task, None
        if task is None or task.done():
            return
        self.stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=8)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            with suppress(BaseException):
                await task
        except Exception:
            pass

    async def alive(self) -> bool:
        """Whether the server still answers a ping."""
        session = self.session
        if session is None:
            return False
        try:
            await asyncio.wait_for(session.send_ping(), 2)
            return True
        except Exception:  # any failure means the connection is gone
            return False

    async def mark_crashed(self, what: str) -> None:
        """Close what is left of a connection whose server died; the next call restarts it."""
        await self.shutdown()
        self.set(status="failed", error=self._explain(what))

    async def lost_sign_in(self) -> bool:
        """Whether this run's sign-in ran out (a refresh was refused): then the server is
        stopped and its state says to sign in again."""
        if self.auth is None or not self.auth.sign_in_required:
            return False
        from deskmate.tools.hub.oauth import sign_in_hint

        await self.shutdown()
        self.set(status="needs-sign-in", error=sign_in_hint(self.config.name))
        return True

    async def _run(self) -> None:
        started = time.perf_counter()
        try:
            async with AsyncExitStack() as stack:
                session = await self._open(stack)
                init = await session.initialize()
                published = await list_published(session, self.config.name, init.capabilities)
                info = init.server_info
                self.session = session
                self.set(status="ready", **_published_state(published),
                         server_info=f"{info.name} {info.version}" if info else "",
                         instructions=init.instructions or "",
                         connect_s=time.perf_counter() - started)
                self.ready.set()
                await self.stop.wait()
                self.session = None
            if self.lost.is_set():
                self.set(status="failed", error=self._explain(
                    "the server process exited (it restarts on the next call)"))
            else:
                self.set(status="stopped")
        except asyncio.CancelledError:
            self.set(status="stopped" if self.stop.is_set() else "failed",
                     error="" if self.stop.is_set() else self.state.error)
            raise
        except BaseException as exc:
            if self.auth is not None and self.auth.sign_in_required:
                from deskmate.tools.hub.oauth import sign_in_hint

                self.set(status="needs-sign-in", error=sign_in_hint(self.config.name))
                return
            what = describe_exception(exc)
            if "Connection closed" in what:
                what = "the server process exited before completing the MCP handshake"
            self.set(status="failed", error=self._explain(what))
        finally:
            self.session = None

    async def _open(self, stack: AsyncExitStack) -> ClientSession:
        from mcp import ClientSession

        cfg = self.config
        if cfg.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=expand(cfg.command), args=[expand(a) for a in cfg.args],
                env=child_environment(cfg), cwd=expand(cfg.cwd) or None)
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            errlog = stack.enter_context(self.log_path.open("a", encoding="utf-8"))
            # The log keeps every run; this line is where the current run's stderr begins.
            errlog.write(f"{RUN_MARK}{datetime.now().isoformat(timespec='seconds')}: "
                         f"{cfg.describe()}\n")
            errlog.flush()
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            read = await self._watch(stack, read)
        else:
            from deskmate.tools.hub.oauth import open_auth

            headers = {k: expand(v) for k, v in cfg.headers.items()}
            self.auth = auth = await open_auth(cfg, self.oauth, stack)
            if cfg.transport == "sse":
                from mcp.client.sse import sse_client

                read, write = await stack.enter_async_context(
                    sse_client(expand(cfg.url), headers=headers, auth=auth))
            else:
                from mcp.client.streamable_http import streamable_http_client
                from mcp.shared._httpx_utils import create_mcp_http_client

                client = await stack.enter_async_context(create_mcp_http_client(headers=headers,
                                                                              auth=auth))
                read, write = await stack.enter_async_context(
                    streamable_http_client(expand(cfg.url), http_client=client))
        return await stack.enter_async_context(ClientSession(
            read, write, read_timeout_seconds=cfg.startup_timeout,
            message_handler=self._on_message, **self.callbacks.session_options()))

    async def _watch(self, stack: AsyncExitStack, read: AsyncIterable[ServerMessage]
                     ) -> MemoryObjectReceiveStream[ServerMessage]:
        """Relay the server's messages to the session, and notice when they end.

        A stdio server that dies between calls would otherwise stay "ready" until the next
        call failed on it; the end of its output stops this connection instead.
        """
        import anyio

        lost, stop = self.lost, self.stop
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            async with send:
                try:
                    async for message in read:
                        await send.send(message)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return  # the session closed first: we are shutting down
            lost.set()
            stop.set()

        group = await stack.enter_async_context(anyio.create_task_group())
        # Stop relaying before the transport shuts down, or it would wait on us.
        stack.callback(group.cancel_scope.cancel)
        group.start_soon(relay)
        return receive

    async def _on_message(self, message: object) -> None:
        if (kind := changed_kind(message)) is not None:
            self._relisting(kind)
        # Transport-level garbage (e.g. a server printing logs on stdout) arrives here.
        if isinstance(message, Exception):
            text = describe_exception(message)
            line = re.search(r"input_value=('.*?'|\".*?\")", text)
            self.last_stream_error = (f"a line that is not JSON-RPC: {line.group(1)[:120]}"
                                      if line else text.splitlines()[0][:200])

    def _relisting(self, kind: Kind) -> None:
        """List ``kind`` again, in a task of its own: the handler runs in the session's
        reader, which must go on reading to receive the answer."""
        task = asyncio.create_task(self._relist(kind))
        self._relists.add(task)
        task.add_done_callback(self._relists.discard)

    async def _relist(self, kind: Kind) -> None:
        async with self._relist_lock:
            session = self.session
            if session is None:
                return
            state = self.state
            published = Published(state.tools, state.prompt_specs, state.resource_specs,
                                  state.templates)
            try:
                published = await relist(session, self.config.name, kind, published)
            except Exception:  # a server that broke meanwhile: its next call tells
                return
            if self.session is session:
                self.set(**_published_state(published))

    # ---------------------------------------------------------------- diagnostics

    def stderr_tail(self, lines: int = 20) -> str:
        """The end of the stderr of the server's latest run (older runs are not its reason)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        run = text.rstrip().splitlines()
        starts = [i for i, line in enumerate(run) if line.startswith(RUN_MARK)]
        if starts:
            run = run[starts[-1] + 1:]
        return "\n".join(run[-lines:])

    def _explain(self, what: str) -> str:
        parts = [what]
        if self.last_stream_error:
            parts.append(f"its output was not MCP: {self.last_stream_error}")
        if tail := self.stderr_tail(8):
            parts.append("stderr:\n" + tail)
        return "\n".join(parts)


def _published_state(published: Published) -> dict[str, Any]:
    """``ServerState`` fields for what a server lists."""
    return dict(tools=published.tools, prompt_specs=published.prompts,
                prompts=tuple(p.name for p in published.prompts),
                resource_specs=published.resources,
                resources=tuple(r.uri for r in published.resources),
                templates=published.templates)


def describe_exception(exc: BaseException) -> str:
    """The innermost meaningful message of an exception (groups unwrapped)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or text}"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
