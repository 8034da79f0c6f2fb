"""``deskmate config``: where the config lives, what it holds, a documented starter."""

from __future__ import annotations

import dataclasses
import json

import click

from deskmate.app.cli.common import Env, fail


@click.group()
def config() -> None:
    """Show or create the config file."""


@config.command()
@click.pass_obj
def path(env: Env) -> None:
    """Print the path of the config file (it may not exist yet)."""
    from deskmate.app import paths

    click.echo(str(env.config_path or paths.config_file()))


@config.command()
@click.pass_obj
def show(env: Env) -> None:
    """Print the effective config (file merged over defaults) as JSON."""
    click.echo(json.dumps(dataclasses.asdict(env.config), indent=2))


@config.command()
@click.pass_obj
def init(env: Env) -> None:
    """Write the documented default config, unless a config file already exists."""
    from deskmate.app import paths
    from deskmate.app.config import atomic_write, documented_template

    target = env.config_path or paths.config_file()
    if target.exists():
        fail(f"{target} already exists; it was left as it is", 1)
    atomic_write(target, documented_template())
    click.echo(str(target))
