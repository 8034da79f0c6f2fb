"""Start the app from the CLI (kept apart so the CLI imports no Textual)."""

from __future__ import annotations

from app.cli.common import Env


def launch(env: Env) -> None:
    from app.ui.app import DeskmateApp

    config = env.config  # a broken config stops us here, before the screen switches
    DeskmateApp(config, model_spec=env.model).run()
