"""Open the model for a command, pulling it first when it is named but not here yet."""

from __future__ import annotations

import click

from deskmate.app.cli.common import Env
from deskmate.app.llm import ChatModel, open_model
from deskmate.app.llm.registry import ModelNotDownloaded


def load_model(env: Env, model: str | None = None) -> ChatModel:
    spec = model or env.model
    try:
        return open_model(env.config, spec)
    except ModelNotDownloaded as missing:
        # The user named a model we know how to fetch: fetching it is what they expect.
        from deskmate.app.llm.download import pull

        # stderr, so that --json output on stdout stays one clean object
        click.echo(f"downloading {missing.source.label} from {missing.source.repo} …",
                   err=True)
        pull(missing.source.spec)
        return open_model(env.config, spec)
