"""What a training rollout runs against: its tools, the gate on them, and its checks.

An environment is a context manager per rollout, ``environment(task) -> Environment``:
- ``no_tools``: no tools at all (the tests' and the smoke run's tasks);
- ``user_environment``: the user's own servers, shared by every rollout, behind the
  training ``ToolGate`` (read-only live, others replayed or refused): sessions and
  generated tasks must never change the user's world;
- ``suite_environment``: a suite task's world, made fresh for each rollout as the eval
  harness makes it (``finetune.eval.runner.run_task``): a temporary workspace with the
  task's files, the task's own servers on it, every call live (the workspace is a
  throwaway), and the task's full deterministic score (file checks, verify.py) of the
  answer, taken before the workspace is deleted.

``run_in`` is one rollout in an environment; a world that could not be set up (a server
that will not start) gives a rollout with ``error`` set, which scores 0.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from deskmate.app.llm.base import ChatModel
from deskmate.finetune.rollout import Rollout, RolloutSettings, run_rollout
from deskmate.finetune.tasks import TrainTask
from deskmate.finetune.toolgate import ToolGate

if TYPE_CHECKING:
    from deskmate.app.store.db import Database
    from deskmate.finetune.eval.suite import Suite
    from deskmate.tools.hub import Hub

EnvironmentFor = Callable[[TrainTask], contextlib.AbstractContextManager["Environment"]]


@dataclass(frozen=True)
class Environment:
    prompt: str  # the task as this world words it (a suite's ${WORKSPACE} filled in)
    gate: ToolGate  # every tool call of the rollout goes through it
    hub: Hub | None = None  # whose tools the agent sees; None: no tools
    # The task's own score of a final answer in this world (None from it: the task has
    # no deterministic check); None here: the rubric's answer checks score the answer.
    check: Callable[[str], float | None] | None = None
    error: str = ""  # why this world could not be set up; the rollout then scores 0


@contextlib.contextmanager
def no_tools(task: TrainTask) -> Iterator[Environment]:
    yield Environment(task.prompt, ToolGate([], None))


def user_environment(hub: Hub | None, db: Database) -> EnvironmentFor:
    """The user's servers (``hub``, None: none), with the calls of their sessions to replay."""
    from deskmate.finetune.toolgate import recorded_results

    recorded = recorded_results(db)
    specs = hub.tools() if hub is not None else []

    @contextlib.contextmanager
    def environment(task: TrainTask) -> Iterator[Environment]:
        yield Environment(task.prompt,
                          ToolGate(specs, hub.call if hub is not None else None, recorded),
                          hub)

    return environment


def suite_environment(suite: Suite, *, site_url: str = "",
                      bins: Sequence[Path] = ()) -> EnvironmentFor:
    """A fresh workspace and server set for every rollout of a task of ``suite``.

    ``site_url`` is where the suite's ``site/`` is served for the run (``LocalSite``),
    ``bins`` the folders of server executables (``bin_folders()``).
    """
    from deskmate.finetune.eval.checks import score_task
    from deskmate.finetune.eval.suite import substitute
    from deskmate.finetune.eval.workspace import WorkspaceError, prepare_workspace, start_servers

    def start(task_id: str, root: Path) -> tuple[Hub, Path, dict[str, str]]:
        """The task's workspace under ``root`` and its servers, all ready; else why not."""
        if task_id not in suite.tasks:
            raise WorkspaceError(f"{suite.path}: no task {task_id!r} in the suite any more "
                                 "(renamed since the run started?)")
        workspace = prepare_workspace(suite.tasks[task_id], root)
        variables = {"WORKSPACE": str(workspace), "SITE_URL": site_url}
        hub = start_servers(suite, suite.tasks[task_id], variables, bins, root / "logs")
        return hub, workspace, variables

    @contextlib.contextmanager
    def environment(task: TrainTask) -> Iterator[Environment]:
        task_id = task.metadata.get("task", "")
        with contextlib.ExitStack() as stack:  # on the way out: the hub, then the folder
            root = Path(tempfile.mkdtemp(prefix=f"deskmate-train-{task_id}-"))
            stack.callback(shutil.rmtree, root, ignore_errors=True)
            try:
                hub, workspace, variables = start(task_id, root)
            except WorkspaceError as exc:
                env = Environment(task.prompt, ToolGate([], None), error=str(exc))
            else:
                stack.callback(hub.close)
                env = Environment(
                    substitute(task.prompt, variables),
                    ToolGate(hub.tools(), hub.call, live_all=True), hub,
                    lambda answer: score_task(suite.tasks[task_id], workspace, answer).value)
            yield env

    return environment


def run_in(environment: EnvironmentFor, model: ChatModel, task: TrainTask, *,
           settings: RolloutSettings, seed: int = 0) -> Rollout:
    """One rollout of ``task`` in a world of its own, with its check score when it has one."""
    with environment(task) as env:
        if env.error:
            return Rollout(task.key, "", "error", (), (), 0, 0.0, error=env.error)
        rollout = run_rollout(model, task.key, env.prompt, env.gate, hub=env.hub,
                              settings=settings, seed=seed)
        if env.check is None:
            return rollout
        return replace(rollout, checks=env.check(rollout.answer))
