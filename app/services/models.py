"""Choosing the model: what there is to choose from, and making one the configured model.

Blocking (verifying a GGUF reads its header and may hash it; listing looks into the
Hugging Face cache), so the TUI calls these from thread workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deskmate.app.config import Config, update_config

MAX_LOCAL_FILES = 50  # .gguf files offered from the folders searched


@dataclass(frozen=True)
class KnownModel:
    """A registry model and whether it is on this machine."""

    name: str
    description: str
    size_mb: int  # 0: unknown
    path: Path | None  # the downloaded (or packaged) file; None: not here yet
    active: bool  # the config names it
    recommended: bool
    source: str  # the Hugging Face repo, or pip:PACKAGE for a packaged one
    train: str  # the Hugging Face checkpoint a LoRA for it is trained on


@dataclass(frozen=True)
class ModelChosen:
    """The outcome of ``use_model``."""

    config: Config  # the config as written
    value: str  # what ``[model] name`` now says: the spec, or a local file's full path
    downloaded: bool  # False: a known model not pulled yet; loading it pulls it


def known_models(active: str) -> list[KnownModel]:
    """The registry's models, each with its local file when it has been downloaded."""
    from deskmate.app.llm.registry import cached_path, parse_model_spec, registry

    models = []
    for entry in registry().values():
        models.append(KnownModel(
            name=entry.name, description=entry.description, size_mb=entry.size_mb,
            path=cached_path(parse_model_spec(entry.name)), active=entry.name == active,
            recommended=entry.recommended, source=entry.repo or f"pip:{entry.pip}",
            train=entry.train))
    return models


def local_model_files(active: str) -> list[Path]:
    """.gguf files near at hand: beside the active model, here, and in our data dir."""
    from deskmate.app import paths

    folders = [Path.cwd(), paths.data_dir() / "models"]
    if active.endswith(".gguf"):
        folders.insert(0, Path(active).expanduser().parent)
    found: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            found.extend(sorted(p for p in folder.glob("*.gguf") if p.is_file()))
    return found[:MAX_LOCAL_FILES]


def use_model(spec: str, config_path: Path | None) -> ModelChosen:
    """Make ``spec`` (registry name, hf:…, or a .gguf path) the configured model.

    A local file must be a whole GGUF (``ModelError`` otherwise) and is written as its
    full path; a known model that is not downloaded yet is chosen now and pulled on
    first use.
    """
    from deskmate.app.llm.download import verify
    from deskmate.app.llm.registry import ModelNotDownloaded, parse_model_spec, resolve_model

    source = parse_model_spec(spec)
    value, downloaded = spec, True
    if source.path is not None and not source.entry:
        path = source.path.resolve()
        verify(path)
        value = str(path)
    else:
        try:
            verify(resolve_model(spec))
        except ModelNotDownloaded:
            downloaded = False

    def set_model(data: dict[str, Any]) -> None:
        data.setdefault("model", {})["name"] = value

    return ModelChosen(update_config(set_model, config_path), value, downloaded)


def set_model_option(key: str, value: object, config_path: Path | None) -> Config:
    """Change one ``[model]`` key (context, adapter, …); validated before it is written.

    An empty adapter removes the key: no adapter.
    """

    def mutate(data: dict[str, Any]) -> None:
        if value in ("", None) and key == "adapter":
            data.setdefault("model", {}).pop(key, None)
        else:
            data.setdefault("model", {})[key] = value

    return update_config(mutate, config_path)
