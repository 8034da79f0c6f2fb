"""The finetuning process, one per run::

    python -m deskmate.finetune.run RUN_DIR/spec.json [--json-progress]

``deskmate finetune`` and the Finetune screen write the spec and start this
(``finetune.runs.follow``): GPU memory and crashes stay out of the app. It runs the
pipeline (``finetune/pipeline.py``) and prints one line per progress event
(``finetune/progress.py``) — JSON with ``--json-progress`` (what the readers parse),
else the readable text. The run's row gets its end status and metrics.

Exit codes: 0 finished, 2 a user error (``RunError``: the ``error`` line says what to
do), 130 stopped (Ctrl+C / SIGINT; the newest checkpoint resumes it).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from deskmate.finetune.progress import Done, Failed, Interrupted, ProgressEvent, describe
from deskmate.finetune.spec import RunError, RunSpec


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json-progress" in args
    spec_path = Path(next(a for a in args if not a.startswith("--")))
    spec = RunSpec(**json.loads(spec_path.read_text()))
    run_dir = spec_path.parent

    # A stop (SIGINT) can land inside a library's import that catches every exception
    # and goes on (torchao's kernel loader does: it logs "Failed to load" and carries
    # on); the run then ignored it. Remembered here, it is raised again at the next
    # progress line at the latest.
    stop_asked = threading.Event()

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        stop_asked.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)

    def emit(event: ProgressEvent) -> None:
        print(json.dumps(event.to_json()) if as_json else describe(event), flush=True)
        if stop_asked.is_set() and not isinstance(event, Interrupted | Failed):
            raise KeyboardInterrupt

    from deskmate.finetune.pipeline import run
    from deskmate.finetune.runs import finish_run

    status = "failed"
    metrics: dict[str, Any] = {}
    try:
        metrics = run(spec, run_dir, emit)
        status = "finished"
        emit(Done(run_id=spec.run_id, steps=metrics["steps"], adapter=metrics["adapter"],
                  adapter_id=metrics["adapter_id"], heldout=metrics.get("heldout")))
        return 0
    except KeyboardInterrupt:
        status = "interrupted"
        emit(Interrupted(run_id=spec.run_id))
        return 130
    except RunError as exc:
        emit(Failed(message=str(exc)))
        return 2
    finally:
        finish_run(spec, status, metrics)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
