"""Ten tasks of the `dev` split (dev-fs-1..5, dev-git-1..2, dev-mem-1..2, dev-time-1):
each verifier scores a correct outcome 1.0, a plausible slip below 1.0, an untouched
workspace below 1.0."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git_out, says, suite_helpers, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
IDS = {"dev-fs-1", "dev-fs-2", "dev-fs-3", "dev-fs-4", "dev-fs-5", "dev-git-1", "dev-git-2",
       "dev-mem-1", "dev-mem-2", "dev-time-1"}


def _archive(keep_old: bool) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "archive").mkdir()
        old = workspace / "report-2023.txt"
        (workspace / "archive" / "report-2023.txt").write_text(old.read_text())
        if not keep_old:
            old.unlink()
        return ""
    return solve


def _invoice(total: float | None, answer: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "invoice.json"
        if total is not None:
            data = json.loads(path.read_text())
            data["total"] = total
            path.write_text(json.dumps(data, indent=2) + "\n")
        return answer
    return solve


def _gitignore(commit: bool) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / ".gitignore").write_text("*.log\n")
        if commit:
            git_out(workspace, "add", ".gitignore")
            git_out(workspace, "commit", "-q", "-m", "Ignore log files")
        return ""
    return solve


def _sync(rel: str, old: str, new: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / rel
        path.write_text(path.read_text().replace(old, new))
        git_out(workspace, "add", "-A")
        git_out(workspace, "commit", "-q", "-m", "Sync version")
        return "__init__.py had 2.2.9; it now says 2.3.1 like pyproject.toml."
    return solve


def _person(name: str, kind: str, role: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        with (workspace / ".memory.jsonl").open("a") as out:
            out.write(json.dumps({"type": "entity", "name": name, "entityType": kind,
                                  "observations": [role]}) + "\n")
        return ""
    return solve


def _standup(shift_madrid: int) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        convert = suite_helpers().convert
        lines = []
        for name, zone in (("Ana", "America/Sao_Paulo"), ("Jonas", "Europe/Madrid"),
                           ("Mei", "Asia/Singapore"), ("Raj", "Asia/Kolkata")):
            hour, minute = map(int, convert("09:30", "Asia/Singapore", zone).split(":"))
            if name == "Jonas":
                hour = (hour + shift_madrid) % 24
            lines.append(f"{name}: {hour:02d}:{minute:02d}\n")
        (workspace / "standup-local.txt").write_text("".join(lines))
        return ""
    return solve


# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "dev-fs-1": says("2"),
    "dev-fs-2": _archive(keep_old=False),
    "dev-fs-3": writes("oslo-average.txt", "4.2\n"),
    "dev-fs-4": writes("open-by-team.json", '{"web": 3, "infra": 2, "mobile": 2, "billing": 0}'),
    "dev-fs-5": _invoice(65.49, "The total said 62.49; it is now 65.49."),
    "dev-git-1": _gitignore(commit=True),
    "dev-git-2": _sync("src/tally/__init__.py", '"2.2.9"', '"2.3.1"'),
    "dev-mem-1": _person("Keiko Tanaka", "person", "data analyst"),
    "dev-mem-2": writes("pages-read.txt", "994\n"),
    "dev-time-1": _standup(0),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev-fs-1": says("3"),  # the waffles' (or the omelette's) eggs
    "dev-fs-2": _archive(keep_old=True),  # a copy, not a move
    "dev-fs-3": writes("oslo-average.txt", "5.5\n"),  # dropped the -1 row
    "dev-fs-4": writes("open-by-team.json", '{"web": 3, "infra": 2, "mobile": 2}'),  # no 0
    "dev-fs-5": _invoice(None, "The total said 62.49; it should be 65.49."),  # not fixed
    "dev-git-1": _gitignore(commit=False),  # written but not committed
    "dev-git-2": _sync("pyproject.toml", '"2.3.1"', '"2.2.9"'),  # fixed the wrong file
    "dev-mem-1": _person("Keiko", "person", "data analyst"),  # first name only
    "dev-mem-2": writes("pages-read.txt", "1090\n"),  # counted the magazine too
    "dev-time-1": _standup(1),  # Madrid an hour off
}


def test_the_ids_are_the_ten_dev_tasks_and_each_has_a_solution_and_a_slip():
    assert set(SOLUTIONS) == set(MISTAKES) == IDS
    assert set(SUITE.tasks) >= IDS


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_a_dev_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)
