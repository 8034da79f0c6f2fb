"""The twelve tasks written in session 24 (selection `train-new` and the two of them the
hash holds out, assets/eval/SPLIT.md): each verifier scores a correct outcome 1.0, a
plausible slip below 1.0, an untouched workspace below 1.0."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git_out, says, suite_helpers, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
HELD = ("git-rename-notes-commit", "mem-team-from-csv")


def _count_lines(number: str, message: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "LINES.txt").write_text(number + "\n")
        git_out(workspace, "add", "LINES.txt")
        git_out(workspace, "commit", "-q", "-m", message)
        return ""
    return solve


def _rename(keep_old: bool) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "NOTES.md").write_text((workspace / "notes.txt").read_text())
        if not keep_old:
            (workspace / "notes.txt").unlink()
        git_out(workspace, "add", "-A")
        git_out(workspace, "commit", "-q", "-m", "Rename notes")
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
        hour, minute = map(int, suite_helpers().convert("17:30", "Asia/Tokyo",
                                                   "Europe/London").split(":"))
        (workspace / "deadline-london.txt").write_text(f"{(hour + shift) % 24:02d}:{minute:02d}\n")
        return ""
    return solve


def _sydney(shift: int) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        helpers = suite_helpers()
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
    "fs-words-longest": writes("longest.txt", "trip.txt\n", "trip.txt has 19 words."),
    "fs-hours-per-person": writes("hours.txt", "Ines: 11.5\nTomas: 10.5\nWen: 10.5\n",
                                  "Ines worked the most (11.5 hours)."),
    "fs-port-typo": writes("config.ini", CONFIG.format(8080), "It was 80800."),
    "fs-earliest-event": says("The first was the database migration on 2024-11-02."),
    "fs-lowercase-emails": writes("contacts.txt", LOWER, "I changed 2 lines."),
    "git-count-lines-commit": _count_lines("6", "Count lines"),
    "git-rename-notes-commit": _rename(keep_old=False),
    "mem-acme-people-file": writes("acme.txt", "Ben Ito\nMila Novak\nZoe Park\n"),
    "mem-team-from-csv": _people(ROLES, "I added 3 people."),
    "mem-most-observations": says("Lena has the most: 4 observations."),
    "time-tokyo-deadline-file": _deadline(0),
    "time-sydney-two-cities": _sydney(0),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "fs-words-longest": writes("longest.txt", "ideas.txt\n", "ideas.txt has 17 words."),
    "fs-hours-per-person": writes("hours.txt", "Ines: 7.5\nTomas: 6\nWen: 8\n",
                                  "Wen worked the most."),  # first rows only
    "fs-port-typo": writes("config.ini", "[server]\nport = 8080\n", "It was 80800."),
    "fs-earliest-event": says("The first was the api deploy on 2025-03-14."),
    "fs-lowercase-emails": writes("contacts.txt", LOWER, "I changed 5 lines."),
    "git-count-lines-commit": _count_lines("7", "Count lines"),  # counted a blank line
    "git-rename-notes-commit": _rename(keep_old=True),  # a copy, not a rename
    "mem-acme-people-file": writes("acme.txt", "Zoe Park\nMila Novak\nBen Ito\n"),
    "mem-team-from-csv": _people({"Nadia Khan": "designer"}, "I added 3 people."),
    "mem-most-observations": says("Quill has the most: 3 observations."),
    "time-tokyo-deadline-file": _deadline(1),
    "time-sydney-two-cities": _sydney(1),
}


def test_the_new_tasks_follow_the_split_and_each_has_a_solution_and_a_slip():
    new = set(SUITE.selections["train-new"])
    assert new <= set(SUITE.selections["train"])
    assert set(HELD) <= set(SUITE.selections["heldout-split"])
    assert set(SOLUTIONS) == set(MISTAKES) == new | set(HELD)
    assert sum(len(SUITE.tasks[t].servers) > 1 for t in SOLUTIONS) >= 5


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_a_new_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)
