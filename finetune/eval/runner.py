"""Run suite tasks through the real agent: one fresh workspace and server set per task.

``run_eval`` is the whole loop (what ``deskmate eval`` and the finetune before/after
evaluation call); ``run_task`` is one task in one mode. The agent runs headless with
every tool call approved: the workspace is a throwaway made for this task alone, the
one place where blanket approval is right.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from deskmate.app.agent import events as ev
from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.modes import MODES, Mode
from deskmate.app.llm.base import ChatModel
from deskmate.finetune.eval.checks import score_task
from deskmate.finetune.eval.record import add_result, finish_run, start_run, task_row
from deskmate.finetune.eval.report import summarize
from deskmate.finetune.eval.results import TaskRun
from deskmate.finetune.eval.site import LocalSite
from deskmate.finetune.eval.stable import held, stable_root
from deskmate.finetune.eval.suite import Suite, Task, substitute
from deskmate.finetune.eval.workspace import WorkspaceError, prepare_workspace, start_servers

if TYPE_CHECKING:
    from deskmate.app.agent.experience import Experience
    from deskmate.app.store.db import Database
    from deskmate.tools.sandbox import Limits


@dataclass(frozen=True)
class EvalSettings:
    modes: tuple[Mode, ...] = ("code",)
    repeats: int = 1
    limits: AgentLimits = AgentLimits()
    sandbox_limits: Limits | None = None  # for code mode; None: the sandbox's defaults
    bins: tuple[Path, ...] = ()  # folders of server executables (workspace.py)
    keep_workspaces: bool = False  # leave each task's temp folder for inspection
    # The same workspace path and site address in every run (--stable): a greedy model
    # then writes the same replies wherever a change does not act, so two harnesses'
    # runs compare task by task (a random path changes the prompt's tokens).
    stable: bool = False
    # Solved earlier tasks the agent recalls examples from (--memory); None: none.
    experience: Experience | None = None


@dataclass(frozen=True)
class EvalOutcome:
    run_id: int | None
    results: list[TaskRun]
    summary: dict  # report.summarize(...)


STABLE_PORT = 47631  # the local site's, with --stable (a free one if it is taken)
ModelFor = Callable[[Task, Mode], ChatModel]  # the model to use for a task in a mode


def run_eval(suite: Suite, tasks: Sequence[Task], model_for: ModelFor,
             settings: EvalSettings = EvalSettings(), *, db: Database | None = None,
             model_name: str = "",
             on_result: Callable[[TaskRun], None] | None = None,
             cancel: threading.Event | None = None) -> EvalOutcome:
    """Every task × mode × repeat; recorded as one eval run when ``db`` is given."""
    for mode in settings.modes:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: use {' or '.join(MODES)}")
    run_id: int | None = None
    if db is not None:
        run_id = start_run(db, model=model_name, config={
            "suite": str(suite.path.resolve()), "tasks": [t.id for t in tasks],
            "modes": list(settings.modes), "repeats": settings.repeats,
            "max_steps": settings.limits.max_steps,
            "temperature": settings.limits.temperature})
    results: list[TaskRun] = []
    status = "failed"
    try:
        # each suite task once, however many modes and repeats its results come in
        task_rows = {task.id: task_row(db, suite, task) for task in tasks} \
            if db is not None else {}
        # Read once a run, not once a task × mode × repeat (verify.py is a file read).
        sited = {task.id for task in tasks if suite.site is not None and uses_site(suite, task)}
        for mode in settings.modes:
            for task in tasks:
                for repeat in range(settings.repeats):
                    if cancel is not None and cancel.is_set():
                        raise KeyboardInterrupt
                    with _site(suite, task.id in sited, settings.stable) as site:
                        result = run_task(suite, task, mode, model_for(task, mode),
                                          settings, site_url=site.url if site else "",
                                          db=db, repeat=repeat, cancel=cancel)
                    if settings.stable and site is not None and site.port != STABLE_PORT:
                        result = replace(result, off_stable=True)
                    if db is not None and run_id is not None:
                        add_result(db, run_id, task_rows[task.id], result)
                    results.append(result)
                    if on_result is not None:
                        on_result(result)
        status = "finished"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        summary = summarize(results)
        if db is not None and run_id is not None:
            finish_run(db, run_id, status=status, metrics=summary)
    return EvalOutcome(run_id, results, summary)


@contextmanager
def _site(suite: Suite, used: bool, stable: bool) -> Iterator[LocalSite | None]:
    """The suite's site, served while a task that reads it (``used``) runs: served for
    the whole run, a --stable run held the stable port from start to end, so a second run
    beside it (even on other tasks) saw its fetch tasks at another address. With
    ``stable`` the port is held (stable.py): a second run waits while the first serves."""
    if suite.site is None or not used:
        yield None
        return
    with held("site") if stable else nullcontext(), \
            LocalSite(suite.site, STABLE_PORT if stable else 0) as site:
        yield site


def uses_site(suite: Suite, task: Task) -> bool:
    """Whether ``${SITE_URL}`` is in the task's prompt, files, checks, servers or
    verify.py (where it cannot be told, as if it were)."""
    marker = "${SITE_URL}"
    servers = [suite.servers.get(name) for name in task.servers]
    parts = [task.prompt, *task.files.values(), json.dumps(servers), repr(task.checks)]
    verify = task.path / "verify.py"
    try:
        parts.append(verify.read_text() if verify.exists() else "")
    except OSError:
        return True
    return any(marker in part for part in parts)


@contextmanager
def task_root(task: Task, stable: bool = False) -> Iterator[Path]:
    """A new folder for the task's run, held while the block runs:
    ``<tmp>/deskmate-eval-<task>-<random>``, or with ``stable`` the same ``…-stable``
    every run (stable.py: a second run waits for the first to finish the task)."""
    if stable:
        with stable_root(task.id) as root:
            yield root
    else:
        yield Path(tempfile.mkdtemp(prefix=f"deskmate-eval-{task.id}-"))


def run_task(suite: Suite, task: Task, mode: Mode, model: ChatModel,
             settings: EvalSettings = EvalSettings(), *, site_url: str = "",
             db: Database | None = None,
             repeat: int = 0, cancel: threading.Event | None = None) -> TaskRun:
    with task_root(task, settings.stable) as root:
        return _run_in(root, suite, task, mode, model, settings, site_url=site_url, db=db,
                       repeat=repeat, cancel=cancel)


def _run_in(root: Path, suite: Suite, task: Task, mode: Mode, model: ChatModel,
            settings: EvalSettings, *, site_url: str, db: Database | None, repeat: int,
            cancel: threading.Event | None) -> TaskRun:
    """``run_task`` in the task's folder ``root`` (removed at the end unless kept)."""
    from deskmate.app import paths
    from deskmate.app.agent.factory import build_agent
    from deskmate.tools.policy import Policy

    answer, finished, session_id, error = "", None, None, ""
    try:
        workspace = prepare_workspace(task, root, settings.stable)
        variables = {"WORKSPACE": str(workspace), "SITE_URL": site_url}
        hub = start_servers(suite, task, variables, settings.bins, root / "logs")
        runtime = None
        try:
            # The app's tool search: hybrid where the search extra is installed, else BM25.
            runtime = build_agent(model, hub=hub, mode=mode, policy=Policy(yes_all=True),
                                  limits=settings.limits,
                                  sandbox_limits=settings.sandbox_limits,
                                  search_cache=paths.embeddings_cache(),
                                  experience=settings.experience)
            recorder = None
            if db is not None:
                from deskmate.app.store import Recorder

                recorder = Recorder.new(db, model=model.info.name, adapter=model.info.adapter,
                                        mode=mode, title=f"eval {suite.name}/{task.id}")
                session_id = recorder.session_id
            for event in runtime.agent.run(substitute(task.prompt, variables), cancel):
                if recorder is not None:
                    recorder.record(event)
                if isinstance(event, ev.FinalAnswer):
                    answer = event.text
                elif isinstance(event, ev.TurnFinished):
                    finished = event
        finally:
            try:
                if runtime is not None:
                    runtime.close()  # the sandbox; the hub is ours to close
            finally:
                hub.close()
        score = score_task(task, workspace, answer)
    except Exception as exc:
        # One broken task (a server that will not start, a sandbox failure) must not end
        # a long run: it scores 0 and carries its error to the report.
        error = str(exc) if isinstance(exc, WorkspaceError) else \
            f"{type(exc).__name__}: {exc}"
        score = None
    finally:
        if not settings.keep_workspaces:
            shutil.rmtree(root, ignore_errors=True)
    if score is None or error:
        # The task could not be attempted: it fails, and says why.
        value = 0.0 if task.scored else None
        return TaskRun(task.id, mode, repeat, value, None if value is None else False, (),
                       "error", answer, session_id=session_id, error=error)
    return TaskRun(task.id, mode, repeat, score.value, score.success, score.checks,
                   finished.status if finished else "error", answer,
                   prompt_tokens=finished.prompt_tokens if finished else 0,
                   model_calls=finished.model_calls if finished else 0,
                   tool_calls=finished.tool_calls if finished else 0,
                   wall_s=finished.wall_s if finished else 0.0, session_id=session_id)
