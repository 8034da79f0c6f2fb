"""The Finetune screen under run_test(): what this machine can train, a real tiny run
started with one key (the same child process as `deskmate finetune`), its live progress
and before/after table, stopping it, and serving its adapter."""

from __future__ import annotations

import tomllib

import pytest
from conftest import rated_session
from test_ui_support import make_app, record_notifications, scripted, wait_for
from textual.widgets import Button, DataTable, Input, Log, ProgressBar, Select, Sparkline

from deskmate.app import paths
from deskmate.app.config import Config, ModelConfig
from deskmate.app.store import open_db
from deskmate.app.ui.app import DeskmateApp
from deskmate.app.ui.finetune import FinetuneScreen

PROMPTS = ("Say yes or no.", "Answer with one word, yes or no.", "Is fire cold? Yes or no.",
           "Is the sky green? Yes or no.", "Do fish fly? Yes or no.")


def text(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


def tiny_app(tiny_model_path) -> DeskmateApp:
    """The app configured with the tiny GGUF (which trains on the CPU); its chat model
    is scripted, the training child process loads the GGUF itself."""
    model = scripted("fine")
    return record_notifications(DeskmateApp(Config(model=ModelConfig(name=str(tiny_model_path))),
                                            model_factory=lambda c, s: model, mode="eager"))


def record_tasks(count: int) -> None:
    db = open_db()
    for prompt in PROMPTS[:count]:
        rated_session(db, prompt, "No.")
    db.close()


async def open_screen(app, pilot) -> FinetuneScreen:
    await pilot.press("f5")
    screen = app.screen
    assert isinstance(screen, FinetuneScreen)
    await wait_for(pilot, lambda: bool(screen.survey), what="the survey")
    await pilot.pause()
    return screen


async def test_without_a_model_nothing_starts(home):
    app = make_app(scripted())
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        assert "No model configured" in text(screen, "#finetune-plan")
        assert "No NVIDIA GPU" in text(screen, "#finetune-hardware")
        assert screen.query_one("#finetune-start", Button).disabled
        await pilot.press("s")
        await pilot.pause(0.3)
        assert screen.query_one("#finetune-runs", DataTable).row_count == 0
        assert any("pick one in Models" in n.message for n in app._notifications)


async def test_the_tiny_model_gets_the_cpu_plan_and_task_counts(home, tiny_model_path):
    record_tasks(2)
    app = tiny_app(tiny_model_path)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        plan = text(screen, "#finetune-plan")
        assert "trains on the CPU" in plan and "4 rollouts × 1 task a step" in plan
        assert not screen.query_one("#finetune-start", Button).disabled
        source = screen.query_one("#finetune-source", Select)
        assert source.value == "sessions"
        labels = [str(label) for label, _ in screen.survey.sources]
        assert labels[0] == "your sessions (2 tasks)"
        assert labels[1].startswith("the bundled eval suite (") and len(labels) == 2
        assert screen.query_one("#finetune-steps", Input).value == "10"
        screen.query_one("#finetune-steps", Input).value = "none"
        await pilot.press("s")
        await pilot.pause(0.3)
        assert screen.live is None and any("whole number" in n.message
                                           for n in app._notifications)


async def test_stop_leaves_a_run_that_resumes(home, tiny_model_path):
    record_tasks(2)
    app = tiny_app(tiny_model_path)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        await pilot.press("s")
        log = screen.query_one(Log)
        # The tasks are listed before the policy loads (tens of seconds): stop then.
        await wait_for(pilot, lambda: any("training tasks" in line for line in log.lines),
                       timeout=120, what="the task list")
        assert not screen.query_one("#finetune-stop", Button).disabled
        await pilot.press("x")

        def child() -> str:  # if the stop times out: did the child get it, what did it say
            proc = screen.child
            state = "none" if proc is None else f"pid {proc.pid}, exit {proc.poll()}"
            return f"child {state}, log tail {list(log.lines)[-5:]}"

        await wait_for(pilot, lambda: screen.live is None, timeout=120, what="the stop",
                       context=child)
        runs = screen.query_one("#finetune-runs", DataTable)
        await wait_for(pilot, lambda: runs.row_count == 1 and str(
            runs.get_row_at(0)[2]) == "interrupted", what="the interrupted run")
        assert str(screen.query_one("#finetune-start", Button).label) == "Resume"
        assert "stopped" in log.lines[-1]
        run_id = int(runs.get_row_at(0)[0])
        await pilot.press("s")  # resumes that run (the same tasks), no new one
        await wait_for(pilot, lambda: screen.live is not None and screen.live.run_id == run_id
                       and any("training tasks" in line for line in log.lines),
                       timeout=120, what="the resumed run")
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.live is None, timeout=120, what="the second stop")
        await wait_for(pilot, lambda: str(runs.get_row_at(0)[2]) == "interrupted",
                       what="interrupted again")
        assert runs.row_count == 1


