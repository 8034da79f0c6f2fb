"""``deskmate eval``: the agent on a task suite over real local MCP servers, scored."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from deskmate.app.cli.common import EXIT_USAGE, Env, fail
from deskmate.app.cli.model_loading import load_model
from deskmate.app.cli.sandbox import require_isolation, unisolated_option

if TYPE_CHECKING:
    from deskmate.finetune.eval import TaskRun


def _shown(result: TaskRun | None) -> str | None:
    """The progress bar's note: the task run that just finished."""
    return f"{result.mode} {result.task}" if result else None


@click.command("eval")
@click.option("--suite", "suite_path", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Suite folder (servers.json + one folder per task), e.g. assets/eval/local.")
@click.option("--mode", type=click.Choice(["code", "eager", "both"]), default="code",
              show_default=True, help="code: Python that calls tools; eager: native JSON "
              "tool calls; both: each task in both, compared side by side.")
@click.option("--model", "-m", help="Model to evaluate (overrides the config).")
@click.option("--tasks", "task_ids", help="Comma-separated task ids or selection names "
              "(e.g. smoke); default: every task.")
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs per task and mode (sampling makes them differ).")
@click.option("--max-steps", type=click.IntRange(min=1), default=12, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1),
              help="Most tokens per model reply (default: the config's, at most 1024).")
@click.option("--temperature", type=click.FloatRange(min=0.0),
              help="Sampling temperature (default: the config's).")
@click.option("--servers-bin", "bins", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Folder of MCP server executables to use instead of npx/uvx downloads "
                   "(repeatable; also DESKMATE_EVAL_BIN).")
@click.option("--keep-workspaces", is_flag=True, help="Leave each task's temp folder behind.")
@click.option("--stable", is_flag=True,
              help="The same workspace paths, local site address and first-commit dates "
                   "in every run, so two greedy runs (two harnesses, two models) differ "
                   "only where the change acts and compare task by task (a second "
                   "--stable run waits for a task the first is running).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a PNG chart comparing the modes (needs deskmate[plot]).")
@click.option("--memory", "memory_path",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Sessions database whose solved tasks (eval tasks that passed, turns "
                   "rated up) the agent recalls examples from, e.g. a train run's; the "
                   "same task is never recalled. Default: none.")
@unisolated_option
@click.pass_obj
def eval_command(env: Env, suite_path: Path, mode: Literal["code", "eager", "both"],
                 model: str | None, task_ids: str | None, repeats: int, max_steps: int,
                 max_tokens: int | None,
                 temperature: float | None, bins: tuple[Path, ...], keep_workspaces: bool,
                 stable: bool, as_json: bool, plot_path: Path | None, memory_path: Path | None,
                 allow_unisolated: bool) -> None:
    """Evaluate the agent on the tasks of a suite and report success, cost and time.

    Each task runs in a fresh temporary workspace with its own servers, every tool call
    approved (the workspace is a throwaway), and is scored by its deterministic checks.
    The run and its sessions are stored in the sessions database.
    """
    from deskmate.app.agent.factory import limits_from_config, load_experience
    from deskmate.app.store import open_db
    from deskmate.finetune.eval import EvalSettings, SuiteError, load_suite, run_eval
    from deskmate.finetune.eval.report import summary_table, task_table
    from deskmate.finetune.eval.workspace import bin_folders

    try:
        suite = load_suite(suite_path)
        tasks = suite.select([t.strip() for t in task_ids.split(",") if t.strip()]
                             if task_ids else None)
    except SuiteError as exc:
        fail(str(exc), EXIT_USAGE)
    if plot_path is not None:
        _check_matplotlib()
    modes = ("code", "eager") if mode == "both" else (mode,)
    if "code" in modes:
        require_isolation("eval", allow_unisolated)
    experience = None
    if memory_path is not None:
        experience = load_experience(memory_path, skip_same=True)
        if experience is None:
            fail(f"{memory_path}: no solved tasks to recall (a sessions database with "
                 "eval tasks that passed, or turns rated up)", EXIT_USAGE)
    llm = load_model(env, model)
    limits, sandbox_limits = limits_from_config(
        env.config, max_steps=max_steps, temperature=temperature,
        max_tokens=max_tokens or min(env.config.model.max_tokens, 1024))
    settings = EvalSettings(modes=modes, repeats=repeats, limits=limits,
                            sandbox_limits=sandbox_limits, bins=tuple(bin_folders(bins)),
                            keep_workspaces=keep_workspaces, experience=experience,
                            stable=stable)
    total = len(tasks) * len(modes) * repeats
    try:
        with open_db() as db, click.progressbar(
                length=total, label=f"{suite.name} · {llm.info.name}", file=sys.stderr,
                show_pos=True, item_show_func=_shown) as bar:
            def advance(result: TaskRun) -> None:
                bar.update(1, result)
                if result.error:
                    click.echo(f"\n{result.mode} {result.task}: {result.error}", err=True)

            outcome = run_eval(suite, tasks, lambda task, m: llm, settings, db=db,
                               model_name=llm.info.name, on_result=advance)
    finally:
        llm.close()
    summary = outcome.summary
    if plot_path is not None:
        from deskmate.finetune.eval.report import plot

        plot(summary, plot_path, title=f"{suite.name} · {llm.info.name}")
    if as_json:
        click.echo(json.dumps({**summary, "run_id": outcome.run_id, "model": llm.info.name,
                               "suite": str(suite.path)}))
        return
    for m in modes:
        click.echo(f"\n{m} mode")
        click.echo(task_table(outcome.results, m))
    click.echo(f"\n{summary_table(summary)}")
    off = sorted({t for figures in summary["modes"].values() for t in figures["off_stable"]})
    if off:
        click.echo(f"Not at their --stable site address (the port was taken), so not "
                   f"comparable task by task with another run: {', '.join(off)}", err=True)
    click.echo(click.style(f"[eval run {outcome.run_id} · {len(outcome.results)} runs]",
                           dim=True), err=True)


def _check_matplotlib() -> None:
    # The plot extra: optional for users (`make test` installs it), so checked before a run.
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        fail("--plot needs matplotlib: pip install 'deskmate[plot]'", EXIT_USAGE)
