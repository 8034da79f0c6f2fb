"""Deleting a finetune run: its folder and record go, a served adapter's run stays."""

from __future__ import annotations

import tomllib

from conftest import deskmate
from test_ui_finetune import open_screen, tiny_app
from test_ui_support import wait_for
from textual.widgets import DataTable

from deskmate.app import paths
from deskmate.app.store import open_db
from deskmate.app.store.runs import store_adapter
from deskmate.app.ui.dialogs import ConfirmScreen
from deskmate.finetune.runs import start_run
from deskmate.finetune.spec import RunSpec


def a_run(model: str) -> tuple[int, object]:
    spec, run_dir = start_run(RunSpec(base=model, serving_gguf=model, device="cpu"))
    (run_dir / "progress.jsonl").write_text("Traceback: it failed\n")
    return int(spec.run_id or 0), run_dir


def test_delete_removes_the_folder_and_the_record_but_not_a_served_adapter(home,
                                                                         tiny_model_path):
    run_id, run_dir = a_run(str(tiny_model_path))
    result = deskmate("finetune", "delete", str(run_id), home=home)
    assert result.returncode == 0, result.stderr
    assert not run_dir.exists() and f"deleted run {run_id}" in result.stdout
    assert open_db().execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    again = deskmate("finetune", "delete", str(run_id), home=home)
    assert again.returncode == 1 and f"no finetune run {run_id}" in again.stderr

    served_id, served_dir = a_run(str(tiny_model_path))
    adapter = served_dir / "adapter.gguf"
    adapter.write_bytes(b"GGUF")
    with open_db() as db:
        store_adapter(db, run_id=served_id, name="a", base_model="tiny", path=adapter)
    (home / "config.toml").write_text(f'[model]\nadapter = "{adapter}"\n')
    refused = deskmate("finetune", "delete", str(served_id), home=home)
    assert refused.returncode == 1 and "the one served" in refused.stderr
    assert adapter.exists()
    assert tomllib.loads((home / "config.toml").read_text())["model"]["adapter"] == str(adapter)


async def test_d_on_the_finetune_screen_deletes_the_run_after_asking(home, tiny_model_path):
    _, run_dir = a_run(str(tiny_model_path))
    app = tiny_app(tiny_model_path)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await open_screen(app, pilot)
        runs = screen.query_one("#finetune-runs", DataTable)
        await wait_for(pilot, lambda: runs.row_count == 1, what="the run")
        runs.focus()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: runs.row_count == 0, 30, "the run gone")
    assert not run_dir.exists()
    assert not list((paths.data_dir() / "finetune").glob("run-*"))
