"""Where nothing isolates the sandbox (level rlimits), the model's code runs only when
someone allowed it: the app asks for each cell, the CLI commands that run code refuse
without --allow-unisolated. The level is forced with DESKMATE_SANDBOX_ISOLATION, as on a
machine that offers nothing better; cells run in the real worker."""

from __future__ import annotations

import pytest
from conftest import ROOT, deskmate
from test_ui_support import ask, make_app, ready, scripted, turn_done, wait_for
from textual.widgets import Static

from deskmate.app.ui.blocks import ActionBlock
from deskmate.app.ui.cell_approval import CellApprovalScreen
from deskmate.tools.sandbox import CellGate, CellRequest, Sandbox
from deskmate.tools.sandbox.gate import ALLOW_ENV
from deskmate.tools.sandbox.isolation import OVERRIDE_ENV, unavailable

PLANT = "open('planted.txt', 'w').write('x')\nprint('ran')"


@pytest.fixture
def unisolated(monkeypatch):
    monkeypatch.setenv(OVERRIDE_ENV, "rlimits")
    monkeypatch.delenv(ALLOW_ENV, raising=False)


class Answers:
    """A person at the keyboard: answers in turn, remembers what was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers, self.asked = list(answers), []

    def __call__(self, request: CellRequest):
        self.asked.append(request.code)
        return self.answers.pop(0)


def test_a_denied_cell_does_not_run_and_the_model_reads_why(unisolated):
    person = Answers("deny", "allow_once", "allow_once")
    with Sandbox(gate=CellGate(person)) as box:
        denied = box.execute(PLANT)
        assert denied.status == "error" and "did not allow" in denied.error
        assert not (box.workdir / "planted.txt").exists() and denied.stdout == ""
        assert box.execute(PLANT).stdout == "ran\n"
        assert box.execute("1 + 1").value == "2"  # allowed once: asked again
    assert person.asked == [PLANT, PLANT, "1 + 1"]


def test_allowed_for_the_session_asks_no_more_until_a_new_session(unisolated):
    person = Answers("allow_session", "deny")
    gate = CellGate(person)
    with Sandbox(gate=gate) as box:
        assert box.execute("1").value == "1" and box.execute("2").value == "2"
        assert len(person.asked) == 1 and gate.status(box.isolation) == "cells run unasked"
        gate.new_session()
        assert gate.status(box.isolation) == "each cell asks"
        assert box.execute("3").status == "error" and len(person.asked) == 2


def test_with_no_one_to_ask_a_cell_runs_only_with_the_flag(unisolated, monkeypatch):
    with Sandbox(gate=CellGate()) as box:
        refused = box.execute(PLANT)
        assert refused.status == "error" and "--allow-unisolated" in refused.error
        assert not (box.workdir / "planted.txt").exists()
        monkeypatch.setenv(ALLOW_ENV, "1")
        assert box.execute(PLANT).stdout == "ran\n"


@pytest.mark.parametrize("level", ["bwrap", "unshare"])
def test_an_isolated_sandbox_never_asks(level, monkeypatch):
    monkeypatch.setenv(OVERRIDE_ENV, level)
    if reason := unavailable(level):
        pytest.skip(reason)
    person = Answers()
    gate = CellGate(person)
    with Sandbox(gate=gate) as box:
        assert box.execute(PLANT).stdout == "ran\n" and person.asked == []
        assert gate.status(box.isolation) == ""


@pytest.mark.parametrize("args", [
    ("run", "--no-record", "hello"), ("run", "--no-record", "--yes", "--yes-all", "hello"),
    ("finetune", "--model", "tiny", "--device", "cpu")])
def test_commands_that_run_code_refuse_without_the_flag(home, args):
    done = deskmate(*args, home=home, env={OVERRIDE_ENV: "rlimits", ALLOW_ENV: ""}, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "--allow-unisolated" in done.stderr and "rlimits" in done.stderr
    assert "apt install bubblewrap" in done.stderr


def test_eval_in_code_mode_refuses_without_the_flag(home):
    suite = ROOT / "assets/eval/local"
    done = deskmate("eval", "--suite", str(suite), home=home,
                    env={OVERRIDE_ENV: "rlimits", ALLOW_ENV: ""}, timeout=120)
    assert done.returncode == 2 and "--allow-unisolated" in done.stderr, done.stderr


@pytest.mark.slow
def test_run_with_the_flag_runs_the_cell(home, tiny_model_path):
    done = deskmate("run", "--no-record", "--allow-unisolated", "--model",
                    str(tiny_model_path), "--max-steps", "1", "--max-tokens", "8", "hi",
                    home=home, env={OVERRIDE_ENV: "rlimits", ALLOW_ENV: ""}, timeout=300)
    assert done.returncode != 2 and "--allow-unisolated" not in done.stderr, done.stderr


async def test_the_app_shows_the_cell_and_runs_it_only_when_allowed(home, unisolated):
    cell = "Let me write it.\n```python\n" + PLANT + "\n```"
    model = scripted(cell, cell, "Final answer: done")
    app = make_app(model, mode="code")
    async with app.run_test() as pilot:
        await ready(app, pilot)
        label = app.chat.query_one("#sandbox", Static)
        assert "each cell asks" in str(label.render())
        workdir = app.conversation.runtime.sandbox.workdir
        await ask(app, pilot, "plant it")
        await wait_for(pilot, lambda: isinstance(app.screen, CellApprovalScreen), 60, "cell")
        assert PLANT in str(app.screen.query_one("#cell-code", Static).render())
        await pilot.press("n")  # the first cell is refused ...
        await wait_for(pilot, lambda: isinstance(app.screen, CellApprovalScreen), 60, "again")
        assert not (workdir / "planted.txt").exists()
        await pilot.press("s")  # ... the second runs, and the session's cells run unasked
        await turn_done(app, pilot, 60)
        assert (workdir / "planted.txt").read_text() == "x"
        first, second = list(app.chat.query(ActionBlock))
        assert (first.status, second.status) == ("error", "ok")
        assert "cells run unasked" in str(label.render())
