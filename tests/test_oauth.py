"""OAuth sign-in of HTTP servers, against a real OAuth-protected MCP server (the mcp SDK's
authorization and resource server pieces, tests/servers/oauth_server.py) run as a
subprocess: 401 → discovery → registration → PKCE → token → refresh, through the Hub,
the CLI's login/logout and the token files."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from conftest import TEST_SERVERS, deskmate

from deskmate.tools.hub import (
    Hub,
    ServerConfig,
    ServerConfigError,
    ServerUnavailable,
    server_from_table,
)
from deskmate.tools.hub.oauth import OAuthSetup, headless_answer
from deskmate.tools.hub.tokens import FileTokenStorage


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def oauth_server(token_seconds: int = 3600, env: dict[str, str] | None = None,
                 refresh: bool = True, sse: bool = False) -> Iterator[str]:
    """Start tests/servers/oauth_server.py; yield its MCP URL."""
    port = free_port()
    options = ["--seconds", str(token_seconds), *([] if refresh else ["--no-refresh"]),
               *(["--sse"] if sse else [])]
    proc = subprocess.Popen([sys.executable, str(TEST_SERVERS / "oauth_server.py"), str(port),
                             *options], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the OAuth test server did not start"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/{'sse' if sse else 'mcp'}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def secure(url: str, **options) -> ServerConfig:
    options.setdefault("transport", "http")
    return ServerConfig("secure", url=url, startup_timeout=60, **options)


@pytest.mark.slow
def test_the_whole_chain_and_refresh_across_restarts(tmp_path):
    tokens = tmp_path / "tokens"
    with oauth_server(token_seconds=3) as url:
        with Hub([secure(url)], tmp_path / "logs", oauth=OAuthSetup(tokens)) as hub:
            # No tokens yet: the server's 401 becomes a state that says what to do.
            state = hub.start()[0]
            assert state.status == "needs-sign-in"
            assert "deskmate mcp login secure" in state.error
            assert not tokens.exists()  # nothing registered or kept for a plain connect

            state = hub.sign_in("secure", headless_answer)
            assert state.status == "ready", state.error
            assert {t.name for t in state.tools} == {"echo", "auth_stats"}
            stats = hub.call("secure", "auth_stats").value()
            assert stats["registrations"] == 1  # dynamic registration, once
            assert stats["authorizations"] == stats["code_exchanges"] == 1
            refreshed = stats["refreshes"]  # 0, unless this machine took 3 s to get here

            time.sleep(4)  # the access token expires: the next call refreshes it
            stats = hub.call("secure", "auth_stats").value()
            assert stats["refreshes"] > refreshed and stats["authorizations"] == 1
            refreshed = stats["refreshes"]

        path = tokens / "secure.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o700
        time.sleep(4)
        # A new process with an expired token refreshes it; it does not ask to sign in.
        with Hub([secure(url)], tmp_path / "logs", oauth=OAuthSetup(tokens)) as hub:
            state = hub.start()[0]
            assert state.status == "ready", state.error
            stats = hub.call("secure", "auth_stats").value()
            assert stats["refreshes"] > refreshed and stats["authorizations"] == 1
            assert stats["registrations"] == 1


@pytest.mark.slow
def test_two_processes_share_a_sign_in_whose_refresh_token_rotates(tmp_path):
    tokens = tmp_path / "tokens"
    with oauth_server(token_seconds=3) as url, \
            Hub([secure(url)], tmp_path / "a", oauth=OAuthSetup(tokens)) as first:
        assert first.sign_in("secure", headless_answer).status == "ready"
        with Hub([secure(url)], tmp_path / "b", oauth=OAuthSetup(tokens)) as second:
            assert second.start()[0].status == "ready"
            time.sleep(4)
            before = first.call("secure", "auth_stats").value()["refreshes"]  # rotates
            # The second one refreshes with the token the first one kept, not its own
            # spent copy (the server accepts each refresh token once).
            stats = second.call("secure", "auth_stats").value()
            assert stats["refreshes"] > before and stats["authorizations"] == 1


@pytest.mark.slow
def test_an_sse_server_signs_in_too(tmp_path):
    with oauth_server(sse=True) as url, Hub(
            [secure(url, transport="sse")], tmp_path / "logs",
            oauth=OAuthSetup(tmp_path / "tokens")) as hub:
        assert hub.start()[0].status == "needs-sign-in"
        state = hub.sign_in("secure", headless_answer)
        assert state.status == "ready", state.error
        assert hub.call("secure", "echo", {"text": "hi"}).value() == "hi"


@pytest.mark.slow
def test_a_refused_refresh_asks_to_sign_in_again_and_keeps_the_registration(tmp_path):
    # Tokens last 8 s: a loaded machine may take a few seconds to connect after signing in.
    with oauth_server(token_seconds=8, refresh=False) as url, Hub(
            [secure(url, call_timeout=20)], tmp_path / "logs",
            oauth=OAuthSetup(tmp_path / "tokens")) as hub:
        assert hub.sign_in("secure", headless_answer).status == "ready"
        time.sleep(9)  # expired, and the server refuses the refresh token
        with pytest.raises(ServerUnavailable, match="deskmate mcp login secure"):
            hub.call("secure", "echo", {"text": "hi"})
        assert hub.state("secure").status == "needs-sign-in"

        # Signing in again reuses the registration (its redirect port is free again).
        assert hub.sign_in("secure", headless_answer).status == "ready"
        stats = hub.call("secure", "auth_stats").value()
        assert stats["registrations"] == 1 and stats["authorizations"] == 2


@pytest.mark.slow
def test_a_preregistered_client_signs_in_with_its_secret_from_the_environment(
        tmp_path, monkeypatch):
    port = free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    known = {"OAUTH_PREREGISTERED": f"deskmate-test:s3cret:{redirect}"}
    with oauth_server(env=known) as url:
        config = server_from_table("secure", {
            "url": url, "client_id": "deskmate-test", "client_secret_env": "SECURE_SECRET",
            "callback_port": port, "startup_timeout": 60})
        with Hub([config], tmp_path / "logs", oauth=OAuthSetup(tmp_path / "tokens")) as hub:
            state = hub.sign_in("secure", headless_answer)
            assert state.status == "failed"
            assert "SECURE_SECRET is not set" in state.error

            monkeypatch.setenv("SECURE_SECRET", "s3cret")
            state = hub.sign_in("secure", headless_answer)
            assert state.status == "ready", state.error
            stats = hub.call("secure", "auth_stats").value()
            assert stats["registrations"] == 0 and stats["client_id"] == "deskmate-test"
        kept = (tmp_path / "tokens" / "secure.json").read_text()
        assert "s3cret" not in kept and "client" not in json.loads(kept)


@pytest.mark.slow
def test_the_cli_logs_in_lists_and_logs_out(home, tmp_path):
    with oauth_server() as url:
        assert deskmate("mcp", "add", "secure", "--url", url, home=home).returncode == 0
        listed = deskmate("mcp", "list", home=home)
        assert "needs-sign-in" in listed.stdout
        assert "deskmate mcp login secure" in listed.stdout

        # An SSH session without a display: the URL is printed, no browser is started.
        env = {**os.environ, "DESKMATE_HOME": str(home), "SSH_CONNECTION": "1 2 3 4"}
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        login = subprocess.Popen([sys.executable, "-m", "deskmate.app.cli", "mcp", "login",
                                  "secure"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env)
        assert login.stderr is not None
        lines = []  # up to the port-forwarding hint, the last line before the approval
        while "ssh -L" not in (line := login.stderr.readline()) and line:
            lines.append(line)
        assert line, "".join(lines)
        authorization_url = next(t.strip() for t in lines if t.strip().startswith("http://"))
        assert "code_challenge_method=S256" in authorization_url
        # The person approves in a browser: the redirect lands on the CLI's listener.
        import asyncio

        asyncio.run(headless_answer(authorization_url))
        out, err = login.communicate(timeout=120)
        assert login.returncode == 0, "".join(lines) + err
        assert "signed in to secure" in out

        token_file = home / "data" / "mcp-auth" / "secure.json"
        assert token_file.exists()
        assert "access_token" not in (home / "config.toml").read_text()
        listed = deskmate("mcp", "list", "--json", home=home)
        assert '"status": "ready"' in listed.stdout

        out = deskmate("mcp", "logout", "secure", home=home).stdout
        assert "signed out of secure" in out and not token_file.exists()
        assert "needs-sign-in" in deskmate("mcp", "list", home=home).stdout


def test_tokens_made_for_another_url_are_never_sent(tmp_path):
    import asyncio

    from mcp.shared.auth import OAuthToken

    path = tmp_path / "remote.json"
    asyncio.run(FileTokenStorage(path, "https://a.example/mcp").set_tokens(
        OAuthToken(access_token="secret-a", expires_in=60)))
    assert asyncio.run(FileTokenStorage(path, "https://a.example/mcp").get_tokens())
    assert asyncio.run(FileTokenStorage(path, "https://evil.example/mcp").get_tokens()) is None


@pytest.mark.parametrize(("table", "key", "says"), [
    ({"url": "https://x.example/mcp", "client_secret": "s3cret"}, "client_secret",
     "client_secret_env"),
    ({"url": "https://x.example/mcp", "client_secret_env": "not a name"}, "client_secret_env",
     "name of an environment variable"),
    ({"command": "srv", "client_id": "abc"}, "client_id", "http and sse"),
    ({"url": "https://x.example/mcp", "client_metadata_url": "http://x/doc"},
     "client_metadata_url", "https URL"),
])
def test_oauth_settings_are_checked(table, key, says):
    with pytest.raises(ServerConfigError) as caught:
        server_from_table("remote", table)
    assert caught.value.key == key and says in str(caught.value)


def test_oauth_settings_round_trip():
    table = {"url": "https://x.example/mcp", "client_id": "abc", "client_secret_env": "X_SECRET",
             "callback_port": 8765, "client_metadata_url": "https://me.example/client.json"}
    assert server_from_table("remote", table).to_table() == table


@pytest.mark.slow
async def test_the_servers_screen_signs_in_with_its_key(home, monkeypatch):
    from test_ui_support import make_app, scripted, wait_for

    from deskmate.app.ui.servers import ServersScreen

    monkeypatch.setenv("SSH_CONNECTION", "1 2 3 4")  # no browser: the URL is shown
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with oauth_server() as url:
        app = make_app(scripted(), servers=[secure(url)])
        posted: list = []
        async with app.run_test(size=(140, 45), message_hook=posted.append) as pilot:
            await wait_for(pilot, lambda: app._hub_ready, 60, "the hub")
            await pilot.press("f3")
            status = app.screen.query_one("#server-status")
            await wait_for(pilot, lambda: "needs-sign-in" in str(status.render()), 60,
                           "the sign-in state")
            await pilot.press("l")
            await wait_for(pilot, lambda: any(isinstance(m, ServersScreen.SignInUrl)
                                              for m in posted), 60, "the authorization URL")
            link = next(m.url for m in posted if isinstance(m, ServersScreen.SignInUrl))
            await headless_answer(link)  # the person approves in the browser
            await wait_for(pilot, lambda: "secure: ready" in str(status.render()), 60,
                           "the server, signed in")
            assert any("Signed in" in said or "2 tools" in said for said in app.said)


def test_claude_codes_oauth_client_is_imported_without_its_secret():
    from deskmate.tools.hub.dialects import parse_servers

    result = parse_servers({"mcpServers": {"hosted": {
        "type": "http", "url": "https://x.example/mcp",
        "oauth": {"clientId": "abc", "callbackPort": 8080, "clientSecret": "s3cret"}}}})
    (server,) = result.servers
    assert (server.client_id, server.callback_port) == ("abc", 8080)
    assert "s3cret" not in repr(server)
    assert any("clientSecret not imported" in w for w in result.warnings)


def test_mcp_add_takes_a_preregistered_client(home):
    import tomllib

    added = deskmate("mcp", "add", "hosted", "--url", "https://x.example/mcp", "--client-id",
                     "abc", "--client-secret-env", "HOSTED_SECRET", home=home)
    assert added.returncode == 0, added.stderr
    table = tomllib.loads((home / "config.toml").read_text())["mcp"]["servers"]["hosted"]
    assert table["client_id"] == "abc" and table["client_secret_env"] == "HOSTED_SECRET"
    local = deskmate("mcp", "add", "local", "--client-id", "abc", "--", "uvx", "x", home=home)
    assert local.returncode == 2 and "http and sse servers" in local.stderr
