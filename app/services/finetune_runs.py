"""Deleting a finetune run: its record and its folder, never what is in use.

A run that failed or was abandoned keeps a folder (checkpoints, an adapter, its log)
and a row in the store; the Finetune screen's ``d`` and ``deskmate finetune delete``
remove both, after these checks.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from deskmate.app.config import Config


class RunNotDeleted(ValueError):
    """The run cannot be deleted now; the message says why and what to do."""


@dataclass(frozen=True)
class RunDeleted:
    run_id: int
    folder: Path | None  # removed; None when the run had none left


def delete_run(run_id: int, config: Config, db_path: str = "") -> RunDeleted:
    """Delete finetune run ``run_id``; refused while its adapter is the one served."""
    from deskmate.app.store import open_db
    from deskmate.app.store.runs import adapter_path, delete_finetune_run
    from deskmate.finetune.runs import runs_dir

    with open_db(Path(db_path) if db_path else None) as db:
        adapter = adapter_path(db, run_id)
        served = Path(config.model.adapter).expanduser() if config.model.adapter else None
        if served is not None and adapter is not None and (
                served == adapter or adapter.parent in served.parents):
            raise RunNotDeleted(f"run {run_id}'s adapter is the one served ([model] adapter): "
                                "serve another one, or none, first (F4 o, or `deskmate "
                                "config` [model] adapter)")
        try:
            folder = delete_finetune_run(db, run_id)
        except LookupError as exc:
            raise RunNotDeleted(str(exc)) from exc
    # Only a folder of ours goes: a record pointing elsewhere leaves that place alone.
    root = runs_dir().resolve()
    if folder is not None and folder.resolve().parent == root and folder.is_dir():
        shutil.rmtree(folder)
        return RunDeleted(run_id, folder)
    return RunDeleted(run_id, None)
