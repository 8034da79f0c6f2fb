"""The client side of one MCP session: who deskmate says it is, and what it answers.

Passing a callback to the SDK's ``ClientSession`` is what declares the matching client
capability, so ``session_options`` passes only what deskmate really does:

- elicitation (form and URL mode), always: the question goes to the asker of the call
  in flight on this connection (the server's request does not say which call it belongs
  to; calls to one server run one at a time per agent), or to the hub's asker when no
  call is running. The asker runs on a worker thread and the calls' clocks stop meanwhile.
- roots, only for a server whose config lists ``roots``: some servers (the reference
  filesystem server) replace their own configured folders with the client's roots, so
  declaring roots for every server would silently re-scope it.
- sampling, only when the hub has a ``Sampler`` (a model and someone who approves or
  declines): the request goes to the sampler on a worker thread, the calls' clocks
  stop meanwhile (the person deciding, then the local model writing), and a refusal
  or an unsupported request (images, audio) is an error result that says why.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from deskmate.tools.hub.calls import ActiveCall
from deskmate.tools.hub.elicitation import (
    Asker,
    ElicitAnswer,
    ElicitRequest,
    UnsupportedForm,
    decline,
    from_params,
)
from deskmate.tools.hub.sampling import Sampler, SampleRefused, UnsupportedContent
from deskmate.tools.hub.sampling import from_params as sample_request
from deskmate.tools.hub.servers import ServerConfig, expand

if TYPE_CHECKING:
    from mcp import types
    from mcp.client.session import ClientRequestContext


_Q = TypeVar("_Q")
_A = TypeVar("_A")


def client_version() -> str:
    try:
        return importlib.metadata.version("deskmate")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


class ClientCallbacks:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.asker: Asker = decline  # for questions asked while no call is running
        self.calls: list[ActiveCall] = []  # in flight, oldest first (the hub keeps it)
        self.sampler: Sampler | None = None  # None: sampling is not declared

    def session_options(self) -> dict[str, Any]:
        """Keyword arguments for ``ClientSession``: client info and the callbacks."""
        from mcp import types

        options: dict[str, Any] = dict(
            client_info=types.Implementation(name="deskmate", version=client_version()),
            elicitation_callback=self.elicit)
        if self.config.roots:
            options["list_roots_callback"] = self.list_roots
        if self.sampler is not None:
            options["sampling_callback"] = self.sample
        return options

    async def elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams
                     ) -> types.ElicitResult | types.ErrorData:
        from mcp import types

        call = self.calls[-1] if self.calls else None
        try:
            request = from_params(self.config.name, params, call.tool if call else "")
        except UnsupportedForm as exc:
            return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))
        answer = await self.ask(request, call)
        content: dict[str, str | int | float | bool | list[str] | None] | None = None
        if answer.action == "accept" and request.mode == "form":
            content = dict(answer.content)
        return types.ElicitResult(action=answer.action, content=content)

    async def ask(self, request: ElicitRequest, call: ActiveCall | None) -> ElicitAnswer:
        """``call``'s asker (else the hub's) answers on a worker thread; the clocks of
        the calls in flight stand still meanwhile."""
        asker = (call.hooks.asker if call is not None else None) or self.asker
        return await self._paused(asker, request)

    async def _paused(self, answer: Callable[[_Q], _A], request: _Q) -> _A:
        """``answer(request)`` on a worker thread, the in-flight calls' clocks stopped."""
        paused = list(self.calls)
        for active in paused:
            active.clock.pause()
        try:
            return await asyncio.to_thread(answer, request)
        finally:
            for active in paused:
                active.clock.resume()

    async def sample(self, context: ClientRequestContext,
                     params: types.CreateMessageRequestParams
                     ) -> types.CreateMessageResult | types.ErrorData:
        from mcp import types

        if self.sampler is None:  # not declared, so not asked; kept for safety
            return types.ErrorData(code=types.INVALID_REQUEST, message="Sampling not supported")
        call = self.calls[-1] if self.calls else None
        try:
            request = sample_request(self.config.name, params, call.tool if call else "")
            sample = await self._paused(self.sampler, request)
        except UnsupportedContent as exc:
            return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))
        except SampleRefused as exc:
            # -1: the code the MCP spec shows for "User rejected sampling request".
            return types.ErrorData(code=-1, message=str(exc))
        except Exception as exc:  # the model failed: the server must not wait forever
            return types.ErrorData(code=types.INTERNAL_ERROR,
                                   message=f"the local model could not answer: {exc}")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=sample.text),
            model=sample.model, stop_reason=sample.stop_reason)

    def required_links(self, exc: BaseException, tool: str) -> list[ElicitRequest]:
        """The links a call's -32042 error (URL elicitation required) asks the user to
        open before the call can run; [] for any other error."""
        from mcp import types
        from mcp.shared.exceptions import MCPError
        from pydantic import ValidationError

        if not isinstance(exc, MCPError) or exc.code != types.URL_ELICITATION_REQUIRED:
            return []
        try:
            data = types.ElicitationRequiredErrorData.model_validate(exc.error.data or {})
        except ValidationError:
            return []
        return [from_params(self.config.name, params, tool) for params in data.elicitations]

    async def list_roots(self, context: ClientRequestContext
                         ) -> types.ListRootsResult | types.ErrorData:
        from mcp import types
        from pydantic import FileUrl

        roots = []
        for folder in self.config.roots:
            path = Path(expand(folder)).expanduser().resolve()
            roots.append(types.Root(uri=FileUrl(path.as_uri()), name=path.name or str(path)))
        return types.ListRootsResult(roots=roots)
