"""A real OAuth-protected MCP server (mcp SDK) for tests:
`oauth_server.py PORT [--seconds N] [--no-refresh] [--sse]`.

One process is both the authorization server (metadata discovery, dynamic client
registration, authorize with PKCE, token, refresh) and the resource server (streamable
HTTP at /mcp, or SSE at /sse, answering 401 without a valid bearer token). The authorize step
approves at once and redirects to the client's redirect URI, so a client can follow it
without a browser. Access tokens last N seconds (default 3600), so a test can see a
refresh; with ``--no-refresh`` no refresh token is ever accepted (as after a revocation).
``OAUTH_PREREGISTERED=ID:SECRET:REDIRECT_URI`` adds a client registered beforehand.

Tools: echo, and auth_stats: how many registrations, authorizations, token exchanges and
refreshes this server has seen, and the client id of the caller.
"""

import argparse
import os
import secrets
import time

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

parser = argparse.ArgumentParser()
parser.add_argument("port", type=int)
parser.add_argument("--seconds", type=int, default=3600)
parser.add_argument("--no-refresh", action="store_true")
parser.add_argument("--sse", action="store_true")
ARGS = parser.parse_args()
TOKEN_SECONDS = ARGS.seconds
REFRESH = not ARGS.no_refresh
BASE = f"http://127.0.0.1:{ARGS.port}"


class ApprovingProvider:
    """An in-memory authorization server that approves every request of a known client."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"registrations": 0, "authorizations": 0, "code_exchanges": 0,
                      "refreshes": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.stats["registrations"] += 1

    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        assert client.client_id is not None
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        self.stats["authorizations"] += 1
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        self.stats["code_exchanges"] += 1
        return self._issue(authorization_code.client_id, authorization_code.scopes,
                           authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token) if REFRESH else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        del self.refresh[refresh_token.token]  # rotated: each refresh token works once
        self.stats["refreshes"] += 1
        return self._issue(refresh_token.client_id, scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + TOKEN_SECONDS,
                                          resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes,
                                             resource=resource)
        return OAuthToken(access_token=access, expires_in=TOKEN_SECONDS, refresh_token=refresh,
                          scope=" ".join(scopes) or None)


provider = ApprovingProvider()
if known := os.environ.get("OAUTH_PREREGISTERED"):
    client_id, secret, redirect = known.split(":", 2)
    provider.clients[client_id] = OAuthClientInformationFull(
        client_id=client_id, client_secret=secret, redirect_uris=[redirect],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code", "refresh_token"])
server = MCPServer(
    "oauth-toy", auth_server_provider=provider,
    auth=AuthSettings(issuer_url=BASE, resource_server_url=f"{BASE}/{'sse' if ARGS.sse else 'mcp'}",
                      validate_token_resource=False,
                      client_registration_options=ClientRegistrationOptions(enabled=True)))


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def auth_stats() -> dict[str, object]:
    """What the authorization server has seen, and who is calling."""
    token = get_access_token()
    return {**provider.stats, "client_id": token.client_id if token else None}


if __name__ == "__main__":
    if ARGS.sse:
        server.run("sse", host="127.0.0.1", port=ARGS.port)
    else:
        server.run("streamable-http", host="127.0.0.1", port=ARGS.port)
