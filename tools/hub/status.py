"""One sentence for a server that is not ready, the same in the app, the CLI and eval."""

from __future__ import annotations

from deskmate.tools.hub.connection import ServerState

_PHRASES = {
    "failed": "failed",
    "stopped": "is stopped",
    "disabled": "is disabled",
    "starting": "is still starting",
    "needs-sign-in": "needs sign-in",
}


def not_ready(state: ServerState, limit: int = 0) -> str:
    """"MCP server NAME failed: REASON" — the reason is the error's first line, or its
    first ``limit`` characters when a limit is given."""
    phrase = _PHRASES.get(state.status, f"is {state.status}")
    error = (state.error or "").strip()
    reason = error[:limit] if limit else (error.splitlines()[0] if error else "")
    return f"MCP server {state.name} {phrase}" + (f": {reason}" if reason else "")
