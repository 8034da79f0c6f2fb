"""Start the app from the CLI (kept apart so the CLI imports no Textual)."""

from __future__ import annotations

from deskmate.app.cli.common import Env


def launch(env: Env) -> None:
    from deskmate.app.ui.app import DeskmateApp

    config = env.config  # a broken config stops us here, before the screen switches
    # Changes made in the app (servers, model, context) go to the file it was started with.
    DeskmateApp(config, model_spec=env.model, config_path=env.config_path).run()
