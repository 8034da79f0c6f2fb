"""Ten tasks of the `dev2` split (dev2-fs-1..4, dev2-git-1..2, dev2-mem-1..2, dev2-time-1,
dev2-every-1): each verifier scores a correct outcome 1.0, a plausible slip below 1.0, an
untouched workspace below 1.0."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git_out, says, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
IDS = {"dev2-fs-1", "dev2-fs-2", "dev2-fs-3", "dev2-fs-4", "dev2-git-1", "dev2-git-2",
       "dev2-mem-1", "dev2-mem-2", "dev2-time-1", "dev2-every-1"}

MARKS = "student,final\nAmara,81.0\nBilal,82.5\nChen,79.3\nDorota,75.6\nEmeka,82.2\n"
# the plain mean of the three marks, not the weighted one
MEANS = "student,final\nAmara,85.0\nBilal,79.0\nChen,79.0\nDorota,73.3\nEmeka,86.3\n"


def _hosts(replace: bool) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "hosts"
        entry = "192.168.1.40    printer.local\n"
        path.write_text(entry if replace else path.read_text() + entry)
        return ""
    return solve


def _link(target: str, answer: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "www" / "index.html"
        path.write_text(path.read_text().replace('"contcat.html"', f'"{target}"'))
        return answer
    return solve


def _branch(switch: bool) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        git_out(workspace, "branch", "feature/csv-export")
        if switch:
            git_out(workspace, "checkout", "-q", "feature/csv-export")
        return ""
    return solve


def _track(unignore: str) -> Callable[[Path], str]:
    """Edit .gitignore (`unignore`: what replaces its *.csv line), commit what it lets in."""
    def solve(workspace: Path) -> str:
        path = workspace / ".gitignore"
        path.write_text(path.read_text().replace("*.csv\n", unignore))
        git_out(workspace, "add", "-A")
        git_out(workspace, "commit", "-q", "-m", "Track reference data")
        return "It was ignored by the pattern *.csv."
    return solve


def _memory(workspace: Path, change: Callable[[list[dict]], list[dict]]) -> None:
    """Rewrite the memory file the way the memory server does, after ``change``."""
    path = workspace / ".memory.jsonl"
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(item) + "\n" for item in change(items)))


def _forget_coffee(whole_entity: bool) -> Callable[[Path], str]:
    def change(items: list[dict]) -> list[dict]:
        if whole_entity:  # delete_entities also drops the entity's relations
            return [item for item in items
                    if "Jonah Price" not in (item.get("name"), item.get("from"))]
        for item in items:
            if item.get("name") == "Jonah Price":
                item["observations"] = [note for note in item["observations"]
                                        if not note.startswith("coffee order")]
                item["observations"].append("gave up coffee")
        return items
    return lambda workspace: _memory(workspace, change) or ""


# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "dev2-fs-1": says("Lena Berg's mobile is +49 151 5550 2963."),
    "dev2-fs-2": _hosts(replace=False),
    "dev2-fs-3": writes("final-marks.csv", MARKS,
                        "Bilal has the highest final mark, 82.5, just ahead of Emeka (82.2)."),
    "dev2-fs-4": _link("contact.html", "The Contact link pointed to contcat.html."),
    "dev2-git-1": _branch(switch=True),
    "dev2-git-2": _track("*.csv\n!data/reference.csv\n"),
    "dev2-mem-1": _forget_coffee(whole_entity=False),
    "dev2-mem-2": writes("dana-org.txt", "Eli\nFarah\nGus\nHana\nIvo\n", "5 people."),
    "dev2-time-1": writes("launch-order.txt",
                          "Sydney\nBerlin\nTokyo\nMumbai\nNew York\nSão Paulo\n"),
    "dev2-every-1": says("Los Angeles: humidity 48%, conditions Sunny / Clear (73 degrees)."),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev2-fs-1": says("Lena Berg: +49 30 5550 4412"),  # her work number
    "dev2-fs-2": _hosts(replace=True),  # the old entries overwritten
    "dev2-fs-3": writes("final-marks.csv", MEANS, "Emeka has the highest final mark."),
    "dev2-fs-4": _link("contact.html", "I fixed the broken link."),  # not reported
    "dev2-git-1": _branch(switch=False),  # created, still on main
    "dev2-git-2": _track(""),  # *.csv dropped: the export got committed too
    "dev2-mem-1": _forget_coffee(whole_entity=True),
    "dev2-mem-2": writes("dana-org.txt", "Eli\nFarah\n", "2 people report to Dana."),
    "dev2-time-1": writes("launch-order.txt",  # by local time
                          "New York\nBerlin\nSao Paulo\nSydney\nMumbai\nTokyo\n"),
    "dev2-every-1": says("Humidity 82%, light rain / drizzle."),  # Chicago's
}


def test_the_ids_are_ten_dev2_tasks_and_each_has_a_solution_and_a_slip():
    assert set(SOLUTIONS) == set(MISTAKES) == IDS
    assert set(SUITE.tasks) >= IDS
    assert set(SUITE.selections["dev2"]) >= IDS


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_a_dev2_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)
