"""The Finetune screen: what this machine can train, one key to start a run, its live
progress and reward curve, the before/after table, and serving the new adapter.

A run is the same child process as ``deskmate finetune`` (``finetune.runs.follow``):
the screen starts it in a thread worker that parses its lines
(``finetune.progress.parse_progress``) and posts each event as a ``Progress``; the
screen draws what arrives. Stopping sends it Ctrl+C, so it saves a checkpoint-resumable
"interrupted" state; quitting the app stops it the same way. What is drawn of a run is
in ``finetune_view``; installing the extras and deleting a run in ``finetune_upkeep``;
the survey of the machine is ``finetune.survey``, serving an adapter
``app.services.adapters`` (the CLI's ``finetune use`` too).
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    Log,
    ProgressBar,
    Select,
    Sparkline,
    Static,
)
from textual.worker import Worker, WorkerState

from deskmate.app.store.export import when
from deskmate.app.ui.finetune_upkeep import FinetuneUpkeep
from deskmate.app.ui.finetune_view import RunView, log_line
from deskmate.app.ui.messages import ConfigChanged
from deskmate.app.ui.workers import post_fresh
from deskmate.finetune.hardware import describe as describe_plan
from deskmate.finetune.progress import Heldout, ProgressEvent, Step, describe, score
from deskmate.finetune.runs import RunRecord
from deskmate.finetune.survey import Survey, survey

if TYPE_CHECKING:
    from deskmate.app.ui.app import DeskmateApp

STOP_GRACE_S = 20.0  # how long a stopped run may take to write its checkpoint state


class FinetuneScreen(FinetuneUpkeep):
    """Finetuning runs: start, follow, compare, serve.

    | Key | Action |
    | :- | :- |
    | s | Start a run (or resume the highlighted stopped one). |
    | x | Stop the running run (resumable). |
    | u | Serve the highlighted run's adapter. |
    | t | Choose which session prompts runs may train on. |
    | i | Install the training libraries (torch, transformers, peft) when they are missing. |
    | d | Delete the highlighted run: its folder and its record (asks first). |
    """

    # show=False: kept off the footer, which must fit 140 columns (test_ui_footer.py);
    # F1 help and the command palette still list them.
    BINDINGS = [
        Binding("s", "start", "Start", id="finetune_start"),
        Binding("x", "stop", "Stop", id="finetune_stop"),
        Binding("u", "use", "Use adapter", id="finetune_use"),
        Binding("t", "tasks", "Tasks", id="finetune_tasks"),
        Binding("i", "install_extras", "Install extras", show=False, id="finetune_install"),
        Binding("d", "delete_run", "Delete", show=False, id="finetune_delete"),
    ]

    class Surveyed(Message):
        """What this machine can train, and the runs so far."""

        def __init__(self, survey: Survey) -> None:
            self.survey = survey
            super().__init__()

    class Progress(Message):
        """One progress event of the run this screen started."""

        def __init__(self, event: ProgressEvent, run_id: int) -> None:
            self.event = event
            self.run_id = run_id
            super().__init__()

    class Started(Message):
        def __init__(self, run_id: int) -> None:
            self.run_id = run_id
            super().__init__()

    class ChildStarted(Message):
        """The training process is running: the screen keeps it, to stop it."""

        def __init__(self, child: subprocess.Popen[str]) -> None:
            self.child = child
            super().__init__()

    class Ended(Message):
        def __init__(self, run_id: int, code: int) -> None:
            self.run_id = run_id
            self.code = code
            super().__init__()

    class Replayed(Message):
        def __init__(self, view: RunView) -> None:
            self.view = view
            super().__init__()

    TABLE = "#finetune-runs"

    def __init__(self) -> None:
        super().__init__()
        self.survey: Survey | None = None
        self.child: subprocess.Popen[str] | None = None
        self.live: RunView | None = None  # the run this app started, while it runs
        self.shown: RunView | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="finetune-top"):
            yield Static("Teach the model your tools: it retries tasks from your sessions, a "
                         "judge scores each attempt against the task's rubric, and a LoRA "
                         "adapter learns from the better ones (GRPO).", classes="screen-hint")
            yield Static("looking at this machine …", id="finetune-hardware")
            yield Static("", id="finetune-plan", classes="screen-hint")
            with Horizontal(id="finetune-controls"):
                yield Select([], prompt="tasks from …", allow_blank=True, id="finetune-source")
                yield Input("", placeholder="steps", id="finetune-steps", type="integer")
                yield Button("Start", id="finetune-start", variant="primary", disabled=True)
                yield Button("Stop", id="finetune-stop", variant="error", disabled=True)
                yield Button("Use adapter", id="finetune-use", disabled=True)
        with Horizontal(classes="screen-body"):
            yield DataTable(id="finetune-runs", cursor_type="row", zebra_stripes=True,
                            classes="screen-list")
            with Vertical(classes="screen-detail"):
                yield Static("no run yet", id="finetune-metrics", classes="screen-title")
                yield ProgressBar(id="finetune-progress", show_eta=False)
                yield Static("mean reward per step", classes="screen-hint")
                yield Sparkline([], id="finetune-reward")
                yield DataTable(id="finetune-compare", cursor_type="none")
                yield Log(id="finetune-log", max_lines=2000)
        yield Footer()

    def on_mount(self) -> None:
        runs = self.query_one("#finetune-runs", DataTable)
        for label, key in (("run", "run"), ("started", "started"), ("status", "status"),
                           ("steps", "steps"), ("adapter", "adapter")):
            runs.add_column(label, key=key)
        compare = self.query_one("#finetune-compare", DataTable)
        for label in ("held-out tasks", "score", "eval run"):
            compare.add_column(label)
        self.query_one(ProgressBar).display = False
        runs.focus()
        self.survey_machine()

    def on_screen_resume(self) -> None:
        if self.survey:
            self.survey_machine()

    def config_changed(self) -> None:
        self.survey_machine()

    def _app(self) -> DeskmateApp:
        return cast("DeskmateApp", self.app)

    # ---------------------------------------------------------------- workers

    @work(thread=True, exclusive=True, group="finetune-survey", exit_on_error=False)
    def survey_machine(self) -> None:
        app = self._app()
        tools = len(app.hub.tools()) if app.hub is not None else 0
        post_fresh(self, self.Surveyed(survey(app.model_spec or app.config.model.name, tools)))

    @work(thread=True, exclusive=True, group="finetune-replay", exit_on_error=False)
    def replay(self, run_id: int, run_dir: Path | None) -> None:
        from deskmate.finetune.runs import read_progress

        view = RunView(run_id)
        for event in read_progress(run_dir) if run_dir is not None else []:
            view.add(event)
        post_fresh(self, self.Replayed(view))

    @work(thread=True, group="finetune-run", exit_on_error=False)
    def launch(self, source: str, steps: int, resume: int | None) -> None:
        from deskmate.finetune.progress import parse_progress
        from deskmate.finetune.runs import find_run, follow, start_run
        from deskmate.finetune.spec import RunSpec

        if resume is not None:
            spec, run_dir = find_run(resume)
        else:
            s = self.survey
            # action_start checked that there is a plan with a device
            assert s is not None and s.plan is not None and s.plan.device is not None
            spec, run_dir = start_run(RunSpec(
                base=s.base, serving_gguf=s.serving, tasks=source, device=s.plan.device,
                grpo={**s.plan.grpo, "steps": steps}))
        run_id = int(spec.run_id or 0)
        self.post_message(self.Started(run_id))

        def line(raw: str) -> None:
            if (event := parse_progress(raw)) is not None:
                self.post_message(self.Progress(event, run_id))

        def started(child: subprocess.Popen[str]) -> None:
            self.post_message(self.ChildStarted(child))

        code = follow(run_dir, line, on_start=started, merge_stderr=True)
        self.post_message(self.Ended(run_id, code))

    @work(thread=True, group="finetune-use", exit_on_error=False)
    def serve(self, run_id: int) -> None:
        from deskmate.app.services.adapters import serve_adapter

        app = self._app()
        served = serve_adapter(run_id, app.config_path)
        app.post_message(ConfigChanged(served.config, f"serving the adapter of run {run_id}",
                                       reload_model=True))
        self.survey_machine()

    # ---------------------------------------------------------------- handlers

    def on_finetune_screen_surveyed(self, message: Surveyed) -> None:
        self.survey = s = message.survey
        self.query_one("#finetune-hardware", Static).update(Content(s.hardware))
        plan = s.plan
        shown = (f"{s.model} · {plan.reason}" + (f"\n{describe_plan(plan)}" if plan.device
                                                 else "") if plan is not None else s.model)
        if not s.extras.ok:
            shown += f"\n{s.extras.message} (or press i: deskmate runs it for you)"
        self.query_one("#finetune-plan", Static).update(Content(shown))
        source = self.query_one("#finetune-source", Select)
        chosen = source.value
        source.set_options(s.sources)
        values = [value for _, value in s.sources]
        source.value = chosen if chosen in values else (values[0] if values else Select.BLANK)
        steps = self.query_one("#finetune-steps", Input)
        if not steps.value and plan is not None:
            steps.value = str(plan.grpo.get("steps", s.default_steps))
        self.refill((str(r.run_id), [
            str(r.run_id), when(r.started_at),
            "running" if self.live and self.live.run_id == r.run_id else r.status,
            str(r.steps), ("● served" if r.active else "ready") if r.adapter else "–"])
            for r in s.runs)
        self._buttons()

    @on(DataTable.RowHighlighted, "#finetune-runs")
    def highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is None:
            return
        run_id = int(event.row_key.value)
        if self.live is not None and self.live.run_id == run_id:
            self.show(self.live)
        else:
            record = self._record(run_id)
            self.replay(run_id, record.run_dir if record else None)
        self._buttons()

    def on_finetune_screen_replayed(self, message: Replayed) -> None:
        if self.selected == str(message.view.run_id):
            self.show(message.view)

    def on_finetune_screen_child_started(self, message: ChildStarted) -> None:
        self.child = message.child

    def on_finetune_screen_started(self, message: Started) -> None:
        self.live = RunView(message.run_id)
        self.query_one(Log).clear()
        self.show(self.live)
        self.survey_machine()  # lists the new run

    def on_finetune_screen_progress(self, message: Progress) -> None:
        if self.live is None or message.run_id != self.live.run_id:
            return
        self.live.add(message.event)
        if self.shown is self.live:
            self.draw_line(message.event)

    def on_finetune_screen_ended(self, message: Ended) -> None:
        self.child = None
        # its last lines are why it failed (the traceback, merged into its log)
        last = self.live.log[-3:] if self.live is not None else []
        self.live = None
        if message.code == 0:
            self.notify(f"finetune run {message.run_id} finished: u serves its adapter")
        elif message.code == 130:
            self.notify(f"finetune run {message.run_id} stopped; s resumes it")
        else:
            self.notify("\n".join([f"finetune run {message.run_id} failed (exit "
                                   f"{message.code}); its log ends:", *last]),
                        severity="error", timeout=20, markup=False)  # tracebacks have [
        self.survey_machine()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        super().on_worker_state_changed(event)
        if event.worker.group == "finetune-run" and event.state in (
                WorkerState.ERROR, WorkerState.CANCELLED):
            self.child, self.live = None, None  # it never started, or broke: free the keys
            self.survey_machine()

    # ---------------------------------------------------------------- drawing

    def show(self, view: RunView) -> None:
        self.shown = view
        log = self.query_one(Log)
        log.clear()
        for text in view.log:
            log.write_line(text)
        self.query_one("#finetune-reward", Sparkline).data = [s.reward_mean for s in view.steps]
        self._progress(view.steps[-1] if view.steps else None, view.run_id)
        self._compare(view)

    def draw_line(self, event: ProgressEvent) -> None:
        view = self.shown
        assert view is not None
        if isinstance(event, Step):
            self.query_one("#finetune-reward", Sparkline).data = [
                s.reward_mean for s in view.steps]
            self._progress(event, view.run_id)
        elif isinstance(event, Heldout):
            self._compare(view)
        if (text := log_line(event)) is not None:
            self.query_one(Log).write_line(text)

    def _progress(self, step: Step | None, run_id: int) -> None:
        metrics = self.query_one("#finetune-metrics", Static)
        bar = self.query_one(ProgressBar)
        if step is None:
            metrics.update(Content(f"run {run_id}: no step yet"))
            bar.display = False
            return
        metrics.update(Content(f"run {run_id}: {describe(step)}"))
        bar.display = True
        bar.update(total=step.steps, progress=step.step)

    def _compare(self, view: RunView) -> None:
        table = self.query_one("#finetune-compare", DataTable)
        table.clear()
        for which, label in (("base", "base model"), ("adapter", "with the adapter")):
            if (row := view.heldout.get(which)) is not None:
                table.add_row(f"{label} ({row.tasks})", score(row.reward_mean),
                              str(row.eval_run or "–"), key=which)

    def _buttons(self) -> None:
        plan = self.survey.plan if self.survey is not None else None
        running = self.child is not None or self.live is not None
        record = self._record(int(self.selected)) if self.selected else None
        extras_ok = self.survey is not None and self.survey.extras.ok
        self.query_one("#finetune-start", Button).disabled = running or plan is None or (
            plan.device is None) or not extras_ok
        self.query_one("#finetune-start", Button).label = (
            "Resume" if self._resumable(record) else "Start")
        self.query_one("#finetune-stop", Button).disabled = not running
        self.query_one("#finetune-use", Button).disabled = not (
            record and record.adapter and not record.active)

    def _record(self, run_id: int) -> RunRecord | None:
        runs = self.survey.runs if self.survey is not None else ()
        return next((r for r in runs if r.run_id == run_id), None)

    def _resumable(self, record: RunRecord | None) -> bool:
        return bool(record and record.status in ("interrupted", "failed") and not record.adapter
                    and (self.live is None or self.live.run_id != record.run_id))

    # ---------------------------------------------------------------- actions

    @on(Button.Pressed, "#finetune-start")
    def action_start(self) -> None:
        plan = self.survey.plan if self.survey is not None else None
        if self.child is not None or self.live is not None:
            self.notify("A run is going: x stops it first.", severity="warning")
            return
        if plan is None or plan.device is None:
            self.notify(plan.reason if plan else "No model to train: pick one in Models (F4).",
                        severity="warning", timeout=10)
            return
        if self.survey is not None and not self.survey.extras.ok:
            # the child would die at its first import, leaving a run that cannot resume
            self.notify(self.survey.extras.message, severity="error", timeout=20)
            return
        record = self._record(int(self.selected)) if self.selected else None
        if record is not None and self._resumable(record):
            self.live = RunView(record.run_id)  # taken: a second s does not start it twice
            self._buttons()
            self.launch("", 0, record.run_id)
            return
        source = self.query_one("#finetune-source", Select).value
        if source is Select.BLANK:
            self.notify("Choose where the tasks come from.", severity="warning")
            return
        steps = self.query_one("#finetune-steps", Input).value.strip()
        if not steps.isdigit() or int(steps) < 1:
            self.notify(f"{steps!r}: the number of steps is a whole number, e.g. 40",
                        severity="warning")
            return
        self.live = RunView(0)  # taken until Started names it
        self._buttons()
        self.launch(str(source), int(steps), None)

    @on(Button.Pressed, "#finetune-stop")
    def action_stop(self) -> None:
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGINT)  # it records "interrupted" and exits
            self.notify("stopping the run …")

    @on(Button.Pressed, "#finetune-use")
    def action_use(self) -> None:
        record = self._record(int(self.selected)) if self.selected else None
        if record is None or record.adapter is None:
            self.notify("This run has no adapter yet.", severity="warning")
            return
        self.serve(record.run_id)

    def action_tasks(self) -> None:
        from deskmate.app.ui.task_picker import TaskPickerScreen

        self.app.push_screen(TaskPickerScreen(), self._picked)

    def _picked(self, _: None) -> None:
        self.survey_machine()  # the task counts changed

    def on_unmount(self) -> None:
        child = self.child
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGINT)
            try:
                child.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                child.kill()
