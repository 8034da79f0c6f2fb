"""Finetune runs in SQLite and on disk: a ``runs`` row and a run folder per run.

The folder (``<data dir>/finetune/run-<id>``) holds the spec, the progress log,
checkpoints, ``rubrics.toml`` and the exported adapter; ``runs.log_path`` points to
the progress log, which is how ``--resume RUN`` finds the folder again.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from app import paths
from finetune.run import RunSpec


def runs_dir() -> Path:
    return paths.data_dir() / "finetune"


def _db(db_path: str = ""):
    from app.store import open_db

    return open_db(Path(db_path) if db_path else None)


def start_run(spec: RunSpec) -> tuple[RunSpec, Path]:
    """Create the run row and folder; returns the spec with its run_id, and the folder."""
    from app.store.db import transaction

    db = _db(spec.db_path)
    with transaction(db) as conn:
        run_id = int(conn.execute(
            "INSERT INTO runs (kind, base_model, config, status, started_at) "
            "VALUES ('finetune', ?, ?, 'running', ?)",
            (spec.serving_gguf, json.dumps(asdict(spec)), time.time())).lastrowid)
        run_dir = runs_dir() / f"run-{run_id}"
        conn.execute("UPDATE runs SET log_path = ? WHERE id = ?",
                     (str(run_dir / "progress.jsonl"), run_id))
    spec = replace(spec, run_id=run_id)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "spec.json").write_text(json.dumps(asdict(spec), indent=2))
    return spec, run_dir


def find_run(run_id: int, db_path: str = "") -> tuple[RunSpec, Path]:
    """The spec and folder of an earlier run, to resume it."""
    row = _db(db_path).execute("SELECT log_path FROM runs WHERE id = ? AND kind = 'finetune'",
                               [run_id]).fetchone()
    if row is None or not row[0]:
        raise LookupError(f"no finetune run {run_id}: the runs are the run-N folders "
                          f"in {runs_dir()}")
    run_dir = Path(row[0]).parent
    spec_file = run_dir / "spec.json"
    if not spec_file.exists():
        raise LookupError(f"run {run_id}: {spec_file} is missing, so it cannot be resumed")
    return RunSpec(**json.loads(spec_file.read_text())), run_dir


def finish_run(spec: RunSpec, status: str, metrics: dict[str, Any]) -> None:
    if spec.run_id is None:
        return
    from app.store.db import transaction

    with transaction(_db(spec.db_path)) as conn:
        conn.execute("UPDATE runs SET status = ?, metrics = ?, finished_at = ? WHERE id = ?",
                      (status, json.dumps(metrics, default=str), time.time(), spec.run_id))


def adapter_of(db: Any, run_id: int) -> Path:
    row = db.execute("SELECT path FROM adapters WHERE run_id = ? ORDER BY id DESC LIMIT 1",
                     [run_id]).fetchone()
    if row is None:
        raise LookupError(f"run {run_id} has no exported adapter (did it finish?)")
    return Path(row[0])


def activate(run_id: int, db_path: str = "") -> Path:
    """Mark the run's adapter active in the store; the caller sets [model] adapter."""
    from app.store.db import transaction

    db = _db(db_path)
    path = adapter_of(db, run_id)
    with transaction(db) as conn:
        conn.execute("UPDATE adapters SET active = (run_id = ?)", (run_id,))
    return path
