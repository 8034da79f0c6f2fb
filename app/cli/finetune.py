"""``deskmate finetune``: improve the model from your sessions (rubric-based RL, LoRA).

The run happens in a child process (``python -m deskmate.finetune.run``): training
holds GPU memory and may crash without taking the CLI along. Its progress comes back as
JSON lines, kept in the run folder (``progress.jsonl``) and shown as text
(``finetune.progress.describe``, as the Finetune screen shows them), or passed through
as they are with ``--json-progress``. torch is imported only in that child.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from deskmate.app.cli.common import EXIT_FAILURE, EXIT_USAGE, Env, fail
from deskmate.app.cli.sandbox import require_isolation, unisolated_option

if TYPE_CHECKING:
    from deskmate.app.store.db import Database


@click.group("finetune", invoke_without_command=True)
@click.option("--tasks", "source", default="sessions", show_default=True,
              help="Where tasks come from: sessions (answers you rated up or accepted), "
                   "suite:PATH (an eval suite), or generate (the judge writes tasks for "
                   "your connected tools).")
@click.option("--steps", type=click.IntRange(min=1), default=40, show_default=True,
              help="GRPO steps.")
@click.option("--group", "group", type=click.IntRange(min=2), default=4, show_default=True,
              help="Rollouts per task (G); advantages compare them.")
@click.option("--tasks-per-step", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--judge", default="", help="Judge model: a registry name or .gguf path, or "
              "'openai' for the configured endpoint (default: the serving model).")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto",
              show_default=True, help="cpu is for tiny models only.")
@click.option("--model", "-m", help="Model to improve (default: the configured one).")
@click.option("--rubrics", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="An edited rubrics.toml (from an earlier run's folder) to use.")
@click.option("--lr", type=float, default=None, help="Learning rate (default 2e-5).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--rollout-engine", type=click.Choice(["auto", "llamacpp", "policy"]),
              default="auto", show_default=True,
              help="Who samples the rollouts: llamacpp (the GGUF you serve, with each "
                   "step's adapter, on llama.cpp's GPU build where installed; the update "
                   "corrects the difference by importance sampling), or policy (the "
                   "trained weights in torch, token by token: exact but many times "
                   "slower). auto is llamacpp whenever the serving GGUF is known, which "
                   "it is for every model deskmate serves.")
@click.option("--resume", "resume", type=int, help="Continue run RUN from its last checkpoint.")
@click.option("--json-progress", is_flag=True, help="Print progress as JSON lines.")
@unisolated_option
@click.pass_context
def finetune(ctx: click.Context, source: str, steps: int, group: int, tasks_per_step: int,
             judge: str, device: str, model: str | None, rubrics: Path | None,
             lr: float | None, seed: int, rollout_engine: str, resume: int | None,
             json_progress: bool,
             allow_unisolated: bool) -> None:
    """Improve the model from your sessions: GRPO on LoRA, scored by rubrics.

    Runs the agent on tasks from your sessions (or a suite, or generated ones), scores
    every attempt with a judge model and the task's checks, and trains a LoRA adapter
    for the model you serve; tool calls that could change anything are replayed from
    your sessions or refused. Ends with a before/after evaluation on held-out tasks;
    `deskmate finetune use RUN` then switches the app to the adapter. Rollouts are
    sampled by llama.cpp from the GGUF you serve, with the adapter as it stands at each
    step (see --rollout-engine). Needs an NVIDIA GPU, except for tiny models
    (`--model tiny --device cpu`).
    """
    if ctx.invoked_subcommand is not None:
        return
    from deskmate.finetune.runs import find_run, start_run
    from deskmate.finetune.spec import RunError, RunSpec, TaskSource

    env: Env = ctx.obj
    require_isolation("finetune", allow_unisolated, eager=False)  # rollouts run code
    if resume is not None:
        try:
            spec, run_dir = find_run(resume)
        except LookupError as exc:
            fail(str(exc), EXIT_USAGE)
        _check_extras(spec.device)
    else:
        try:
            TaskSource.parse(source)
        except RunError as exc:
            fail(f"--tasks {exc}", EXIT_USAGE)
        serving, train_base = _models(env, model)
        _check_extras(device)  # before start_run: a run that cannot start leaves no row
        grpo = {"steps": steps, "group_size": group, "tasks_per_step": tasks_per_step,
                "seed": seed, **({"learning_rate": lr} if lr is not None else {}),
                # auto is GRPOConfig's default (the spec stays as the screen writes it)
                **({"rollout_engine": rollout_engine} if rollout_engine != "auto" else {})}
        # The hardware plan (as the Finetune screen applies it), under what was typed.
        typed = {k for k, name in (("steps", "steps"), ("group_size", "group"),
                                   ("tasks_per_step", "tasks_per_step"))
                 if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT}
        grpo = {**grpo, **{k: v for k, v in _plan(serving, device, train_base).items()
                           if k not in typed}}
        spec, run_dir = start_run(RunSpec(
            base=train_base, serving_gguf=str(serving), tasks=source, judge=judge,
            device=device, rubrics=str(rubrics or ""), grpo=grpo))
    click.echo(f"finetune run {spec.run_id}: {run_dir}", err=True)
    code = _follow(run_dir, json_progress)
    if code == 0 and not json_progress:
        click.echo(f"done. Use the adapter with: deskmate finetune use {spec.run_id}", err=True)
    sys.exit(code)


def _models(env: Env, model: str | None) -> tuple[Path, str]:
    from deskmate.finetune.runs import training_models

    name = model or env.model or env.config.model.name
    if not name:
        fail("no model configured: pass --model NAME (e.g. --model tiny for a CPU try)",
             EXIT_USAGE)
    return training_models(name)


def _plan(serving: Path, device: str, base: str) -> dict[str, Any]:
    """The GRPO settings this machine's plan sets for ``serving``; exits when none fits."""
    from deskmate.finetune.hardware import detect_gpus
    from deskmate.finetune.survey import plan_for

    plan = plan_for([] if device == "cpu" else detect_gpus(), serving, db_calls=True,
                    base=base)
    if plan.device is None:
        fail(plan.reason, EXIT_USAGE)
    return plan.grpo


