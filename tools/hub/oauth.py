"""OAuth 2.1 sign-in for HTTP and SSE servers, on the mcp SDK's ``OAuthClientProvider``.

The SDK does the protocol (401 → protected-resource and authorization-server discovery →
dynamic registration or a pre-registered / URL-based client → PKCE → token → refresh);
this module gives it deskmate's pieces: the token file per server (``tokens.py``), a
one-shot loopback listener for the redirect, and who shows the authorization page.

A connection signs in only when someone can answer (``OAuthSetup.answer``): the app's
``deskmate mcp login`` and the Servers screen's sign-in key, or a headless answerer in
tests and the conformance benchmark. Otherwise a server that asks for a sign-in it has
no tokens for gets the ``needs-sign-in`` state, and nothing is registered on its behalf.
"""

from __future__ import annotations

import asyncio
import os
import webbrowser
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    issuers_match,
)
from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata
from pydantic import AnyUrl, ValidationError

from deskmate.tools.hub.servers import ServerConfig, ServerConfigError
from deskmate.tools.hub.tokens import FileTokenStorage, token_file

if TYPE_CHECKING:
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull

OpenUrl = Callable[[str], Awaitable[None]]  # shows a person (or a test) the authorization URL
CALLBACK_PATH = "/callback"


@dataclass(frozen=True)
class OAuthSetup:
    """Where sign-ins are kept, and who answers a new one."""

    token_dir: Path  # one file per server, 0600 (the app gives its data dir's mcp-auth/)
    answer: OpenUrl | None = None  # None: a server that needs a new sign-in waits for login
    client_name: str = "deskmate"  # what the authorization page shows the person


class SignInRequired(Exception):
    """The server needs a sign-in that this connection may not start on its own."""


def sign_in_hint(server: str) -> str:
    """The state's error for a server that needs a sign-in (after "needs sign-in: ")."""
    return f"run `deskmate mcp login {server}`"


# ---------------------------------------------------------------- the httpx auths


class SignInProbe(httpx2.Auth):
    """For a server we hold no tokens for: send requests as they are, notice a 401.

    Registering a client (the SDK's step before the browser) on every plain connect would
    leave a registration per start on the authorization server; this only records that a
    sign-in is needed.
    """

    def __init__(self) -> None:
        self.sign_in_required = False

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response]:
        response = yield request
        if response.status_code == 401:
            self.sign_in_required = True


