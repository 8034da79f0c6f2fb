"""The ``deskmate`` command.

Imports stay light here (click, our config): ``deskmate --help`` must answer at once,
so llama_cpp, textual, torch and friends load inside the commands that need them.

Exit codes: 0 success, 1 a runtime failure (model, download, server), 2 wrong usage,
3 an unusable config file, 130 interrupted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from deskmate.app import __version__
from deskmate.app.cli.common import DeskmateGroup, Env


@click.group(cls=DeskmateGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="deskmate")
@click.option("--config", "config_path", type=click.Path(path_type=Path),
              help="Config file to use (default: DESKMATE_CONFIG or the user config dir).")
@click.option("--model", "-m", help="Model for this run: registry name, hf:OWNER/REPO/FILE, "
              "or a .gguf path.")
@click.option("--mcp-config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Use the MCP servers in this file (Claude/.mcp.json dialects) for this run "
                   "instead of the config's.")
@click.pass_context
def main(ctx: click.Context, config_path: Path | None, model: str | None,
         mcp_config: Path | None) -> None:
    """deskmate — a local agent for your terminal, your tools, your models.

    Run without a command to open the app.
    """
    ctx.obj = Env(config_path=config_path, model=model, mcp_config=mcp_config)
    if ctx.invoked_subcommand is None:
        from deskmate.app.ui.launch import launch

        launch(ctx.obj)


def _add_commands() -> None:
    from deskmate.app.cli.chat import chat
    from deskmate.app.cli.config_cmd import config
    from deskmate.app.cli.eval import eval_command
    from deskmate.app.cli.finetune import finetune
    from deskmate.app.cli.mcp import mcp
    from deskmate.app.cli.models import models
    from deskmate.app.cli.run import run
    from deskmate.app.cli.sandbox import sandbox
    from deskmate.app.cli.sessions import sessions
    from deskmate.app.cli.tools import tools

    for command in (chat, models, config, mcp, sessions, run, sandbox, eval_command, tools,
                    finetune):
        main.add_command(command)


_add_commands()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
