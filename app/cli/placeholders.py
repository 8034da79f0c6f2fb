"""Commands whose features are still being built.

They exist so that ``deskmate --help`` shows the whole shape of the tool; each says
plainly that it is not available yet instead of pretending to work.
"""

from __future__ import annotations

import click

from app.cli.common import EXIT_FAILURE, fail

PLANNED: dict[str, str] = {}


def _planned(name: str, summary: str) -> click.Command:
    @click.command(name, help=f"{summary}\n\nNot available in this version yet.",
                   short_help=f"{summary} (not yet available)",
                   context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def command(args: tuple[str, ...]) -> None:
        fail(f"`deskmate {name}` is not available in this version yet. "
             "`deskmate chat` and `deskmate models` work today.", EXIT_FAILURE)

    return command


def register_placeholders(group: click.Group) -> None:
    for name, summary in PLANNED.items():
        group.add_command(_planned(name, summary))
