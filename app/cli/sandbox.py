"""``deskmate sandbox``: run code in the agent's isolated sandbox, see its isolation.

``exec`` starts a fresh sandbox with no tools — for debugging and for security checks.
It exits 0 whatever the code did: the outcome is in the printed status.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import TextIO, TypeVar

import click

from deskmate.app.cli.common import EXIT_FAILURE, EXIT_USAGE, fail

F = TypeVar("F", bound=Callable[..., object])


def unisolated_option(command: F) -> F:
    """``--allow-unisolated``, for the commands that run the model's code."""
    return click.option(
        "--allow-unisolated", is_flag=True,
        help="Run the model's code even where the sandbox cannot isolate it (level "
             "rlimits: your rights, your files, the network). Off by default, also "
             "under --yes.")(command)


def require_isolation(command: str, allowed: bool, *, eager: bool = True) -> None:
    """Code mode runs only where the sandbox isolates, or when ``allowed``: else exit 2
    with what to do (``eager``: --mode eager is one way out)."""
    from deskmate.tools.sandbox import detect_isolation
    from deskmate.tools.sandbox.gate import allow_unisolated, allowed_by_flag, unisolated_refusal

    if allowed:
        allow_unisolated()  # the gate reads it, here and in a finetune run's process
    elif not allowed_by_flag() and detect_isolation().level == "rlimits":
        fail(unisolated_refusal(command, eager=eager), EXIT_USAGE)


@click.group()
def sandbox() -> None:
    """Run code in the agent's isolated sandbox."""


@sandbox.command("exec")
@click.argument("source", type=click.File("r"))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: status, "
              "stdout, error, value, duration_s, isolation.")
@click.option("--timeout", type=float, default=None,
              help="Wall-clock limit in seconds (default: the sandbox's, 30).")
def exec_cmd(source: TextIO, as_json: bool = False, timeout: float | None = None) -> None:
    """Run the Python in SOURCE (a file, or - for stdin) in a fresh sandbox, no tools.

    Prints the output, the error and the exit reason: ok, error, timeout, memory, killed.
    """
    from deskmate.tools.sandbox import Sandbox, SandboxError

    code = source.read()
    try:
        with Sandbox() as box:
            result = box.execute(code, timeout=timeout)
            isolation = box.isolation
    except SandboxError as exc:
        fail(str(exc), EXIT_FAILURE)
    if as_json:
        click.echo(json.dumps({"status": result.status, "stdout": result.stdout,
                               "error": result.error, "value": result.value,
                               "duration_s": round(result.duration_s, 4),
                               "isolation": asdict(isolation)}, ensure_ascii=False))
        return
    sys.stdout.write(result.stdout)
    if result.stdout and not result.stdout.endswith("\n"):
        sys.stdout.write("\n")
    if result.value is not None:
        click.echo(result.value)
    if result.error:
        click.echo(result.error, err=True)
    click.echo(f"[{result.status}] {result.duration_s:.2f} s, isolation: {isolation.level}",
               err=True)


@sandbox.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print the isolation as JSON.")
def info_cmd(as_json: bool = False) -> None:
    """The isolation the sandbox gets on this machine."""
    from deskmate.tools.sandbox import detect_isolation
    from deskmate.tools.sandbox.isolation import install_hint

    isolation = detect_isolation()
    if as_json:
        click.echo(json.dumps(asdict(isolation)))
        return
    click.echo(f"level: {isolation.level}")
    click.echo(f"network: {'reachable' if isolation.network else 'none'}")
    click.echo(f"home directory: {'visible' if isolation.home_visible else 'hidden'}")
    click.echo(f"details: {isolation.details}")
    if hint := install_hint():
        click.echo(f"better: {hint}")


@sandbox.command("hint")
def hint_cmd() -> None:
    """One line when installing a package would give the sandbox a better level (make
    run prints it before the app starts); nothing otherwise."""
    from deskmate.tools.sandbox.isolation import install_hint

    if hint := install_hint():
        click.echo(f"deskmate: {hint}", err=True)
