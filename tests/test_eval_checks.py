"""Scoring: each check type, verify.py, the mean, aggregation, tables and the chart."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskmate.finetune.eval.checks import score_task
from deskmate.finetune.eval.report import markdown_table, plot, summarize, summary_table, task_table
from deskmate.finetune.eval.results import TaskRun
from deskmate.finetune.eval.suite import Checks, Task


def task_with(checks: Checks | None = None, verify=None) -> Task:
    return Task(id="t", path=Path("."), prompt="p", servers=(), checks=checks or Checks(),
                verify=verify)


@pytest.fixture
def ws(tmp_path) -> Path:
    (tmp_path / "notes.md").write_text("# Trip\nParis in May\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.txt").write_text("x")
    return tmp_path


def test_answer_contains_is_case_insensitive_one_check_per_string(ws):
    task = task_with(Checks(answer_contains=("PARIS", "may", "june")))
    score = score_task(task, ws, "We go to Paris in May.")
    assert [c.value for c in score.checks] == [1.0, 1.0, 0.0]
    assert score.value == pytest.approx(2 / 3) and score.success is False
    assert score.checks[2].detail == "not in the final answer"


def test_answer_regex(ws):
    task = task_with(Checks(answer_regex=r"\b8421\b"))
    assert score_task(task, ws, "port 8421.").value == 1.0
    assert score_task(task, ws, "port 84210").value == 0.0


def test_file_checks(ws):
    task = task_with(Checks(file_exists=("notes.md", "sub/x.txt", "missing.txt"),
                            file_contains={"notes.md": ["Paris", "paris"], "gone.md": ["x"]},
                            file_absent=("old.txt", "notes.md")))
    score = score_task(task, ws, "")
    values = {c.name: (c.value, c.detail) for c in score.checks}
    assert values["file_exists notes.md"] == (1.0, "")
    assert values["file_exists missing.txt"] == (0.0, "missing")
    assert values["file_contains notes.md: 'Paris'"] == (1.0, "")
    # file_contains is case-sensitive: a file's exact content is what is checked
    assert values["file_contains notes.md: 'paris'"] == (0.0, "not in the file")
    assert values["file_contains gone.md: 'x'"] == (0.0, "file missing")
    assert values["file_absent old.txt"] == (1.0, "")
    assert values["file_absent notes.md"] == (0.0, "still there")
    assert score.value == pytest.approx(4 / 8)


def test_verify_counts_as_one_check_with_its_value(ws):
    seen = []

    def verify(workspace, answer):
        seen.append((workspace, answer))
        return 0.5

    score = score_task(task_with(Checks(answer_contains=("ok",)), verify), ws, "ok")
    assert seen == [(ws, "ok")]
    assert score.value == pytest.approx(0.75) and not score.success
    assert score_task(task_with(verify=lambda w, a: True), ws, "").success is True


@pytest.mark.parametrize("verify, detail", [
    (lambda w, a: 1.5, "returned 1.5, not a number in [0, 1]"),
    (lambda w, a: "yes", "returned 'yes'"),
    (lambda w, a: (w / "nope.txt").read_text(), "raised FileNotFoundError"),
])
def test_a_broken_verify_scores_zero_and_says_why(ws, verify, detail):
    score = score_task(task_with(verify=verify), ws, "")
    assert score.value == 0.0 and detail in score.checks[0].detail


def test_a_task_without_checks_is_unscored(ws):
    score = score_task(task_with(), ws, "anything")
    assert score.value is None and score.success is None


def run(task, mode, score, **kw) -> TaskRun:
    fields = {"repeat": 0, "checks": (), "status": "answered", "answer": "",
              "prompt_tokens": 100, "model_calls": 2, "tool_calls": 1, "wall_s": 1.0}
    fields.update(kw)
    return TaskRun(task, mode, score=score, success=None if score is None else score == 1,
                   **fields)


def test_summary_means_success_and_repeats():
    results = [run("a", "code", 1.0, prompt_tokens=300), run("a", "code", 0.5, repeat=1),
               run("b", "code", 0.0, error="server x failed", status="error"),
               run("c", "code", None, tool_calls=5),
               run("a", "eager", 1.0, prompt_tokens=900, wall_s=3.0)]
    summary = summarize(results)
    code, eager = summary["modes"]["code"], summary["modes"]["eager"]
    assert code["success_rate"] == 0.3333  # unscored c left out; 4 decimals
    assert code["mean_score"] == pytest.approx(0.5)
    assert code["prompt_tokens_mean"] == 150 and code["tool_calls_mean"] == 2
    assert code["tasks"] == {"a": 0.75, "b": 0.0, "c": None}
    assert code["runs"] == 4 and code["errors"] == 1
    assert eager["success_rate"] == 1.0 and eager["wall_s_mean"] == 3.0
    keys = {"success_rate", "mean_score", "prompt_tokens_mean", "model_calls_mean",
            "tool_calls_mean", "wall_s_mean", "tasks"}
    assert keys <= set(code)
    table = summary_table(summary)
    assert table.splitlines()[0].split()[:3] == ["mode", "runs", "success"]
    assert "33%" in table and "100%" in table
    assert "a #2" in task_table(results, "code") and "error" in task_table(results, "code")
    assert "| tiny | eager | 1 | 100% | 1.00 |" in markdown_table(summary, "tiny")


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    summary = summarize([run("a", "code", 1.0), run("a", "eager", 0.0)])
    plot(summary, tmp_path / "chart.png", title="t")
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
