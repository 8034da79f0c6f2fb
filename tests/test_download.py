"""`deskmate models pull` through the real huggingface_hub client, against a local
stand-in for the Hub (HF_ENDPOINT) that serves the tiny model over loopback."""

from __future__ import annotations

import hashlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import deskmate

pytestmark = pytest.mark.slow

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    """Serves files at /{owner}/{repo}/resolve/{revision}/{file}, as the Hub does."""

    def __init__(self, files: dict[str, tuple[bytes, str]]) -> None:
        self.files = files  # "owner/repo/file" -> (content, sha256 advertised)
        self.gets = 0
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _lookup(self):
                match = re.match(r"^/([^/]+/[^/]+)/resolve/[^/]+/(.+)$", self.path.split("?")[0])
                return hub.files.get(f"{match[1]}/{match[2]}") if match else None

            def _headers(self, content: bytes, sha: str, status=200, start=0):
                self.send_response(status)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{sha}"')
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(content) - start))
                if status == 206:
                    self.send_header("Content-Range",
                                     f"bytes {start}-{len(content) - 1}/{len(content)}")
                self.end_headers()

            def do_HEAD(self):
                found = self._lookup()
                if not found:
                    self.send_error(404)
                    return
                self._headers(*found)

            def do_GET(self):
                found = self._lookup()
                if not found:
                    self.send_error(404)
                    return
                hub.gets += 1
                content, sha = found
                start = 0
                if rng := self.headers.get("Range"):
                    start = int(re.match(r"bytes=(\d+)-", rng)[1])
                self._headers(content, sha, 206 if start else 200, start)
                self.wfile.write(content[start:])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture(scope="module")
def hub(tiny_model_path):
    content = tiny_model_path.read_bytes()
    sha = hashlib.sha256(content).hexdigest()
    bad = content[:-1000] + b"\0" * 1000  # right size and header, wrong bytes
    server = FakeHub({"test/tiny-GGUF/tiny.gguf": (content, sha),
                      "test/tiny-GGUF/corrupt.gguf": (bad, sha)})
    yield server
    server.close()


def against_hub(*args, home: Path, hub: FakeHub):
    """The CLI against the local Hub stand-in."""
    return deskmate(*args, home=home, env={"HF_ENDPOINT": hub.url,
                                           "HF_HUB_DISABLE_TELEMETRY": "1",
                                           "HF_HUB_DISABLE_XET": "1"})


def test_pull_downloads_verifies_and_caches(hub, home, tiny_model_path):
    spec = "hf:test/tiny-GGUF/tiny.gguf"
    result = against_hub("models", "pull", spec, home=home, hub=hub)
    assert result.returncode == 0, result.stderr
    path = Path(result.stdout.strip().splitlines()[-1])
    assert path.is_relative_to(home / "cache" / "huggingface")
    assert path.read_bytes() == tiny_model_path.read_bytes()
    assert "tiny.gguf" in result.stderr  # the progress bar names the file
    gets = hub.gets
    again = against_hub("models", "pull", spec, home=home, hub=hub)
    assert again.returncode == 0 and Path(again.stdout.strip()) == path
    assert hub.gets == gets  # served from the cache, not downloaded twice


def test_chat_pulls_a_named_model_on_first_use(hub, home):
    result = against_hub("chat", "-m", "hf:test/tiny-GGUF/tiny.gguf", "--json", "-t", "0",
                      "--max-tokens", "4", "hi", home=home, hub=hub)
    assert result.returncode == 0, result.stderr
    assert "downloading tiny.gguf" in result.stderr


def test_corrupt_download_is_rejected(hub, home):
    result = against_hub("models", "pull", "hf:test/tiny-GGUF/corrupt.gguf", home=home, hub=hub)
    assert result.returncode == 1
    assert "does not match its published sha256" in result.stderr
    assert "removed from the cache" in result.stderr
    assert "Traceback" not in result.stderr
    # Nothing of it is left to be used by --model or relinked by the next pull.
    cache = home / "cache" / "huggingface"
    assert not [p for p in cache.rglob("*") if p.is_file() and p.stat().st_size > 1_000_000]
    use = against_hub("models", "use", "hf:test/tiny-GGUF/corrupt.gguf", home=home, hub=hub)
    assert use.returncode == 0 and "not downloaded yet" in use.stdout + use.stderr
    # Once the Hub serves the right bytes, a pull downloads them.
    good = hub.files["test/tiny-GGUF/tiny.gguf"]
    bad, hub.files["test/tiny-GGUF/corrupt.gguf"] = hub.files["test/tiny-GGUF/corrupt.gguf"], good
    try:
        gets = hub.gets
        again = against_hub("models", "pull", "hf:test/tiny-GGUF/corrupt.gguf", home=home, hub=hub)
        assert again.returncode == 0, again.stderr
        assert hub.gets > gets
    finally:
        hub.files["test/tiny-GGUF/corrupt.gguf"] = bad


def test_missing_file_on_the_hub(hub, home):
    result = against_hub("models", "pull", "hf:test/tiny-GGUF/absent.gguf", home=home, hub=hub)
    assert result.returncode == 1
    assert "could not download absent.gguf" in result.stderr
    assert ".." not in result.stderr, "a sentence that ends in a period gets no second one"
