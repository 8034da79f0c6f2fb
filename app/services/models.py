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
    full path; a known model that is not on this machine yet (a download, or the tiny
    model's package) is chosen now and pulled on first use: ``downloaded`` says so.
    """
    from deskmate.app.llm.download import verify
    from deskmate.app.llm.registry import ModelNotDownloaded, parse_model_spec, resolve_model

    source = parse_model_spec(spec)
    value, downloaded = spec, True
    if source.path is not None and not source.entry:
        path = source.path.resolve()
        verify(path)
        value = str(path)
    elif source.entry and source.entry.package and source.path is None:
        downloaded = False  # its package is not installed: pulling installs it
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


class BadAdapter(ValueError):
    """The file given as the LoRA adapter cannot be one; the message says why and what
    to do."""


def check_adapter(value: str, base_architecture: str = "") -> Path:
    """The full path of the LoRA adapter ``value`` names, once its header says it is one.

    ``base_architecture`` (the loaded model's, when one is) must match the adapter's: an
    adapter only applies to the model family it was trained on. Reads the GGUF header,
    so it is quick even for a large file.
    """
    from deskmate.app.llm.gguf_file import GGUFError, NotAnAdapter
    from deskmate.app.llm.gguf_file import check_adapter as check_header

    path = Path(value).expanduser().resolve()
    if not path.is_file():
        raise BadAdapter(f"LoRA adapter {path}: no such file. Give the path of a .gguf "
                         "adapter (a finetune run writes one: F5, u serves it), or leave it "
                         "empty for none")
    try:
        check_header(path, base_architecture)
    except NotAnAdapter as exc:
        raise BadAdapter(str(exc)) from exc
    except GGUFError as exc:
        raise BadAdapter(f"LoRA adapter: {exc}") from exc
    return path


def set_adapter(value: str, config_path: Path | None, base_architecture: str = "") -> Config:
    """Make ``value`` the ``[model] adapter`` once ``check_adapter`` accepts it (written as
    its full path); an empty value removes the adapter. Nothing is written on an error."""
    if not value.strip():
        return set_model_option("adapter", "", config_path)
    path = check_adapter(value.strip(), base_architecture)
    return set_model_option("adapter", str(path), config_path)
