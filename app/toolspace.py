"""Wire the user's configured MCP servers into a Hub (shared by the CLI, TUI and agent)."""

from __future__ import annotations

from collections.abc import Callable

from deskmate.app import paths
from deskmate.app.config import Config


def mcp_log_dir():
    return paths.cache_dir() / "logs" / "mcp"


def mcp_token_dir():
    """HTTP/SSE servers' OAuth sign-ins: one 0600 file per server (never in the config)."""
    return paths.data_dir() / "mcp-auth"


def oauth_setup():
    """Sign-ins kept in the data dir; a new one only through `deskmate mcp login`."""
    from deskmate.tools.hub.oauth import OAuthSetup

    return OAuthSetup(mcp_token_dir())


def open_hub(config: Config, on_change: Callable | None = None, names=None, sampler=None):
    """A Hub over the configured servers (or only ``names``); not started yet.
    ``sampler``: who lets servers use the model (none: sampling is not declared)."""
    from deskmate.tools.hub import Hub

    servers = config.mcp.servers
    chosen = [servers[n] for n in names] if names is not None else list(servers.values())
    return Hub(chosen, mcp_log_dir(), on_change=on_change, oauth=oauth_setup(),
               sampler=sampler)