class ServerOAuth(OAuthClientProvider):
    """The SDK's provider, with the token expiry kept across restarts.

    The SDK learns when an access token expires only from a token response it sees, so
    tokens loaded from storage would count as valid forever: the first request after an
    expiry would get a 401 and start a whole new sign-in instead of a refresh.
    """

    def __init__(self, server_url: str, client_metadata: OAuthClientMetadata,
                 storage: FileTokenStorage, redirect_handler: OpenUrl,
                 callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
                 client_metadata_url: str | None) -> None:
        super().__init__(server_url, client_metadata, storage, redirect_handler,
                         callback_handler, client_metadata_url)
        self._file = storage
        self.sign_in_required = False

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self._file.expires_at()

    async def _refresh_token(self) -> httpx2.Request:
        # Another deskmate process (the app, `deskmate run`) may have refreshed since we
        # loaded the tokens, and a rotated refresh token works only once: use the newest.
        stored = await self._file.get_tokens()
        if stored is not None and stored.refresh_token:
            self.context.current_tokens = stored
        return await super()._refresh_token()

    async def _auth_flow(
            self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, with the 2025-03-26 legacy metadata taken as that spec allows.

        With no protected-resource metadata, the SDK fetches authorization server metadata
        from the MCP server's own origin (``<origin>/.well-known/oauth-authorization-server``,
        the 2025-03-26 discovery) and requires its ``issuer`` to be exactly that origin
        (RFC 8414 §3.3). The 2025-03-26 spec asks nothing of the issuer, and servers of that
        era mount their authorization server under a path (``<origin>/oauth``), so the SDK
        refuses them. ``_legacy_metadata`` accepts such a document when its issuer is on
        the same origin the document came from; everything else goes to the SDK unchanged.
        """
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is not request and self._is_legacy_metadata_request(outgoing):
                    response = await self._legacy_metadata(response)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _is_legacy_metadata_request(self, outgoing: httpx2.Request) -> bool:
        """The SDK's 2025-03-26 metadata lookup: no PRM named an authorization server."""
        if self.context.auth_server_url is not None or outgoing.method != "GET":
            return False
        legacy = build_oauth_authorization_server_metadata_discovery_urls(
            None, self.context.server_url)[0]
        return outgoing.url == httpx2.URL(legacy)

    async def _legacy_metadata(self, response: httpx2.Response) -> httpx2.Response:
        """The response the SDK's legacy lookup gets.

        A document whose issuer is the server's origin (the SDK accepts it), on another
        origin (the SDK refuses it: a server may not point us at someone else's
        authorization server without PRM), or that does not parse, goes to the SDK as it
        came. One whose issuer is a path on the same origin (scheme, host and port, no
        query or fragment) is kept here as the flow's metadata, and the SDK is told the
        lookup found nothing, so it keeps ours. What still holds for it: the document came
        from the MCP server's own origin, so the issuer speaks for that server; credentials
        stay bound to that origin (the SDK's legacy binding), and the authorization
        response's ``iss`` (RFC 9207), state and PKCE are checked against this issuer as
        for any other.
        """
        if response.status_code != 200:
            return response
        try:
            metadata = OAuthMetadata.model_validate_json(await response.aread())
        except ValidationError:
            return response
        issuer = str(metadata.issuer)
        if issuers_match(issuer, _origin(self.context.server_url)) or not _on_origin(
                issuer, self.context.server_url):
            return response
        self.context.oauth_metadata = metadata
        # The SDK (2.3) takes a 4xx here as "not served at this URL"; the legacy lookup has
        # no other URL, so it goes on with the metadata set above. tests/test_oauth_legacy.py
        # fails if a new SDK stops doing so.
        return httpx2.Response(404, request=response.request)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _on_origin(issuer: str, server_url: str) -> bool:
    """Whether an issuer identifier is a URL on the server's origin (RFC 6454: scheme,
    host, port), without the query or fragment RFC 8414 §2 forbids."""
    a, b = urlsplit(issuer), urlsplit(server_url)
    if a.query or a.fragment or not a.hostname:
        return False
    return (a.scheme.lower(), a.hostname, a.port or _DEFAULT_PORTS.get(a.scheme.lower())) == (
        b.scheme.lower(), b.hostname, b.port or _DEFAULT_PORTS.get(b.scheme.lower()))


ServerAuth = SignInProbe | ServerOAuth


