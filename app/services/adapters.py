"""Serving a finetune run's adapter: ``deskmate finetune use RUN`` and the Finetune
screen's u.

Blocking (SQLite, the config file), so the TUI calls it from a thread worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deskmate.app.config import Config
from deskmate.app.services.models import set_model_option


class AdapterError(ValueError):
    """The run has no adapter to serve; the message says which and why."""


@dataclass(frozen=True)
class AdapterServed:
    run_id: int
    path: Path  # the GGUF adapter, now ``[model] adapter``
    config: Config  # the config as written


def serve_adapter(run_id: int, config_path: Path | None, db_path: str = "") -> AdapterServed:
    """Mark run ``run_id``'s adapter active in the store and set ``[model] adapter``.

    The model has to be reloaded for it to take effect (the caller's job)."""
    from deskmate.finetune.runs import activate

    try:
        path = activate(run_id, db_path)
    except LookupError as exc:
        raise AdapterError(str(exc)) from exc
    if not path.exists():
        raise AdapterError(f"the adapter of run {run_id} is gone: {path}")
    return AdapterServed(run_id, path, set_model_option("adapter", str(path), config_path))
