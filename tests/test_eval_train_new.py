"""The twelve tasks written in session 24 (selection `train-new` and the two of them the
hash holds out, assets/eval/SPLIT.md): each verifier scores a correct outcome 1.0, a
plausible slip below 1.0, an untouched workspace below 1.0."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

import pytest

from deskmate.finetune.eval.checks import score_task
from deskmate.finetune.eval.suite import load_suite
from deskmate.finetune.eval.workspace import prepare_workspace

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
HELD = ("git-rename-notes-commit", "mem-team-from-csv")


def _helpers():
    spec = spec_from_file_location("suite_helpers", LOCAL / "helpers.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=workspace, capture_output=True, text=True,
                          check=True).stdout.strip()


def _write(rel: str, text: str, answer: str = "") -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / rel).write_text(text)
        return answer
    return solve


def _answer(text: str) -> Callable[[Path], str]:
    return lambda workspace: text


def _count_lines(number: str, message: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "LINES.txt").write_text(number + "\n")
        _git(workspace, "add", "LINES.txt")
        _git(workspace, "commit", "-q", "-m", message)
        return ""
    return solve


def _rename(keep_old: bool) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "NOTES.md").write_text((workspace / "notes.txt").read_text())
        if not keep_old:
            (workspace / "notes.txt").unlink()
        _git(workspace, "add", "-A")
        _git(workspace, "commit", "-q", "-m", "Rename notes")
        return ""
    return solve


def _people(roles: dict[str, str], answer: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        with (workspace / ".memory.jsonl").open("a") as out:
            for name, role in roles.items():
                out.write(json.dumps({"type": "entity", "name": name, "entityType": "person",
                                      "observations": [role]}) + "\n")
        return answer
    return solve


def _deadline(shift: int) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        hour, minute = map(int, _helpers().convert("17:30", "Asia/Tokyo",
                                                   "Europe/London").split(":"))
        (workspace / "deadline-london.txt").write_text(f"{(hour + shift) % 24:02d}:{minute:02d}\n")
        return ""
    return solve


def _sydney(shift: int) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        helpers = _helpers()
        paris = helpers.convert("09:00", "Australia/Sydney", "Europe/Paris")
        york = helpers.convert("09:00", "Australia/Sydney", "America/New_York")
        hour, minute = map(int, york.split(":"))
        return f"Paris {paris}, New York {(hour + shift) % 24:02d}:{minute:02d}"
    return solve


ROLES = {"Nadia Khan": "designer", "Oskar Lind": "backend engineer",
         "Rita Gomes": "product manager"}
LOWER = "maria@example.org\njonas.berg@example.org\nlee@example.org\npriya@example.org\n" \
        "omar@example.org\n"
CONFIG = "[server]\nhost = 0.0.0.0\nport = {}\nworkers = 4\n"

# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "fs-words-longest": _write("longest.txt", "trip.txt\n", "trip.txt has 19 words."),
    "fs-hours-per-person": _write("hours.txt", "Ines: 11.5\nTomas: 10.5\nWen: 10.5\n",
                                  "Ines worked the most (11.5 hours)."),
    "fs-port-typo": _write("config.ini", CONFIG.format(8080), "It was 80800."),
    "fs-earliest-event": _answer("The first was the database migration on 2024-11-02."),
    "fs-lowercase-emails": _write("contacts.txt", LOWER, "I changed 2 lines."),
    "git-count-lines-commit": _count_lines("6", "Count lines"),
    "git-rename-notes-commit": _rename(keep_old=False),
    "mem-acme-people-file": _write("acme.txt", "Ben Ito\nMila Novak\nZoe Park\n"),
    "mem-team-from-csv": _people(ROLES, "I added 3 people."),
    "mem-most-observations": _answer("Lena has the most: 4 observations."),
    "time-tokyo-deadline-file": _deadline(0),
    "time-sydney-two-cities": _sydney(0),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "fs-words-longest": _write("longest.txt", "ideas.txt\n", "ideas.txt has 17 words."),
    "fs-hours-per-person": _write("hours.txt", "Ines: 7.5\nTomas: 6\nWen: 8\n",
                                  "Wen worked the most."),  # first rows only
    "fs-port-typo": _write("config.ini", "[server]\nport = 8080\n", "It was 80800."),
    "fs-earliest-event": _answer("The first was the api deploy on 2025-03-14."),
    "fs-lowercase-emails": _write("contacts.txt", LOWER, "I changed 5 lines."),
    "git-count-lines-commit": _count_lines("7", "Count lines"),  # counted a blank line
    "git-rename-notes-commit": _rename(keep_old=True),  # a copy, not a rename
    "mem-acme-people-file": _write("acme.txt", "Zoe Park\nMila Novak\nBen Ito\n"),
    "mem-team-from-csv": _people({"Nadia Khan": "designer"}, "I added 3 people."),
    "mem-most-observations": _answer("Quill has the most: 3 observations."),
    "time-tokyo-deadline-file": _deadline(1),
    "time-sydney-two-cities": _sydney(1),
}


def test_the_new_tasks_follow_the_split_and_each_has_a_solution_and_a_slip():
    new = set(SUITE.selections["train-new"])
    assert new <= set(SUITE.selections["train"])
    assert set(HELD) <= set(SUITE.selections["heldout-split"])
    assert set(SOLUTIONS) == set(MISTAKES) == new | set(HELD)
    assert sum(len(SUITE.tasks[t].servers) > 1 for t in SOLUTIONS) >= 5


def _score(task_id: str, workspace: Path, answer: str) -> float:
    value = score_task(SUITE.tasks[task_id], workspace, answer).value
    assert value is not None, task_id
    return value


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_a_new_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    task = SUITE.tasks[task_id]
    scores = []
    for name, outcome in (("right", SOLUTIONS), ("wrong", MISTAKES)):
        workspace = prepare_workspace(task, tmp_path / name)
        scores.append(_score(task_id, workspace, outcome[task_id](workspace) or ""))
    right, wrong = scores
    assert right == 1.0, (task_id, scores)
    assert wrong < 1.0, (task_id, scores)
    untouched = prepare_workspace(task, tmp_path / "untouched")
    assert _score(task_id, untouched, "") < 1.0, task_id