async def open_auth(cfg: ServerConfig, setup: OAuthSetup | None,
                    stack: AsyncExitStack) -> ServerAuth | None:
    """The httpx auth for one HTTP/SSE connection, or None when OAuth does not apply.

    A server given an ``Authorization`` header in the config is signed in by that header.
    """
    if setup is None or cfg.transport == "stdio" or any(
            k.lower() == "authorization" for k in cfg.headers):
        return None
    from deskmate.tools.hub.servers import expand

    url = expand(cfg.url)
    storage = FileTokenStorage(token_file(setup.token_dir, cfg.name), url, preregistered(cfg))
    if setup.answer is None and not storage.has_tokens():
        return SignInProbe()
    registered = await storage.get_client_info()
    port = cfg.callback_port or _registered_port(registered)
    listener = None
    if setup.answer is not None:
        listener = await CallbackListener.open(port)
        stack.push_async_callback(listener.close)
        if listener.port != port and storage.preregistered is None:
            storage.forget_client()  # registered for another port: register again
        port = listener.port
    answer = setup.answer
    provider: ServerOAuth

    async def redirect(authorization_url: str) -> None:
        if answer is None:
            provider.sign_in_required = True
            raise SignInRequired(sign_in_hint(cfg.name))
        await answer(authorization_url)

    async def callback() -> AuthorizationCodeResult:
        assert listener is not None  # an answer always comes with a listener
        return await listener.wait()

    metadata = OAuthClientMetadata(
        client_name=setup.client_name,
        redirect_uris=[AnyUrl(f"http://127.0.0.1:{port}{CALLBACK_PATH}")],
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none")
    provider = ServerOAuth(url, metadata, storage, redirect, callback,
                           cfg.client_metadata_url or None)
    return provider


def preregistered(cfg: ServerConfig) -> OAuthClientInformationFull | None:
    """The client the config names (``client_id``, ``client_secret_env``), if any."""
    if not cfg.client_id:
        return None
    from mcp.shared.auth import OAuthClientInformationFull

    secret = None
    if cfg.client_secret_env:
        secret = os.environ.get(cfg.client_secret_env)
        if not secret:
            raise ServerConfigError("client_secret_env", (
                f"environment variable {cfg.client_secret_env} is not set (server "
                f"{cfg.name!r} reads its OAuth client secret from it)"))
    return OAuthClientInformationFull(
        client_id=cfg.client_id, client_secret=secret,
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
        grant_types=["authorization_code", "refresh_token"])


def _registered_port(client: OAuthClientInformationFull | None) -> int:
    """The loopback port our stored registration's redirect URI names (0: none)."""
    for uri in (client.redirect_uris or []) if client else []:
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return 0


# ---------------------------------------------------------------- the redirect's listener


class CallbackListener:
    """An HTTP listener on 127.0.0.1 that takes authorization redirects, one per ``wait``.

    It answers only ``GET /callback``; a redirect that arrives before ``wait`` (a headless
    answerer follows it inside the redirect handler) is kept for it.
    """

    def __init__(self) -> None:
        self._results: asyncio.Queue[AuthorizationCodeResult | Exception] = asyncio.Queue()
        self._server: asyncio.Server | None = None
        self.port = 0

    @classmethod
    async def open(cls, port: int = 0) -> CallbackListener:
        """Listen on ``port`` when it is free (a registration names it), else on a random one."""
        listener = cls()
        try:
            listener._server = await asyncio.start_server(listener._serve, "127.0.0.1", port)
        except OSError:
            listener._server = await asyncio.start_server(listener._serve, "127.0.0.1", 0)
        listener.port = listener._server.sockets[0].getsockname()[1]
        return listener

    async def wait(self) -> AuthorizationCodeResult:
        result = await self._results.get()
        if isinstance(result, Exception):
            raise result
        return result

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with suppress(Exception):
                await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        from mcp.shared.auth import AuthorizationCodeResult

        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass  # headers: nothing in them matters here
            method, target, *_ = line.split() or ["", ""]
            parts = urlsplit(target)
            if method != "GET" or parts.path != CALLBACK_PATH:
                await _reply(writer, 404, "Not found.")
                return
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if "error" in query:
                self._results.put_nowait(OAuthFlowError(
                    f"the authorization server refused: {query['error']} "
                    f"{query.get('error_description', '')}".strip()))
                await _reply(writer, 400, "Sign-in refused. You can close this tab.")
            elif "code" in query:
                self._results.put_nowait(AuthorizationCodeResult(
                    code=query["code"], state=query.get("state"), iss=query.get("iss")))
                await _reply(writer, 200, "Signed in to deskmate. You can close this tab.")
            else:
                await _reply(writer, 400, "No authorization code in this request.")
        except (TimeoutError, ValueError, ConnectionError):
            pass
        finally:
            writer.close()


async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = f"<!doctype html><title>deskmate</title><p>{text}</p>\n".encode()
    writer.write(f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                 f"Content-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
                 "Connection: close\r\n\r\n".encode() + body)
    await writer.drain()


# ---------------------------------------------------------------- who answers


def browser_answer(show: Callable[[str], object]) -> OpenUrl:
    """Show the URL (always: the person may be on another machine) and open a browser here
    unless this is an SSH session without a display."""

    async def answer(url: str) -> None:
        show(url)
        remote = (os.environ.get("SSH_CONNECTION") or os.environ.get("SSH_TTY")) and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
        if not remote:
            await asyncio.to_thread(webbrowser.open, url)

    return answer


async def headless_answer(url: str) -> None:
    """Follow the authorization page's redirects without a browser, down to our listener.

    For authorization servers that approve without a person (tests, the conformance suite).
    """
    async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as client:
        await client.get(url)
