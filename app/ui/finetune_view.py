"""What the Finetune screen shows of a run, and the machine survey it starts from.

Plain functions, no widgets: a run's JSON progress lines become a metrics line, log
lines and a ``RunView`` (rebuilt the same way live and from ``progress.jsonl``), and
``survey`` does the blocking look at GPUs, the model's plan, task sources and past runs
(called from the screen's thread worker).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any


def parse_progress(line: str) -> dict[str, Any] | None:
    """One line of the training process: its JSON object, or text (a traceback line)."""
    line = line.strip()
    if not line:
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return {"event": "text", "message": line}
    return data if isinstance(data, dict) else {"event": "text", "message": line}


def metrics_line(step: dict[str, Any]) -> str:
    """A ``step`` event as one line: step, reward, rubric pass rates, speed, ETA."""
    parts = [f"step {step.get('step')}/{step.get('steps')}"]
    if isinstance(step.get("reward_mean"), int | float):
        parts.append(f"reward {step['reward_mean']:.3f} ± {step.get('reward_std', 0):.3f}")
    rates = step.get("pass_rates") or {}
    if rates:
        parts.append(" ".join(f"{k.replace('_', ' ')} {v:.0%}" for k, v in rates.items()))
    if isinstance(step.get("tokens_per_s"), int | float):
        parts.append(f"{step['tokens_per_s']:.0f} tok/s")
    if isinstance(step.get("eta_s"), int | float) and step["eta_s"] > 0:
        parts.append(f"ETA {step['eta_s'] / 60:.1f} min")
    return " · ".join(parts)


def log_line(data: dict[str, Any]) -> str | None:
    """What the log shows of an event (steps are drawn, not logged)."""
    event = data.get("event")
    if event == "text":
        return str(data.get("message", ""))
    if event == "tasks":
        return (f"{data.get('train')} training tasks, {data.get('heldout')} held out "
                f"({data.get('source')})")
    if event == "policy":
        return f"policy {data.get('base')} on {data.get('device')} ({data.get('backend')})"
    if event == "rubric":
        return f"rubric for {data.get('task')}: {data.get('criteria')} criteria"
    if event == "rollout_error":
        return f"step {data.get('step')}: a rollout of {data.get('task')} could not run: " \
               f"{data.get('message')}"
    if event == "resumed":
        return f"resumed after step {data.get('step')}"
    if event == "exported":
        return f"adapter exported: {data.get('adapter')}"
    if event == "heldout":
        return (f"held-out {data.get('which')}: score {score(data.get('reward_mean'))} "
                f"on {data.get('tasks')} tasks")
    if event == "done":
        return "done: the adapter is ready (u serves it)"
    if event == "interrupted":
        return "stopped: s resumes it"
    if event == "error":
        return f"failed: {data.get('message')}"
    return None


def score(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "–"


@dataclass
class RunView:
    """What the screen draws of one run, rebuilt from its progress lines."""

    run_id: int
    steps: list[dict[str, Any]] = field(default_factory=list)
    heldout: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    def add(self, data: dict[str, Any]) -> None:
        if data.get("event") == "step":
            self.steps.append(data)
        elif data.get("event") == "heldout":
            self.heldout[str(data.get("which"))] = data
        if (text := log_line(data)) is not None:
            self.log.append(text)


def survey(app: Any) -> dict[str, Any]:
    """Blocking: the GPUs, the plan for the configured model, task sources and runs."""

    from deskmate.app.llm.base import ModelError
    from deskmate.app.store import open_db
    from deskmate.finetune import tasks as T
    from deskmate.finetune.grpo import GRPOConfig
    from deskmate.finetune.hardware import arch_of_gguf, detect_gpus, recommend
    from deskmate.finetune.run import cpu_allowed
    from deskmate.finetune.runs import list_runs, training_models

    gpus = detect_gpus()
    hardware = (" · ".join(f"GPU {g.name}: {g.free_gb:.1f} of {g.total_gb:.1f} GB free"
                           for g in gpus) if gpus else
                "No NVIDIA GPU found: training runs on the CPU, for tiny models only.")
    name = app.model_spec or app.config.model.name
    plan, serving, base, model = None, "", "", "No model configured: pick one in Models (F4)."
    if name:
        try:
            path, base = training_models(name)
        except ModelError as exc:
            model = str(exc)
        else:
            serving = str(path)
            plan = recommend(gpus, arch_of_gguf(path), cpu_ok=cpu_allowed(serving))
            model = Path(name).name
            if plan.device == "cuda" and base != serving:
                model += f" (the LoRA trains on {base})"
    db = open_db()
    try:
        candidates = T.from_sessions(db, with_excluded=True)
        runs = list_runs(db)
    finally:
        db.close()
    suite = bundled_suite()
    tools = len(app.hub.tools()) if app.hub is not None else 0
    excluded = sum(1 for t in candidates if t.metadata.get("excluded"))
    sessions = f"your sessions ({len(candidates) - excluded} tasks"
    sessions += f", {excluded} excluded)" if excluded else ")"
    sources = [(sessions, "sessions"),
               (f"the bundled eval suite ({bundled_suite_size()} tasks)",
                f"suite:{suite}")]
    if tools:
        sources.append((f"generated for your {tools} tools", "generate"))
    return {"hardware": hardware, "plan": plan, "model": model, "serving": serving,
            "base": base, "sources": sources, "runs": runs,
            "default_steps": GRPOConfig().steps}


def bundled_suite() -> Path:
    from importlib.resources import files

    return Path(str(files("deskmate.assets").joinpath("eval", "local")))


@cache
def bundled_suite_size() -> int:
    """Tasks in the suite shipped with deskmate: read once, not at every survey (the
    screen surveys each time it is shown)."""
    from deskmate.finetune.eval import load_suite

    return len(load_suite(bundled_suite()).tasks)
