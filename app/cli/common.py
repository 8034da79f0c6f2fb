"""Shared CLI plumbing: the context object and one place that turns errors into exits."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import click

from deskmate.app.config import Config, ConfigError, load_config
from deskmate.app.llm.base import ModelError

EXIT_FAILURE, EXIT_USAGE, EXIT_CONFIG, EXIT_INTERRUPTED = 1, 2, 3, 130


@dataclass
class Env:
    """What every command may need; the config is read on first use."""

    config_path: Path | None = None
    model: str | None = None
    mcp_config: Path | None = None  # a servers file that replaces [mcp.servers] for this run
    _config: Config | None = field(default=None, repr=False)

    def use_servers_file(self, path: Path) -> None:
        self.mcp_config, self._config = path, None

    @property
    def config(self) -> Config:
        if self._config is None:
            config = load_config(self.config_path)
            if self.mcp_config is not None:
                config = _with_servers_from(config, self.mcp_config)
            self._config = config
        return self._config


def _with_servers_from(config: Config, path: Path) -> Config:
    from dataclasses import replace

    from deskmate.tools.hub.dialects import ImportError_, load_server_file

    try:
        result = load_server_file(path)
    except ImportError_ as exc:
        fail(str(exc), EXIT_FAILURE)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    servers = {server.name: server for server in result.servers}
    return replace(config, mcp=replace(config.mcp, servers=servers))


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    click.echo(f"deskmate: {message}", err=True)
    sys.exit(code)


class DeskmateGroup(click.Group):
    """A click group that reports our errors as one clear line instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            fail(f"{exc}\n(fix the file, or point DESKMATE_CONFIG at another one)", EXIT_CONFIG)
        except ModelError as exc:
            fail(str(exc), EXIT_FAILURE)
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
