"""The Finetune screen's upkeep: install the training extras (``i``) and delete a run (``d``).

Neither touches a run in progress: installing runs the extras' pip command with its
output in the screen's log, deleting removes a run's folder and record
(``app.services.finetune_runs``). Both ask first, and both have the screen look at the
machine again when done. A mixin of ``FinetuneScreen``: its keys stay in that screen's
``BINDINGS``, so help, the footer and the command palette list them with the others.
"""

from __future__ import annotations

import importlib
import shlex
import subprocess
from typing import TYPE_CHECKING

from textual import on, work
from textual.message import Message
from textual.widgets import Log

from deskmate.app.ui.dialogs import ConfirmScreen
from deskmate.app.ui.host import host
from deskmate.app.ui.tables import TableScreen

if TYPE_CHECKING:
    from textual.worker import Worker

    from deskmate.app.ui.finetune_view import RunView
    from deskmate.finetune.survey import Survey


class FinetuneUpkeep(TableScreen):
    survey: Survey | None  # what the machine has (the extras among it); None until surveyed
    live: RunView | None  # the run this app started, while it runs: never deleted

    class InstallOutput(Message):
        """A line pip printed while installing the extras."""

        def __init__(self, line: str) -> None:
            self.line = line
            super().__init__()

    class Installed(Message):
        def __init__(self, code: int) -> None:
            self.code = code
            super().__init__()

    def survey_machine(self) -> Worker[None]:
        """Look at the machine and the runs again (the screen's worker)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- install the extras

    def action_install_extras(self) -> None:
        extras = self.survey.extras if self.survey is not None else None
        if extras is None:
            return
        if extras.ok:
            self.notify("The training libraries are installed.")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.query_one("#finetune-log", Log).write_line(f"$ {extras.command}")
                self.notify("installing the finetune extra … (the log below follows it)")
                self.install(extras.command)

        self.app.push_screen(ConfirmScreen(
            f"Install {', '.join(extras.missing)} (the finetune extra) into this "
            f"environment? It downloads several GB.\n\n{extras.command}", yes="Install"),
            confirmed)

    @work(thread=True, exclusive=True, group="finetune-install", exit_on_error=False)
    def install(self, command: str) -> None:
        """Run the extras' pip command, its output into the log as it comes."""
        try:
            child = subprocess.Popen(shlex.split(command), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1)
        except OSError as exc:
            raise ValueError(f"could not run {command}: {exc}") from exc
        assert child.stdout is not None
        for raw in child.stdout:
            self.post_message(self.InstallOutput(raw.rstrip("\n")))
        self.post_message(self.Installed(child.wait()))

    @on(InstallOutput)
    def install_output(self, message: InstallOutput) -> None:
        self.query_one("#finetune-log", Log).write_line(message.line)

    @on(Installed)
    def installed(self, message: Installed) -> None:
        importlib.invalidate_caches()  # find_spec must see what pip just put there
        if message.code == 0:
            self.notify("finetune extra installed", title="Installed")
        else:
            self.notify(f"pip exited with status {message.code}: the log says why",
                        title="Install extras failed", severity="error", timeout=15)
        self.survey_machine()

    # ---------------------------------------------------------------- delete a run

    def action_delete_run(self) -> None:
        if not self.selected:
            return
        run_id = int(self.selected)
        if self.live is not None and self.live.run_id == run_id:
            self.notify("This run is going: x stops it first.", severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.delete(run_id)

        self.app.push_screen(ConfirmScreen(
            f"Delete run {run_id}: its folder (checkpoints, adapter, log) and its record?",
            yes="Delete"), confirmed)

    @work(thread=True, exclusive=True, group="finetune-delete", exit_on_error=False)
    def delete(self, run_id: int) -> None:
        from deskmate.app.services.finetune_runs import delete_run

        deleted = delete_run(run_id, host(self).config)
        self.app.call_from_thread(self.notify, f"deleted run {run_id}" + (
            f" and {deleted.folder}" if deleted.folder else ""))
        self.survey_machine()
