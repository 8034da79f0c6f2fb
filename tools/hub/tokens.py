"""Where a server's OAuth sign-in is kept: one JSON file per server, readable by its owner only.

``<token_dir>/<server>.json`` holds the tokens, when the access token expires, and the
client registration the authorization server gave us. The file names the server URL it
was made for: if the config later points the name at another URL, the old tokens are
never sent there (they read as absent). Nothing here writes to the config or to a log.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class FileTokenStorage:
    """The mcp SDK's ``TokenStorage`` over one file (written atomically, mode 0600).

    ``preregistered`` is a client registration from the config (``client_id``): it is what
    ``get_client_info`` answers, and it is never written to the file.
    """

    def __init__(self, path: Path, server_url: str,
                 preregistered: OAuthClientInformationFull | None = None) -> None:
        self.path = path
        self.server_url = server_url
        self.preregistered = preregistered

    # ---------------------------------------------------------------- the SDK's protocol

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        data = self._read().get("tokens")
        return OAuthToken.model_validate(data) if data else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True),
                    expires_at=expires_at)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        if self.preregistered is not None:
            return self.preregistered
        data = self._read().get("client")
        return OAuthClientInformationFull.model_validate(data) if data else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.preregistered is None:
            self._write(client=client_info.model_dump(mode="json", exclude_none=True))

    # ---------------------------------------------------------------- ours

    def expires_at(self) -> float | None:
        """When the stored access token expires (epoch seconds), if the server said."""
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def has_tokens(self) -> bool:
        return bool(self._read().get("tokens"))

    def forget_client(self) -> None:
        """Drop a dynamic registration (its redirect URI no longer matches our listener)."""
        data = self._read()
        if data.pop("client", None) is not None:
            self._save(data)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("server_url") != self.server_url:
            return {}  # made for another URL: never send its tokens here
        return data

    def _write(self, **changes: Any) -> None:
        self._save({**self._read(), **changes})

    def _save(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        # Created 0600 from the start: the tokens are never readable by others, even briefly.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({**data, "server_url": self.server_url}, out, indent=1)
        os.replace(tmp, self.path)


def token_file(token_dir: Path, server: str) -> Path:
    return token_dir / f"{server}.json"


def forget(token_dir: Path, server: str) -> bool:
    """Delete a server's sign-in; whether there was one."""
    path = token_file(token_dir, server)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
