"""Finetune and eval ``runs``, and the ``adapters`` finetune runs export.

JSON columns (``config``, ``metrics``) arrive as text in the caller's format; ``config``
is read back parsed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from deskmate.app.store.db import Database, transaction
from deskmate.app.store.records import FinetuneRunRow

RunKind = Literal["finetune", "eval"]


def start_run(db: Database, *, kind: RunKind, base_model: str, config_json: str,
              log_path: Callable[[int], Path] | None = None) -> int:
    """A new ``running`` run; its id. ``log_path`` names the progress log from the id,
    written in the same transaction so a run is never seen without it."""
    with transaction(db) as conn:
        run_id = int(conn.execute(
            "INSERT INTO runs (kind, base_model, config, status, started_at) "
            "VALUES (?, ?, ?, 'running', ?)",
            (kind, base_model, config_json, time.time())).lastrowid or 0)
        if log_path is not None:
            conn.execute("UPDATE runs SET log_path = ? WHERE id = ?",
                         (str(log_path(run_id)), run_id))
    return run_id


def finish_run(db: Database, run_id: int, *, status: str, metrics_json: str) -> None:
    with transaction(db) as conn:
        conn.execute("UPDATE runs SET status = ?, metrics = ?, finished_at = ? WHERE id = ?",
                     (status, metrics_json, time.time(), run_id))


def finetune_log_path(db: Database, run_id: int) -> str | None:
    """The progress log of finetune run ``run_id``; None when there is no such run (or
    it has no log)."""
    row = db.execute("SELECT log_path FROM runs WHERE id = ? AND kind = 'finetune'",
                     [run_id]).fetchone()
    return row[0] if row and row[0] else None


def list_finetune_runs(db: Database, limit: int = 50) -> list[FinetuneRunRow]:
    """The finetune runs with their newest adapter, newest first."""
    rows = db.execute(
        "SELECT r.id, r.status, r.started_at, r.log_path, r.config, a.path, a.active "
        "FROM runs r LEFT JOIN adapters a ON a.id = (SELECT MAX(id) FROM adapters "
        "WHERE run_id = r.id) WHERE r.kind = 'finetune' ORDER BY r.id DESC LIMIT ?",
        [limit]).fetchall()
    return [FinetuneRunRow(int(run_id), status or "", float(started or 0), log_path or None,
                           _parsed(config), adapter or None, bool(active))
            for run_id, status, started, log_path, config, adapter, active in rows]


def _parsed(config: str | None) -> dict:
    try:
        value = json.loads(config or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------- adapters


def store_adapter(db: Database, *, run_id: int | None, name: str, base_model: str,
                  path: Path) -> int:
    """Record an exported adapter (inactive), replacing one of the same name; its id."""
    with transaction(db) as conn:
        conn.execute("DELETE FROM adapters WHERE name = ?", (name,))
        return int(conn.execute(
            "INSERT INTO adapters (run_id, name, base_model, path, active, created_at) "
            "VALUES (?, ?, ?, ?, 0, ?)",
            (run_id, name, base_model, str(path), time.time())).lastrowid or 0)


def adapter_path(db: Database, run_id: int) -> Path | None:
    """The newest adapter run ``run_id`` exported; None before it exported one."""
    row = db.execute("SELECT path FROM adapters WHERE run_id = ? ORDER BY id DESC LIMIT 1",
                     [run_id]).fetchone()
    return Path(row[0]) if row else None


def activate_adapter(db: Database, run_id: int) -> None:
    """Mark run ``run_id``'s adapters active and every other one inactive."""
    with transaction(db) as conn:
        conn.execute("UPDATE adapters SET active = (run_id = ?)", (run_id,))


def delete_finetune_run(db: Database, run_id: int) -> Path | None:
    """Forget finetune run ``run_id``: its row, its adapters' rows, its eval results.
    Returns the folder of its progress log (the run's folder) for the caller to remove;
    ``LookupError`` when there is no such run."""
    row = db.execute("SELECT log_path FROM runs WHERE id = ? AND kind = 'finetune'",
                     [run_id]).fetchone()
    if row is None:
        raise LookupError(f"there is no finetune run {run_id}")
    with transaction(db) as conn:
        conn.execute("DELETE FROM adapters WHERE run_id = ?", (run_id,))
        conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
    return Path(row[0]).parent if row[0] else None

