"""MCP connections: configs, the hub that runs them, tool results."""

from deskmate.tools.hub.connection import ServerState
from deskmate.tools.hub.hub import Hub
from deskmate.tools.hub.results import (
    ContentItem,
    ServerUnavailable,
    ToolCallError,
    ToolCancelled,
    ToolDisabled,
    ToolResult,
    ToolTimeout,
)
from deskmate.tools.hub.servers import ServerConfig, ServerConfigError, server_from_table

__all__ = [
    "ContentItem",
    "Hub",
    "ServerConfig",
    "ServerConfigError",
    "ServerState",
    "ServerUnavailable",
    "ToolCallError",
    "ToolCancelled",
    "ToolDisabled",
    "ToolResult",
    "ToolTimeout",
    "server_from_table",
]
