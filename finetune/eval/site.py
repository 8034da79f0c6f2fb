"""The local web site fetch tasks read: a suite's ``site/`` folder over HTTP.

Served on 127.0.0.1, in a daemon thread, quietly: by the eval runner while a task that
reads it runs (on the stable port with --stable), by the finetune pipeline for its whole
run at a free port.
Tasks reach it at ``${SITE_URL}``; ``mcp-server-fetch`` needs ``--allow-private-ips``
to read from it.
"""

from __future__ import annotations

import functools
import threading
import warnings
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class LocalSite:
    def __init__(self, folder: Path, port: int = 0) -> None:
        """``port``: the one to serve on (``--stable``), else a free one; a port in use
        falls back to a free one."""
        handler = functools.partial(_QuietHandler, directory=str(folder))
        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        except OSError:
            if not port:
                raise
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
            warnings.warn(f"port {port} is in use (another eval running?): the local site "
                          f"serves on {self._server.server_address[1]}, so the tasks' "
                          "addresses differ from a --stable run's", RuntimeWarning,
                          stacklevel=2)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="eval-site", daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LocalSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
