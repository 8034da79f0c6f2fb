"""Finetune runs in SQLite and on disk: a ``runs`` row and a run folder per run.

The folder (``<data dir>/finetune/run-<id>``) holds the spec, the progress log,
checkpoints, ``rubrics.toml`` and the exported adapter; ``runs.log_path`` points to
the progress log, which is how ``--resume RUN`` finds the folder again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.app import paths
from deskmate.finetune.progress import ProgressEvent, parse_progress
from deskmate.finetune.spec import RunSpec

if TYPE_CHECKING:
    from deskmate.app.store.db import Database


def runs_dir() -> Path:
    return paths.data_dir() / "finetune"


def _db(db_path: str = ""):
    from deskmate.app.store import open_db

    return open_db(Path(db_path) if db_path else None)


def training_models(name: str) -> tuple[Path, str]:
    """The serving GGUF of model ``name``, and what to train: the Hugging Face checkpoint
    its registry entry pairs with it, else the GGUF itself (read by transformers).

    Raises app.llm's ModelError (e.g. not downloaded yet) with what to do."""
    from deskmate.app.llm.registry import parse_model_spec, resolve_model

    path = resolve_model(name)
    entry = parse_model_spec(name).entry
    return path, (entry.train if entry and entry.train else str(path))


def start_run(spec: RunSpec) -> tuple[RunSpec, Path]:
    """Create the run row and folder; returns the spec with its run_id, and the folder."""
    from deskmate.app.store import runs

    with _db(spec.db_path) as db:
        run_id = runs.start_run(db, kind="finetune", base_model=spec.serving_gguf,
                                config_json=json.dumps(asdict(spec)),
                                log_path=lambda i: runs_dir() / f"run-{i}" / "progress.jsonl")
    run_dir = runs_dir() / f"run-{run_id}"
    spec = replace(spec, run_id=run_id)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "spec.json").write_text(json.dumps(asdict(spec), indent=2))
    return spec, run_dir


def find_run(run_id: int, db_path: str = "") -> tuple[RunSpec, Path]:
    """The spec and folder of an earlier run, to resume it."""
    from deskmate.app.store.runs import finetune_log_path

    with _db(db_path) as db:
        log_path = finetune_log_path(db, run_id)
    if log_path is None:
        raise LookupError(f"no finetune run {run_id}: the runs are the run-N folders "
                          f"in {runs_dir()}")
    run_dir = Path(log_path).parent
    spec_file = run_dir / "spec.json"
    if not spec_file.exists():
        raise LookupError(f"run {run_id}: {spec_file} is missing, so it cannot be resumed")
    return RunSpec(**json.loads(spec_file.read_text())), run_dir


def finish_run(spec: RunSpec, status: str, metrics: dict[str, Any]) -> None:
    if spec.run_id is None:
        return
    from deskmate.app.store import runs

    with _db(spec.db_path) as db:
        runs.finish_run(db, spec.run_id, status=status,
                        metrics_json=json.dumps(metrics, default=str))


def activate(run_id: int, db_path: str = "") -> Path:
    """Mark the run's adapter active in the store; the caller sets [model] adapter."""
    from deskmate.app.store.runs import activate_adapter, adapter_path

    with _db(db_path) as db:
        path = adapter_path(db, run_id)
        if path is None:
            raise LookupError(f"run {run_id} has no exported adapter (did it finish?)")
        activate_adapter(db, run_id)
    return path


def follow(run_dir: Path, on_line: Callable[[str], None], *,
           on_start: Callable[[subprocess.Popen[str]], None] | None = None,
           merge_stderr: bool = False) -> int:
    """Run the training process of ``run_dir`` to its end; returns its exit code.

    Training runs in a child process: it holds GPU memory and may crash without taking
    the CLI or the app along. Each line it prints is appended to the run's
    ``progress.jsonl`` (which outlives the caller) and handed to ``on_line``.
    ``merge_stderr`` sends its tracebacks the same way (the app has no terminal to show
    them); otherwise they go to our stderr. ``on_start`` gets the process, to stop it.
    """
    cmd = [sys.executable, "-m", "deskmate.finetune.run", str(run_dir / "spec.json"),
           "--json-progress"]
    env = None
    if merge_stderr:  # no terminal: progress bars would arrive as a line per redraw
        env = {**os.environ, "TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    with open(run_dir / "progress.jsonl", "a", encoding="utf-8") as log, \
            subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                             stderr=subprocess.STDOUT if merge_stderr else None,
                             env=env) as child:
        assert child.stdout is not None
        if on_start is not None:
            on_start(child)
        try:
            for line in child.stdout:
                log.write(line)
                log.flush()
                on_line(line)
        except KeyboardInterrupt:
            if child.poll() is None:  # the run records itself as interrupted, then exits
                child.send_signal(signal.SIGINT)
            raise
        return child.wait()


@dataclass(frozen=True)
class RunRecord:
    """A finetune run as the Finetune screen lists it."""

    run_id: int
    status: str  # running, finished, failed, interrupted
    started_at: float
    run_dir: Path | None
    steps: int  # steps in the spec
    adapter: Path | None  # the exported adapter, once there is one
    active: bool  # the adapter is the one being served


def list_runs(db: Database, limit: int = 50) -> list[RunRecord]:
    """The finetune runs, newest first."""
    from deskmate.app.store.runs import list_finetune_runs

    out = []
    for row in list_finetune_runs(db, limit):
        try:
            steps = int(row.config.get("grpo", {}).get("steps", 0))
        except (ValueError, AttributeError):
            steps = 0
        out.append(RunRecord(row.id, row.status, row.started_at,
                             Path(row.log_path).parent if row.log_path else None, steps,
                             Path(row.adapter_path) if row.adapter_path else None,
                             row.adapter_active))
    return out


def read_progress(run_dir: Path) -> list[ProgressEvent]:
    """The progress events a run has printed so far, its text lines (a failed run's
    traceback, merged from stderr by ``follow``) included: they are why it failed."""
    path = run_dir / "progress.jsonl"
    if not path.exists():
        return []
    events = (parse_progress(raw)
              for raw in path.read_text(encoding="utf-8", errors="replace").splitlines())
    return [e for e in events if e is not None]
