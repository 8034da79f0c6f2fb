"""Aggregates of an eval run: per-mode numbers, the tables, the comparison chart.

``summarize`` gives the JSON shape ``deskmate eval --json`` prints::

    {"modes": {"code": {"success_rate", "mean_score", "prompt_tokens_mean",
                        "model_calls_mean", "tool_calls_mean", "wall_s_mean",
                        "runs", "errors", "off_stable": [ID], "tasks": {ID: score}},
               ...}}

Tasks without a deterministic check (rubric only) count in the cost means but not in
success rate or mean score; a task's score is its mean over repeats.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from deskmate.app.agent.modes import Mode
from deskmate.finetune.eval.results import TaskRun

COLUMNS = (("success_rate", "success", "{:.0%}"), ("mean_score", "score", "{:.2f}"),
           ("prompt_tokens_mean", "prompt tok", "{:,.0f}"),
           ("model_calls_mean", "model calls", "{:.1f}"),
           ("tool_calls_mean", "tool calls", "{:.1f}"), ("wall_s_mean", "wall s", "{:.1f}"))


def _mean(values: Sequence[float]) -> float | None:
    return round(fmean(values), 4) if values else None


def summarize(results: Sequence[TaskRun]) -> dict[str, Any]:
    by_mode: dict[str, list[TaskRun]] = defaultdict(list)
    for r in results:
        by_mode[r.mode].append(r)
    modes = {}
    for mode, runs in by_mode.items():
        scored = [r for r in runs if r.score is not None]
        per_task: dict[str, list[float]] = defaultdict(list)
        for r in runs:
            per_task.setdefault(r.task, [])
            if r.score is not None:
                per_task[r.task].append(r.score)
        modes[mode] = {
            "success_rate": _mean([float(bool(r.success)) for r in scored]),
            "mean_score": _mean([r.score for r in runs if r.score is not None]),
            "prompt_tokens_mean": _mean([r.prompt_tokens for r in runs]),
            "model_calls_mean": _mean([r.model_calls for r in runs]),
            "tool_calls_mean": _mean([r.tool_calls for r in runs]),
            "wall_s_mean": _mean([r.wall_s for r in runs]),
            "runs": len(runs),
            "errors": sum(1 for r in runs if r.error),
            # tasks a --stable run served at another site address (results.TaskRun)
            "off_stable": sorted({r.task for r in runs if r.off_stable}),
            "tasks": {task: _mean(scores) for task, scores in per_task.items()},
        }
    return {"modes": modes}


def _cell(fmt: str, value: float | None) -> str:
    return "–" if value is None else fmt.format(value)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    line = lambda cells: "  ".join(  # noqa: E731
        str(c).ljust(w) if i == 0 else str(c).rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
    return "\n".join([line(header), "  ".join("-" * w for w in widths),
                      *(line(r) for r in rows)])


def task_table(results: Sequence[TaskRun], mode: Mode) -> str:
    """One row per task run of ``mode``."""
    rows = []
    for r in results:
        if r.mode != mode:
            continue
        name = r.task if r.repeat == 0 else f"{r.task} #{r.repeat + 1}"
        rows.append([name, _cell("{:.2f}", r.score), "error" if r.error else r.status,
                     str(r.model_calls), str(r.tool_calls), f"{r.prompt_tokens:,}",
                     f"{r.wall_s:.1f}"])
    return _table(["task", "score", "status", "model calls", "tool calls", "prompt tok",
                   "wall s"], rows)


def summary_table(summary: dict[str, Any]) -> str:
    """One row per mode: the comparison."""
    rows = [[mode, str(m["runs"]), *(_cell(fmt, m[key]) for key, _, fmt in COLUMNS)]
            for mode, m in summary["modes"].items()]
    return _table(["mode", "runs", *(label for _, label, _ in COLUMNS)], rows)


def markdown_table(summary: dict[str, Any], label: str = "") -> str:
    header = ["model", "mode", "runs", *(title for _, title, _ in COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for mode, m in summary["modes"].items():
        cells = [label, mode, str(m["runs"]), *(_cell(fmt, m[key]) for key, _, fmt in COLUMNS)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(summary: dict[str, Any], path: Path, title: str = "") -> None:
    """A PNG with one bar chart per metric, the modes side by side (needs deskmate[plot];
    ``deskmate eval --plot`` checks for it before the run)."""
    # The plot extra: optional for users; `make test` installs it.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    modes = list(summary["modes"])
    fig, axes = plt.subplots(1, len(COLUMNS), figsize=(3 * len(COLUMNS), 3.2))
    for ax, (key, label, _) in zip(axes, COLUMNS, strict=True):
        values = [summary["modes"][m][key] or 0 for m in modes]
        ax.bar(modes, values, color=["#4c72b0", "#dd8452", "#55a868"][: len(modes)])
        ax.set_title(label)
        if key in ("success_rate", "mean_score"):
            ax.set_ylim(0, 1)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
