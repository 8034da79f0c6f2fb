"""Blocking model chores shared by the models screen and the first-run flow.

Called from thread workers only: verifying a GGUF reads its header and may hash it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from deskmate.app.config import Config, update_config


def activate(spec: str, config_path: Path | None) -> tuple[Config, str]:
    """Make ``spec`` the configured model (checking local files first)."""
    from deskmate.app.llm.download import verify
    from deskmate.app.llm.registry import ModelNotDownloaded, parse_model_spec, resolve_model

    source = parse_model_spec(spec)
    value = spec
    if source.path is not None and not source.entry:
        path = source.path.expanduser().resolve()
        verify(path)
        value = str(path)
    else:
        # Not downloaded yet: chosen now, pulled later (loading it says how).
        with contextlib.suppress(ModelNotDownloaded):
            verify(resolve_model(spec))

    def set_model(data: dict) -> None:
        data.setdefault("model", {})["name"] = value

    return update_config(set_model, config_path), value


def set_model_option(key: str, value: object, config_path: Path | None) -> Config:
    """Change one ``[model]`` key (context, adapter, …); validated before it is written."""

    def mutate(data: dict) -> None:
        if value in ("", None) and key == "adapter":
            data.setdefault("model", {}).pop(key, None)
        else:
            data.setdefault("model", {})[key] = value

    return update_config(mutate, config_path)
