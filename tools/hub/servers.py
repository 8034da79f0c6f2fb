"""How to reach one MCP server: its config, validated, and the environment it gets.

Stored in deskmate's TOML as ``[mcp.servers.NAME]`` tables:

    [mcp.servers.git]
    command = "uvx"
    args = ["mcp-server-git"]
    env = { GIT_AUTHOR_NAME = "me" }       # values may use ${VAR} / ${VAR:-default}

    [mcp.servers.remote]
    url = "https://example.com/mcp"
    transport = "http"                       # or "sse"
    headers = { Authorization = "Bearer ${REMOTE_TOKEN}" }
    disabled_tools = ["delete_repo"]         # hidden from the agent, refused if called

    [mcp.servers.hosted]                     # signs in with OAuth (`deskmate mcp login hosted`)
    url = "https://example.com/mcp"
    client_id = "my-app"                     # only for a client registered beforehand
    client_secret_env = "HOSTED_SECRET"      # the secret's environment variable, never the secret

``${VAR}`` references are kept as written and expanded when the server starts, so a
secret lives in the environment, not in the config file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Transport = Literal["stdio", "http", "sse"]
TRANSPORTS = ("stdio", "http", "sse")

# What a stdio server inherits from our environment, besides what its config gives it.
# Never the whole environment: API keys and tokens of other tools stay out.
SAFE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "LC_ALL",
            "LC_CTYPE", "TMPDIR", "TZ", "XDG_RUNTIME_DIR")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ServerConfigError(ValueError):
    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(message)


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: Transport = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    trust: bool = False  # run every tool of this server without asking
    startup_timeout: float = 30.0  # seconds to connect and list tools
    call_timeout: float = 60.0  # seconds a tool call may wait for news from the server
    # Folders offered to the server as its MCP roots; empty: roots are not declared
    # (some servers, like the reference filesystem one, replace their own folders with them).
    roots: tuple[str, ...] = ()
    # OAuth, for an HTTP/SSE server whose authorization server does not register clients
    # on the fly (without these, deskmate registers itself when it signs in):
    client_id: str = ""  # the client registered for deskmate beforehand
    client_secret_env: str = ""  # the environment variable holding its secret (if it has one)
    callback_port: int = 0  # fixed loopback port of the redirect URI (0: any free port)
    client_metadata_url: str = ""  # https URL of a Client ID Metadata Document to use as client_id
    # Tools (by their MCP names) the user turned off: the agent neither sees nor calls
    # them; the servers screen still lists them, marked off.
    disabled_tools: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return f"{self.url} ({self.transport})"

    def to_table(self) -> dict[str, Any]:
        """The TOML table for this server, with defaults left out."""
        default = ServerConfig(name=self.name)
        out: dict[str, Any] = {}
        for key in ("transport", "command", "args", "env", "cwd", "url", "headers", "enabled",
                    "trust", "startup_timeout", "call_timeout", "roots", *_OAUTH_KEYS,
                    "disabled_tools"):
            value = getattr(self, key)
            if value != getattr(default, key) and not (key == "transport" and self.url and
                                                       value == "http"):
                out[key] = list(value) if key in _LISTS else dict(value) if isinstance(
                    value, Mapping) else value
        return out


_LISTS = ("args", "roots", "disabled_tools")
_OAUTH_KEYS = ("client_id", "client_secret_env", "callback_port", "client_metadata_url")


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ServerConfigError("name", f"server name {name!r} must be 1-64 letters, digits, "
                                "'_', '-' or '.', starting with a letter or digit")
    return name


def server_from_table(name: str, table: Mapping[str, Any]) -> ServerConfig:
    """Validate one ``[mcp.servers.NAME]`` table; errors name the offending key."""
    check_name(name)
    known = set(ServerConfig.__dataclass_fields__) - {"name"}
    if "client_secret" in table:
        raise ServerConfigError("client_secret", "a secret does not go in the config: put it in "
                                "an environment variable and name that variable in "
                                "`client_secret_env`")
    for key in table:
        if key not in known:
            raise ServerConfigError(key, f"unknown key (known: {', '.join(sorted(known))})")
    values: dict[str, Any] = {}
    for key, value in table.items():
        values[key] = _check_value(key, value)
    url = values.get("url", "")
    transport = values.get("transport") or ("http" if url else "stdio")
    values["transport"] = transport
    if transport == "stdio":
        if not values.get("command"):
            raise ServerConfigError("command", "a stdio server needs `command` (or give `url`)")
        if url:
            raise ServerConfigError("url", "a stdio server takes `command`, not `url`")
        for key in _OAUTH_KEYS:
            if values.get(key):
                raise ServerConfigError(key, "OAuth sign-in is for http and sse servers; a stdio "
                                        "server gets its credentials through `env`")
    elif not url:
        raise ServerConfigError("url", f"a {transport} server needs `url`")
    else:
        _check_url(url)
    return ServerConfig(name=name, **values)


def _check_url(url: str) -> None:
    """The URL, once its ``${VAR}``s are expanded, must be http(s); the text is kept as is."""
    try:
        expanded = expand(url)
    except ServerConfigError:
        return  # a variable that is not set yet: expanded (and fails clearly) at start
    if not re.match(r"^https?://", expanded):
        what = f"{url!r} is not" if expanded == url else f"{url!r} does not expand to"
        raise ServerConfigError("url", f"{what} an http(s) URL")


def _check_value(key: str, value: Any) -> Any:
    if key == "client_secret_env":
        if not isinstance(value, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", value):
            raise ServerConfigError(key, "expected the name of an environment variable (e.g. "
                                    f"\"MY_CLIENT_SECRET\"), got {value!r}")
        return value
    if key == "callback_port":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
            raise ServerConfigError(key, f"expected a port number (1-65535), got {value!r}")
        return value
    if key == "client_metadata_url":
        if not isinstance(value, str) or not re.match(r"^https://[^/]+/.", value):
            raise ServerConfigError(key, "expected an https URL with a path (where your Client "
                                    f"ID Metadata Document is served), got {value!r}")
        return value
    if key in ("command", "cwd", "url", "client_id"):
        if not isinstance(value, str):
            raise ServerConfigError(key, f"expected a string, got {value!r}")
        return value
    if key == "transport":
        if value not in TRANSPORTS:
            raise ServerConfigError(key, f"must be one of {', '.join(TRANSPORTS)}, got {value!r}")
        return value
    if key in _LISTS:
        if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
            raise ServerConfigError(key, "expected a list of strings")
        if key == "disabled_tools":
            return tuple(dict.fromkeys(value))  # each tool once, in the order written
        return tuple(value)
    if key in ("env", "headers"):
        if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ServerConfigError(key, "expected a table of strings, e.g. { KEY = \"value\" }")
        return dict(value)
    if key in ("enabled", "trust"):
        if not isinstance(value, bool):
            raise ServerConfigError(key, f"expected true or false, got {value!r}")
        return value
    if key in ("startup_timeout", "call_timeout"):
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ServerConfigError(key, f"expected a positive number of seconds, got {value!r}")
        return float(value)
    raise ServerConfigError(key, "unknown key")


def expand(text: str, environ: Mapping[str, str] | None = None) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; an unset VAR without default is an error.

    As in the shell, the default also stands in for a VAR that is set but empty.
    """
    environ = os.environ if environ is None else environ

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if default is not None and not value:
            return default
        if value is not None:
            return value
        raise ServerConfigError(name, f"environment variable {name} is not set "
                                "(referenced as ${" + name + "})")

    return _VAR.sub(sub, text)


def child_environment(config: ServerConfig,
                      environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment a stdio server starts with: the safe set + its own."""
    environ = os.environ if environ is None else environ
    env = {k: environ[k] for k in SAFE_ENV if k in environ}
    env.update({k: expand(v, environ) for k, v in config.env.items()})
    return env