@pytest.mark.slow
async def test_a_run_from_start_to_serving_its_adapter(home, tiny_model_path):
    record_tasks(5)  # one is held out for the before/after evaluation
    app = tiny_app(tiny_model_path)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        screen.query_one("#finetune-steps", Input).value = "1"
        await pilot.press("s")
        runs = screen.query_one("#finetune-runs", DataTable)
        await wait_for(pilot, lambda: runs.row_count == 1, what="the new run")
        assert str(runs.get_row_at(0)[2]) == "running"
        assert screen.query_one("#finetune-start", Button).disabled
        await wait_for(pilot, lambda: screen.live is None, timeout=900, what="the run")
        log = list(screen.query_one(Log).lines)
        assert any(line.startswith("done") for line in log), log[-20:]
        assert screen.query_one("#finetune-reward", Sparkline).data is not None
        assert len(screen.query_one("#finetune-reward", Sparkline).data) == 1
        bar = screen.query_one(ProgressBar)
        assert (bar.progress, bar.total) == (1, 1)
        assert "step 1/1" in text(screen, "#finetune-metrics")
        compare = screen.query_one("#finetune-compare", DataTable)
        assert [str(compare.get_row_at(i)[0]) for i in range(compare.row_count)] == [
            "base model (1)", "with the adapter (1)"]
        await wait_for(pilot, lambda: str(runs.get_row_at(0)[2]) == "finished",
                       what="the finished run")
        assert str(runs.get_row_at(0)[4]) == "ready"
        await pilot.press("u")
        await wait_for(pilot, lambda: str(runs.get_row_at(0)[4]) == "● served",
                       what="the served adapter")
        adapter = tomllib.loads(paths.config_file().read_text())["model"]["adapter"]
        assert adapter.endswith("adapter.gguf") and app.config.model.adapter == adapter
        row = open_db().execute("SELECT active, path FROM adapters").fetchone()
        assert row == (1, adapter)


async def test_excluded_session_prompts_are_not_trained_on(home):
    from deskmate.app.ui.task_picker import TaskPickerScreen
    from deskmate.finetune.tasks import from_sessions

    record_tasks(3)
    app = make_app(scripted())
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        assert str(screen.survey.sources[0][0]) == "your sessions (3 tasks)"
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, TaskPickerScreen), what="picker")
        picker = app.screen
        table = picker.query_one("#task-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3, what="the tasks")
        assert [str(table.get_row_at(i)[1]) for i in range(3)] == list(PROMPTS[:3])
        await pilot.press("down", "space")
        assert str(table.get_row_at(1)[0]) == "–"
        assert "2 of 3 included" in str(picker.query_one("#task-count").render())
        await wait_for(pilot, lambda: len(from_sessions(open_db())) == 2, what="the choice")
        await pilot.press("escape")
        await wait_for(pilot, lambda: str(screen.survey.sources[0][0]) ==
                       "your sessions (2 tasks, 1 excluded)", what="the new count")
    assert [t.prompt for t in from_sessions(open_db())] == [PROMPTS[0], PROMPTS[2]]


async def test_without_the_extras_s_says_how_to_install_them(home, tiny_model_path,
                                                             monkeypatch):
    from deskmate.finetune import extras

    monkeypatch.setattr(extras, "find_spec", lambda name: None)
    record_tasks(2)
    app = tiny_app(tiny_model_path)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        command = extras.install_command()
        plan = text(screen, "#finetune-plan").replace("\n", "")
        assert "torch, transformers, peft" in plan and "[finetune]" in plan
        assert screen.query_one("#finetune-start", Button).disabled
        await pilot.press("s")
        await pilot.pause(0.3)
        assert any(command in n.message for n in app._notifications)
        assert screen.live is None and screen.child is None
        assert screen.query_one("#finetune-runs", DataTable).row_count == 0
        assert not list((paths.data_dir() / "finetune").glob("run-*"))


async def test_i_installs_the_extras_after_asking_and_follows_pip(home, tiny_model_path,
                                                               monkeypatch, tmp_path):
    import sys

    from deskmate.app.ui.dialogs import ConfirmScreen
    from deskmate.finetune import extras

    installed = tmp_path / "installed"
    real = extras.find_spec
    monkeypatch.setattr(extras, "find_spec",
                        lambda name: real(name) if installed.exists() else None)
    # A stand-in for pip that says what pip says and leaves the packages "installed".
    fake_pip = (f"{sys.executable} -c \"import pathlib; print('Successfully installed "
                f"torch'); pathlib.Path('{installed}').touch()\"")
    monkeypatch.setattr(extras, "install_command", lambda: fake_pip)
    record_tasks(2)
    app = tiny_app(tiny_model_path)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        assert "press i" in text(screen, "#finetune-plan")
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("n")  # asked first: nothing runs on a no
        await pilot.pause(0.3)
        assert not installed.exists()
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        log = screen.query_one("#finetune-log", Log)
        await wait_for(pilot, lambda: "Successfully installed torch" in "\n".join(log.lines),
                       60, "pip's output in the log")
        await wait_for(pilot, lambda: screen.survey is not None and screen.survey.extras.ok,
                       60, "the survey to see the extras")
        assert "press i" not in text(screen, "#finetune-plan")


async def test_a_failed_run_keeps_and_shows_why(home, tiny_model_path):
    from deskmate.app.ui.finetune_view import RunView
    from deskmate.finetune.runs import start_run
    from deskmate.finetune.spec import RunSpec

    spec, run_dir = start_run(RunSpec(base=str(tiny_model_path),
                                      serving_gguf=str(tiny_model_path), device="cpu"))
    (run_dir / "progress.jsonl").write_text(
        "Traceback (most recent call last):\nModuleNotFoundError: No module named 'torch'\n")
    app = tiny_app(tiny_model_path)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        log = screen.query_one(Log)
        await wait_for(pilot, lambda: "No module named 'torch'" in "\n".join(log.lines),
                       what="the traceback replayed from the run's log")
        screen.live = RunView(int(spec.run_id or 0), log=["[x] Traceback", "No module torch"])
        screen.post_message(FinetuneScreen.Ended(int(spec.run_id or 0), 1))
        await wait_for(pilot, lambda: any("No module torch" in n.message and "[x]" in n.message
                                          for n in app._notifications), what="the failure")