def _check_extras(device: str) -> None:
    """Exit with the install command when the run's child could not import its libraries."""
    from deskmate.finetune.extras import check_extras
    from deskmate.finetune.hardware import detect_gpus

    if device == "auto":  # the child picks cuda when there is a GPU: unsloth is then needed
        device = "cuda" if detect_gpus() else "cpu"
    extras = check_extras(device)
    if not extras.ok:
        fail(extras.message, EXIT_USAGE)


def _follow(run_dir: Path, json_progress: bool) -> int:
    from deskmate.finetune.progress import Text, describe, parse_progress
    from deskmate.finetune.runs import follow

    def show(raw: str) -> None:
        event = parse_progress(raw)
        if isinstance(event, Text):  # a traceback or a library's warning
            click.echo(event.message, err=True)
        elif event is not None:
            click.echo(raw.rstrip() if json_progress else describe(event))

    try:
        return follow(run_dir, show)
    except KeyboardInterrupt:
        # Ctrl+C reached the child too: it records the run as interrupted and exits.
        click.echo(f"interrupted; continue with --resume {run_dir.name.removeprefix('run-')}",
                   err=True)
        return 130


@finetune.command("use")
@click.argument("run_id", type=int)
@click.pass_obj
def use(env: Env, run_id: int) -> None:
    """Serve the adapter of finetune run RUN_ID (sets [model] adapter)."""
    from deskmate.app.services.adapters import AdapterError, serve_adapter

    try:
        served = serve_adapter(run_id, env.config_path)
    except AdapterError as exc:
        fail(str(exc), EXIT_FAILURE)
    click.echo(f"[model] adapter = {served.path}")


@finetune.command("delete")
@click.argument("run_id", type=int)
@click.pass_obj
def delete(env: Env, run_id: int) -> None:
    """Delete finetune run RUN_ID: its folder (checkpoints, adapter, log) and its record."""
    from deskmate.app.services.finetune_runs import RunNotDeleted, delete_run

    try:
        deleted = delete_run(run_id, env.config)
    except RunNotDeleted as exc:
        fail(str(exc), EXIT_FAILURE)
    click.echo(f"deleted run {run_id}" + (f" and {deleted.folder}" if deleted.folder else ""))


@finetune.command("tasks")
@click.option("--exclude", multiple=True, metavar="KEY", help="Leave this task out of runs.")
@click.option("--include", multiple=True, metavar="KEY", help="Take an excluded task back.")
@click.pass_obj
def tasks(env: Env, exclude: tuple[str, ...], include: tuple[str, ...]) -> None:
    """List the prompts from your sessions that runs train on; exclude or include them.

    A task is a prompt you rated up, or one that was answered and never rated down. The
    choice is kept for every later run (the Finetune screen's `t` makes the same).
    """
    from deskmate.app.store import open_db

    with open_db() as db:
        _tasks(db, exclude, include)


def _tasks(db: Database, exclude: tuple[str, ...], include: tuple[str, ...]) -> None:
    from deskmate.finetune.tasks import choose_task, from_sessions

    listed = {t.key: t for t in from_sessions(db, with_excluded=True)}
    for keys, included in ((exclude, False), (include, True)):
        for key in keys:
            matches = [k for k in listed if k.startswith(key)]
            if len(matches) != 1:
                fail(f"{key!r} names {'no' if not matches else 'more than one'} task; the "
                     "keys are in the first column of `deskmate finetune tasks`", EXIT_USAGE)
            choose_task(db, matches[0], included)
    if exclude or include:
        listed = {t.key: t for t in from_sessions(db, with_excluded=True)}
    if not listed:
        click.echo("no tasks yet: rate answers up in the chat (or accept them by not rating "
                   "them down)", err=True)
    for key, task in listed.items():
        mark = "excluded" if task.metadata.get("excluded") else "included"
        why = "rated up" if task.metadata.get("rated") else "answered"
        click.echo(f"{key}  {mark:<8}  {why:<8}  {' '.join(task.prompt.split())}")
