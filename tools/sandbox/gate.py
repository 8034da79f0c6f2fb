"""Cells where nothing isolates them: at the ``rlimits`` level a cell runs with the
user's rights, so the model's code runs only when someone allowed it.

The app asks for each cell (allow once, allow for the session, deny); ``deskmate run``,
``eval`` and ``finetune`` refuse to start in code mode there unless given
``--allow-unisolated``, which sets ALLOW_ENV for this process and its children (a
finetune run is one). Where the sandbox isolates (bwrap, unshare) the gate is open.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from deskmate.tools.sandbox.results import Isolation

ALLOW_ENV = "DESKMATE_ALLOW_UNISOLATED"
FLAG = "--allow-unisolated"

CellDecision = Literal["allow_once", "allow_session", "deny"]


@dataclass(frozen=True)
class CellRequest:
    """One cell that would run without isolation, as the user is shown it."""

    code: str
    isolation: Isolation


# A front end's way to ask (the TUI's modal); blocks until the user answers.
CellApprover = Callable[[CellRequest], CellDecision]


def allowed_by_flag() -> bool:
    return os.environ.get(ALLOW_ENV, "") == "1"


def allow_unisolated() -> None:
    """What --allow-unisolated does: cells run without asking, here and in children."""
    os.environ[ALLOW_ENV] = "1"


def unisolated_refusal(command: str, *, eager: bool = True) -> str:
    """Why ``command`` will not run the model's code here, and what to do."""
    return (f"this machine cannot isolate the model's code (sandbox level rlimits: it would "
            f"run with your rights, your files and the network in reach), so deskmate "
            f"{command} will not run it unasked. For real isolation install bubblewrap (apt "
            f"install bubblewrap) or allow user namespaces; or rerun with {FLAG} to run it "
            "anyway" + ("; or use --mode eager (no code runs)." if eager else "."))


@dataclass
class CellGate:
    """Whether a cell may run; one per session (an "allow for the session" lasts until
    the next session, across agent rebuilds)."""

    approver: CellApprover | None = None
    allowed_for_session: bool = False

    def refusal(self, code: str, isolation: Isolation) -> str | None:
        """None when the cell may run, else the error the model reads instead."""
        if isolation.level != "rlimits" or self.allowed_for_session or allowed_by_flag():
            return None
        if self.approver is None:
            return ("this cell was not run: nothing isolates code on this machine "
                    f"(rlimits), and no one can be asked here ({FLAG} allows it)")
        decision = self.approver(CellRequest(code, isolation))
        if decision == "allow_session":
            self.allowed_for_session = True
        if decision == "deny":
            return ("the user did not allow this cell to run (no isolation on this "
                    "machine). Do not retry it; answer without running code, or ask the "
                    "user")
        return None

    def status(self, isolation: Isolation) -> str:
        """What is in force, for the status line ("" where the sandbox isolates)."""
        if isolation.level != "rlimits":
            return ""
        if self.allowed_for_session or allowed_by_flag():
            return "cells run unasked"
        return "each cell asks"

    def new_session(self) -> None:
        self.allowed_for_session = False
