"""The multi-step train tasks (selection `train-multi`, assets/eval/SPLIT.md): each
verifier scores a correct outcome 1.0, a plausible slip below 1.0, an untouched workspace
below 1.0."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git_out, suite_helpers, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)


def _berlin(shift: int) -> Callable[[Path], str]:
    """calls-berlin.txt with each call's Berlin time, ``shift`` hours off."""
    helpers = suite_helpers()

    def solve(workspace: Path) -> str:
        lines = []
        for line in (workspace / "calls.txt").read_text().splitlines():
            hhmm, name = line.split(" ", 1)
            hour, minute = map(int, helpers.convert(hhmm, "America/New_York",
                                                     "Europe/Berlin").split(":"))
            lines.append(f"{(hour + shift) % 24:02d}:{minute:02d} {name}")
        (workspace / "calls-berlin.txt").write_text("\n".join(lines) + "\n")
        return ""
    return solve


def _release_note(hash_of: Callable[[str], str], message: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        head = git_out(workspace, "rev-parse", "HEAD")
        path = workspace / "CHANGELOG.md"
        path.write_text(path.read_text() + f"Released from {hash_of(head)}\n")
        git_out(workspace, "add", "CHANGELOG.md")
        git_out(workspace, "commit", "-q", "-m", message)
        return ""
    return solve


def _incidents(*items: tuple[str, str]) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        with (workspace / ".memory.jsonl").open("a") as out:
            for name, title in items:
                out.write(json.dumps({"type": "entity", "name": name,
                                      "entityType": "incident",
                                      "observations": [title]}) + "\n")
        return ""
    return solve


UNIQUE = "ana@example.org\nben@example.org\nchloe@example.org\ndev@example.org\nemre@example.org\n"

# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "fs-median-latency": writes("median.txt", "125\n"),
    "fs-dedupe-subscribers": writes("subscribers.txt", UNIQUE, "I removed 2 repeated lines."),
    "fs-month-totals": writes("totals.txt", "march: 996.50\napril: 1103.25\n",
                              "April cost more than March."),
    "time-calls-berlin": _berlin(0),
    "fetch-stock-total": lambda w: ("33 pairs can still be sold; Summit Pro GTX and "
                                    "Road Glide 5 have none left."),
    "fetch-incidents-memory": _incidents(("incident 311", "Slow checkout in EU"),
                                         ("incident 312", "Payment webhook retries")),
    "git-release-note": _release_note(lambda h: h[:7], "Note release commit"),
    "mem-projects-count-file": writes("active-projects.txt", "2\n",
                                      "2 are active: Halcyon and Lantern."),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "fs-median-latency": writes("median.txt", "163.33\n"),  # the mean
    "fs-dedupe-subscribers": writes("subscribers.txt", UNIQUE, "Done."),  # not told
    "fs-month-totals": writes("totals.txt", "march: 996.50\napril: 983.25\n",
                              "March cost more."),  # April's repairs line missed
    "time-calls-berlin": _berlin(1),
    "fetch-stock-total": lambda w: "51 pairs in stock; Road Glide 5 has none left.",
    "fetch-incidents-memory": _incidents(("incident 311", "Slow checkout in EU"),
                                         ("incident 309", "Search index lagging")),
    "git-release-note": _release_note(lambda h: "abc1234", "Note release commit"),
    "mem-projects-count-file": writes("active-projects.txt", "3\n",
                                      "3 are active: Halcyon, Lantern and Pia."),
}


def test_the_multi_step_train_tasks_are_train_and_each_has_a_solution_and_a_slip():
    multi = set(SUITE.selections["train-multi"])
    assert multi <= set(SUITE.selections["train"])
    assert set(SOLUTIONS) == set(MISTAKES) == multi
    assert sum(len(SUITE.tasks[t].servers) > 1 for t in multi) >= 4


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_a_multi_step_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)
