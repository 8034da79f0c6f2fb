"""Ten tasks of the `dev` split (dev-fs-6 … dev-fetch-2): each verifier scores a correct
outcome 1.0, a plausible slip below 1.0 and an untouched workspace below 1.0, and accepts
the usual ways of writing a right answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git_out, outcome_scores, suite_helpers, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
IDS = {"dev-fs-6", "dev-fs-7", "dev-fs-8", "dev-git-3", "dev-git-4", "dev-mem-3",
       "dev-time-2", "dev-every-1", "dev-fetch-1", "dev-fetch-2"}


def _rename(stems: tuple[str, ...], suffix: str = ".jpg") -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        for stem in stems:
            (workspace / "photos" / f"{stem}.JPEG").rename(workspace / "photos" / f"{stem}{suffix}")
        return "Renamed."
    return solve


PACKAGE = {"name": "trailmap", "version": "2.3.0", "private": True,
           "scripts": {"build": "vite build", "test": "vitest run"},
           "dependencies": {"leaflet": "^1.9.4"}}


def _package(answer: str, fix: bool = True) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        if fix:
            (workspace / "package.json").write_text(json.dumps(PACKAGE, indent=2) + "\n")
        return answer
    return solve


def _remove_script(commit: bool) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        git_out(workspace, "rm", "-q", "old_deploy.sh")
        if commit:
            git_out(workspace, "commit", "-q", "-m", "Remove old deploy script")
        return ""
    return solve


def _release(branch: bool) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        if branch:
            git_out(workspace, "checkout", "-q", "-b", "release-1.5", "main")
        setup = workspace / "setup.cfg"
        setup.write_text(setup.read_text().replace("version = 1.4.2", "version = 1.5.0"))
        git_out(workspace, "commit", "-q", "-am", "Release 1.5.0")
        return ""
    return solve


def _moves(replace_old: bool, answer: str) -> Callable[[Path], str]:
    moves = {"Ines Duarte": "Berlin", "Tom Okafor": "Berlin", "Jonas Weber": "Munich"}

    def solve(workspace: Path) -> str:
        path = workspace / ".memory.jsonl"
        lines = []
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            city = moves.get(item.get("name"))
            if city:
                notes = item["observations"]
                if replace_old:
                    notes = [n for n in notes if not n.startswith("city:")]
                item["observations"] = [*notes, f"city: {city}"]
            lines.append(json.dumps(item))
        path.write_text("\n".join(lines) + "\n")
        return answer
    return solve


def _landing(shift_minutes: int, fmt: str = "{:02d}:{:02d}") -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        depart = suite_helpers().convert("10:20", "Europe/Lisbon", "America/New_York")
        hour, minute = map(int, depart.split(":"))
        total = (hour * 60 + minute + 8 * 60 + 5 + shift_minutes) % (24 * 60)
        (workspace / "landing.txt").write_text(fmt.format(total // 60, total % 60) + "\n")
        return ""
    return solve


TEAM_HOURS = "team,avg_hours\nbilling,7.0\nplatform,7.7\nsupport,3.5\n"

# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "dev-fs-6": _rename(("beach", "harbour-at-night", "forest")),
    "dev-fs-7": writes("team-hours.csv", TEAM_HOURS),
    "dev-fs-8": _package("It had 2.2.9; it now says 2.3.0."),
    "dev-git-3": _remove_script(commit=True),
    "dev-git-4": _release(branch=True),
    "dev-mem-3": _moves(True, "2 people live in Berlin now: Ines Duarte and Tom Okafor."),
    "dev-time-2": _landing(0),
    "dev-every-1": writes("word.txt", "MARMALADE\n"),
    "dev-fetch-1": writes("support-phone.txt", "+44 113 496 0788\n"),
    "dev-fetch-2": writes("delivered-kg.json", '{"DHL": 19.5, "UPS": 11.5, "FedEx": 20}'),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev-fs-6": _rename(("beach", "forest")),  # one photo left out
    "dev-fs-7": writes("team-hours.csv",  # the last row missed
                       "team,avg_hours\nbilling,7.0\nplatform,7.7\nsupport,3.0\n"),
    "dev-fs-8": _package("package.json says 2.2.9 but should say 2.3.0.", fix=False),
    "dev-git-3": _remove_script(commit=False),  # staged, never committed
    "dev-git-4": _release(branch=False),  # committed on main
    "dev-mem-3": _moves(False, "3 people live in Berlin."),  # old cities kept
    "dev-time-2": _landing(5 * 60),  # the landing time in Lisbon's clock
    "dev-every-1": writes("word.txt", "marmalade\n"),
    "dev-fetch-1": writes("support-phone.txt", "+44 113 496 0201\n"),  # the sales line
    "dev-fetch-2": writes("delivered-kg.json",  # every status counted
                          '{"DHL": 24, "UPS": 21.5, "FedEx": 26}'),
}

# task id -> another right outcome, written the way a user would also accept
VARIANTS: dict[str, Callable[[Path], str]] = {
    "dev-fs-7": writes("team-hours.csv",
                       "team,avg_hours\r\nsupport,3.50\r\nplatform,7.67\r\nbilling,7\r\n"),
    "dev-fs-8": _package("The old version was v2.2.9."),
    "dev-mem-3": _moves(True, "Two people: Ines Duarte and Tom Okafor."),
    "dev-time-2": _landing(0, "{}:{:02d}"),
    "dev-fetch-1": writes("support-phone.txt", "01134960788"),
    "dev-fetch-2": writes("delivered-kg.json", '{"dhl": "19.5", "ups": 11.5, "fedex": 20.0}'),
}


def test_the_ten_tasks_each_have_a_solution_and_a_slip():
    assert set(SOLUTIONS) == set(MISTAKES) == IDS
    assert set(SUITE.tasks) >= IDS
    assert set(VARIANTS) <= IDS
    assert sum(len(SUITE.tasks[t].servers) > 1 for t in IDS) >= 6


@pytest.mark.parametrize("task_id", sorted(IDS))
def test_a_dev_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(VARIANTS))
def test_a_dev_task_accepts_another_way_of_writing_it(task_id, tmp_path):
    right, wrong, _ = outcome_scores(SUITE, task_id, VARIANTS[task_id], MISTAKES[task_id],
                                     tmp_path)
    assert right == 1.0, (task_id, right)
    assert wrong < 1.0, (task_id, wrong)
