"""benchmarks/eval_runs.py's report: a task that ran off --stable is named, since it does not
compare task by task with its twin in another run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/ is no package


def result(score: float, off: tuple[str, ...] = ()) -> dict:
    return {"modes": {"code": {"success_rate": float(score == 1), "mean_score": score,
                               "prompt_tokens_mean": 1000, "model_calls_mean": 3,
                               "wall_s_mean": 10.0, "off_stable": list(off)}}}


def test_totals_name_the_tasks_that_ran_off_stable(tmp_path):
    from benchmarks.eval_runs import totals

    warned = {
        "a": "",
        # what the runner warned when a second run beside the first took another folder
        "b": "RuntimeWarning: /tmp/deskmate-eval-b-stable is in use (another eval, or left "
             "by one that was killed: remove it when no eval runs); task b runs in a folder "
             "of its own, not --stable\n",
        "c": "RuntimeWarning: port 47631 is in use (another eval running?): the local site "
             "serves on 40001, so the tasks' addresses differ from a --stable run's\n",
        # waiting for the other run, or a left folder moved aside, keeps the path
        "d": "RuntimeWarning: another --stable eval holds /tmp/deskmate-eval-d-stable.lock: "
             "waiting for it to finish that task, so this run sees the same paths\n",
    }
    for task, text in warned.items():
        (tmp_path / task).mkdir()
        (tmp_path / task / "stderr.txt").write_text(text)
    # a commit since session 36 says it in its JSON, whatever its stderr holds
    (tmp_path / "e").mkdir()
    figures = totals({"a": result(1.0), "b": result(0.5), "c": result(0.0), "d": None,
                      "e": result(0.0, off=("e",))}, tmp_path)
    assert figures["off_stable"] == ["b", "c", "e"]
    assert figures["solved"] == 1 and figures["ran"] == 4 and figures["failed_to_run"] == ["d"]
    assert json.loads(json.dumps(figures)) == figures
