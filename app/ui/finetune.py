"""The finetuning screen. Runs are started and followed by ``deskmate finetune`` in a
terminal; this screen neither starts nor finds them yet (its intro says so).

What is here is progress plumbing that nothing in the app calls yet:
``FinetuneScreen.follow(stream)`` reads JSON lines in a thread worker and posts each as
a ``FinetuneProgress`` message, which the screen draws. The keys it reads (all
optional) are not yet those that ``finetune.run --json-progress`` writes (``event``,
``step``/``steps``, ``reward_mean``, …):

    phase    "rollouts", "scoring", "update", "export", "eval", "done", "failed"
    step     current step; total: number of steps (drives the progress bar)
    loss, reward, kl, lr         numbers shown in the metrics line
    message  free text, appended to the log

A line that is not JSON is logged as text, so a crashing trainer's traceback shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, Log, ProgressBar, Static

from app.ui.messages import FinetuneProgress

METRICS = ("loss", "reward", "kl", "lr")


def parse_progress(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line:
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return {"message": line}
    return data if isinstance(data, dict) else {"message": line}


def metrics_line(data: dict[str, Any]) -> str:
    parts = [f"phase {data['phase']}"] if "phase" in data else []
    if "step" in data:
        parts.append(f"step {data['step']}" + (f"/{data['total']}" if "total" in data else ""))
    for key in METRICS:
        value = data.get(key)
        if isinstance(value, int | float):
            parts.append(f"{key} {value:.4g}")
    return " · ".join(parts)


class FinetuneScreen(Screen):
    """Where finetuning runs are started; their progress is not followed here yet."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(classes="screen-body"):
            yield Static(
                "Finetuning trains a LoRA adapter on tasks from your sessions. Start a run "
                "in a terminal with `deskmate finetune` (it prints its progress there), and "
                "serve its adapter with `deskmate finetune use RUN`. This screen does not "
                "start or follow runs yet.", id="finetune-intro", classes="notice")
            yield Static("no run yet", id="finetune-metrics", classes="screen-title")
            yield ProgressBar(id="finetune-progress", show_eta=False)
            yield Log(id="finetune-log", max_lines=2000)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ProgressBar).display = False

    @work(thread=True, exclusive=True, group="finetune-follow", exit_on_error=False)
    def follow(self, stream: Iterable[str]) -> None:
        """Read a training process's JSON-lines progress until it ends."""
        for line in stream:
            if (data := parse_progress(line)) is not None:
                self.post_message(FinetuneProgress(data))

    def on_finetune_progress(self, message: FinetuneProgress) -> None:
        data = message.data
        if line := metrics_line(data):
            self.query_one("#finetune-metrics", Static).update(Content(line))
        bar = self.query_one(ProgressBar)
        if isinstance(data.get("total"), int) and isinstance(data.get("step"), int):
            bar.display = True
            bar.update(total=data["total"], progress=data["step"])
        if "message" in data:
            self.query_one(Log).write_line(str(data["message"]))
