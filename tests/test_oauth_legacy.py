"""The 2025-03-26 sign-in path (no protected-resource metadata): deskmate's provider
(``ServerOAuth``) against a small in-process HTTP server that serves authorization server
metadata at the MCP server's origin, with the issuer the test chooses.

An issuer under a path on the same origin (``<origin>/oauth``, what the conformance
suite's ``auth/2025-03-26-oauth-metadata-backcompat`` serves) is accepted; one on any
other origin is refused before anything is registered or sent to it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp.client.auth import OAuthFlowError
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from pydantic import AnyUrl

from deskmate.tools.hub.oauth import ServerOAuth
from deskmate.tools.hub.tokens import FileTokenStorage

SERVER = "http://mcp.test:8000"
MCP_URL = f"{SERVER}/mcp"


@dataclass
class LegacyServer:
    """An MCP server of the 2025-03-26 kind: 401 without a token, no PRM, authorization
    server metadata at its origin's well-known URL naming ``issuer``, whose endpoints
    are under the issuer."""

    issuer: str
    seen: list[str] = field(default_factory=list)  # "METHOD URL" of each request

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(f"{request.method} {request.url}")
        url, path = str(request.url), request.url.path
        if url.startswith(MCP_URL):
            if request.headers.get("authorization") == "Bearer the-token":
                return httpx2.Response(200, json={"ok": True})
            return httpx2.Response(401, headers={"WWW-Authenticate": "Bearer"})
        if url == f"{SERVER}/.well-known/oauth-authorization-server":
            base = self.issuer.rstrip("/")
            return httpx2.Response(200, json={
                "issuer": self.issuer, "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token", "registration_endpoint": f"{base}/register",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"]})
        if request.method == "POST" and path.endswith("/register"):
            body = json.loads(request.content)
            return httpx2.Response(201, json={"client_id": "legacy-client", **body})
        if request.method == "POST" and path.endswith("/token"):
            return httpx2.Response(200, json={"access_token": "the-token",
                                              "token_type": "Bearer", "expires_in": 3600})
        return httpx2.Response(404)


@dataclass
class Person:
    """Approves at once: the code comes back with the state of the authorization URL."""

    iss: str | None = None  # what the redirect says the issuer is (RFC 9207), if anything
    urls: list[str] = field(default_factory=list)

    async def open(self, url: str) -> None:
        self.urls.append(url)

    async def callback(self) -> AuthorizationCodeResult:
        state = parse_qs(urlsplit(self.urls[-1]).query)["state"][0]
        return AuthorizationCodeResult(code="the-code", state=state, iss=self.iss)


def provider(tmp_path: Path, person: Person) -> tuple[ServerOAuth, FileTokenStorage]:
    storage = FileTokenStorage(tmp_path / "legacy.json", MCP_URL)
    metadata = OAuthClientMetadata(
        client_name="deskmate", redirect_uris=[AnyUrl("http://127.0.0.1:9/callback")],
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none")
    return ServerOAuth(MCP_URL, metadata, storage, person.open, person.callback,
                       None), storage


async def connect(server: LegacyServer, auth: ServerOAuth) -> httpx2.Response:
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(server.handle),
                                  auth=auth) as client:
        return await client.post(MCP_URL, json={"method": "initialize"})


@pytest.mark.parametrize("issuer", [f"{SERVER}/oauth", SERVER])
async def test_legacy_metadata_with_an_issuer_on_the_servers_origin_signs_in(tmp_path, issuer):
    server, person = LegacyServer(issuer), Person()
    auth, storage = provider(tmp_path, person)

    response = await connect(server, auth)

    assert response.status_code == 200
    assert person.urls[0].startswith(f"{issuer}/authorize?")
    assert f"POST {issuer}/register" in server.seen
    assert f"POST {issuer}/token" in server.seen
    assert auth.context.oauth_metadata is not None
    assert str(auth.context.oauth_metadata.issuer).rstrip("/") == issuer
    client = await storage.get_client_info()
    # Bound to the server's origin, as the SDK binds every legacy-path registration: a
    # restart compares against the same value and keeps the registration.
    assert client is not None and client.issuer is not None
    assert client.issuer.rstrip("/") == SERVER
    assert (await storage.get_tokens()) is not None


@pytest.mark.parametrize("issuer", [
    "http://elsewhere.test:8000/oauth",  # another host
    "http://mcp.test:9000/oauth",  # another port
    "https://mcp.test:8000/oauth",  # another scheme
])
async def test_legacy_metadata_with_an_issuer_on_another_origin_is_refused(tmp_path, issuer):
    server, person = LegacyServer(issuer), Person()
    auth, storage = provider(tmp_path, person)

    with pytest.raises(OAuthFlowError, match="issuer mismatch"):
        await connect(server, auth)

    assert not person.urls  # no authorization page was shown
    assert not any("register" in seen or "token" in seen for seen in server.seen)
    assert await storage.get_client_info() is None


async def test_the_authorization_response_issuer_is_checked_against_the_path_issuer(
        tmp_path):
    # RFC 9207: with the metadata taken on the legacy path, a redirect that names the
    # issuer from the metadata is accepted, one that names another (here the bare origin)
    # is refused before any code is exchanged.
    server, person = LegacyServer(f"{SERVER}/oauth"), Person(iss=f"{SERVER}/oauth")
    auth, _ = provider(tmp_path / "a", person)
    assert (await connect(server, auth)).status_code == 200

    server, person = LegacyServer(f"{SERVER}/oauth"), Person(iss=SERVER)
    auth, _ = provider(tmp_path / "b", person)
    with pytest.raises(OAuthFlowError, match="iss mismatch"):
        await connect(server, auth)
    assert person.urls  # it got as far as the authorization page
    assert not any(seen.endswith("/token") for seen in server.seen)
