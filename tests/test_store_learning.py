"""The learning loop's tables through the store: tasks with versioned rubrics, task
choices, runs and adapters, eval results, and what training reads from the sessions."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import rated_session

from deskmate.app.agent import events as ev
from deskmate.app.store import Recorder, open_db, rate
from deskmate.app.store import runs as R
from deskmate.app.store.evals import EvalResult, add_result, tie_to_finetune_run
from deskmate.app.store.sessions import recorded_calls
from deskmate.app.store.tasks import (
    NewTask,
    load_task,
    rated_turns,
    save_suite_task,
    save_tasks,
    set_task_choice,
    task_choices,
)
from deskmate.tools.policy import Decision


def test_with_closes_the_database(home):
    with open_db() as db:
        assert db.execute("SELECT 1").fetchone() == (1,)
    with pytest.raises(sqlite3.ProgrammingError):
        db.execute("SELECT 1")


def _task(prompt: str, criteria: str | None = "[]", **kw) -> NewTask:
    return NewTask(kw.pop("source", "user"), prompt, kw.pop("split", "train"),
                   kw.pop("checks", "{}"), kw.pop("metadata", "{}"), criteria, **kw)


def test_tasks_are_found_again_by_key_and_rubrics_get_versions(db):
    first = [_task("List docs/", '[{"text": "a"}]', key="k1", metadata='{"key": "k1"}'),
             _task("Repo size?", None, key="k2", metadata='{"key": "k2"}')]
    ids = save_tasks(db, first)
    again = save_tasks(db, [_task("list docs", '[{"text": "b"}]', key="k1", split="heldout",
                                  checks='{"answer_regex": "x"}')], created_by="user")
    assert again == ids[:1]
    stored = load_task(db, ids[0])
    assert stored is not None
    # the prompt and metadata stay the first one's; split and checks are the new ones
    assert (stored.prompt, stored.split, stored.checks, stored.metadata, stored.criteria) == (
        "List docs/", "heldout", {"answer_regex": "x"}, {"key": "k1"}, '[{"text": "b"}]')
    versions = db.execute("SELECT version, created_by FROM rubrics WHERE task_id = ? "
                          "ORDER BY version", [ids[0]]).fetchall()
    assert versions == [(1, "judge"), (2, "user")]
    save_tasks(db, [_task("List docs/", '[{"text": "b"}]', key="k1")])  # same: no version
    assert db.execute("SELECT count(*) FROM rubrics").fetchone() == (2,)
    no_rubric = load_task(db, ids[1])
    assert no_rubric is not None and no_rubric.criteria is None
    assert load_task(db, 9999) is None


def test_a_suite_task_is_reused_while_prompt_and_checks_stay(db):
    meta = json.dumps({"suite": "/s", "task": "t1"})
    task = _task("Sum it", '[{"criterion": "c"}]', source="suite", split="heldout",
                 checks='{"verify_py": true}', metadata=meta)
    first = save_suite_task(db, task, suite="/s", name="t1")
    assert save_suite_task(db, task, suite="/s", name="t1") == first
    changed = NewTask("suite", "Sum it", "heldout", '{"verify_py": false}', meta, None)
    assert save_suite_task(db, changed, suite="/s", name="t1") != first
    assert db.execute("SELECT created_by FROM rubrics").fetchall() == [("suite",)]


def test_task_choices_and_rated_turns(db):
    set_task_choice(db, "abc", False)
    set_task_choice(db, "abc", True)
    set_task_choice(db, "def", False)
    assert task_choices(db) == {"abc": True, "def": False}
    up = rated_session(db, "Which files?", "a.md")
    rec = Recorder.new(db, model="m", title="eval suite/t1")  # not the user's session
    rec.record(ev.TurnStarted(turn=1, user_message="eval prompt"))
    turns = rated_turns(db)
    assert [(t.session_id, t.turn, t.prompt, t.answer, t.turn_rating, t.session_rating)
            for t in turns] == [(up, 1, "Which files?", "a.md", None, 1)]
    rate(db, up, "down", turn=1)
    assert rated_turns(db)[0].turn_rating == -1


def test_runs_adapters_and_eval_results(db, tmp_path):
    run = R.start_run(db, kind="finetune", base_model="b.gguf", config_json='{"grpo": {}}',
                      log_path=lambda i: tmp_path / f"run-{i}" / "progress.jsonl")
    assert R.finetune_log_path(db, run) == str(tmp_path / f"run-{run}" / "progress.jsonl")
    assert R.adapter_path(db, run) is None
    R.store_adapter(db, run_id=run, name=f"run-{run}", base_model="b.gguf",
                            path=Path("a1.gguf"))
    second = R.store_adapter(db, run_id=run, name=f"run-{run}", base_model="b.gguf",
                             path=Path("a2.gguf"))  # the same name replaces it
    assert db.execute("SELECT id, path FROM adapters").fetchall() == [(second, "a2.gguf")]
    assert R.adapter_path(db, run) == Path("a2.gguf")
    R.activate_adapter(db, run)
    R.finish_run(db, run, status="finished", metrics_json='{"steps": 2}')
    listed = R.list_finetune_runs(db)
    assert [(r.id, r.status, r.config, r.adapter_path, r.adapter_active) for r in listed] == [
        (run, "finished", {"grpo": {}}, "a2.gguf", True)]

    eval_run = R.start_run(db, kind="eval", base_model="b.gguf", config_json="{}")
    assert R.finetune_log_path(db, eval_run) is None  # not a finetune run
    add_result(db, EvalResult(eval_run, None, "code", True, 1.0, 2, 1, 0.5, "{}",
                              prompt_tokens=30))
    add_result(db, EvalResult(eval_run, None, "code", None, 0.5, 1, 0, 0.1, "{}"))
    tie_to_finetune_run(db, eval_run, finetune_run=run, which="adapter", adapter_id=second)
    config = json.loads(db.execute("SELECT config FROM runs WHERE id = ?",
                                   [eval_run]).fetchone()[0])
    assert config == {"finetune_run": run, "which": "adapter"}
    rows = db.execute("SELECT success, prompt_tokens, adapter_id FROM eval_results "
                      "ORDER BY id").fetchall()
    assert rows == [(1, 30, second), (None, None, second)]
    assert len(R.list_finetune_runs(db)) == 1  # eval runs are not listed


def test_recorded_calls_are_the_ones_that_ran(db):
    rec = Recorder.new(db, model="m")
    rec.record(ev.TurnStarted(turn=1, user_message="clean up"))
    calls: tuple[tuple[str, dict[str, str], Decision], ...] = (
        ("c1", {"path": "a"}, "allow_once"), ("c2", {"path": "b"}, "deny"))
    for call_id, args, approval in calls:
        rec.record(ev.ToolCallStarted(call_id=call_id, step=1, server="fs",
                                      tool="delete_file", arguments=args))
        rec.record(ev.ToolApprovalDecided(call_id=call_id, decision=approval,
                                          decided_by="user"))
        rec.record(ev.ToolCallFinished(call_id=call_id, server="fs", tool="delete_file",
                                       result=f"done {call_id}", is_error=False,
                                       duration_s=0.1))
    rec.record(ev.ToolCallStarted(call_id="c3", step=2, server="fs", tool="read",
                                  arguments={}))  # never finished
    assert [(c.server, c.tool, c.arguments, c.result, c.structured, c.is_error)
            for c in recorded_calls(db)] == [
        ("fs", "delete_file", {"path": "a"}, "done c1", None, False)]
